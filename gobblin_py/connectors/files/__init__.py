"""Files: the file sources (CSV, JSON, Parquet, Avro; date-partitioned Avro), the file writer builder with its
rolling, partitioning and output paths, and the publishers of files."""
