"""Gobblin's retention job (``job.class=DatasetCleanerJob``): old state-store entries and old published dataset
versions deleted by a time-based selection policy."""
