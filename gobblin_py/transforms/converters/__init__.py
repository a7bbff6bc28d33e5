"""Built-in converters (vectorised, on Arrow batches) and the adapter for per-record converters."""
