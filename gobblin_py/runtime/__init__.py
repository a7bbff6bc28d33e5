"""The job runtime: driver lifecycle, task execution on Spark or a local thread pool, commit and publish."""
