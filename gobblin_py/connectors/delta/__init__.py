"""Delta Lake tables as a publisher: a run's Parquet files added to a table in one Delta version (delta-rs)."""
