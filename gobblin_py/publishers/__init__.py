"""Built-in data publishers: move committed task output to its final place."""
