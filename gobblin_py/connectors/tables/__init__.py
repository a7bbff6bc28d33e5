"""What the table publishers share: moving a run's Parquet files into a table, and how a table's schema evolves."""
