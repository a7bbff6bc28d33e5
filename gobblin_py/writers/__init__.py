"""Built-in data writers: staged files on any fsspec filesystem, moved to the task output on commit."""
