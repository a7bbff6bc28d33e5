"""Built-in sources: each plans work units on the driver and extracts batches on executors."""
