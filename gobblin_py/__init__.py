"""gobblin_py: Gobblin-style batch ingestion jobs on Apache Spark."""

__version__ = "0.1.0"
