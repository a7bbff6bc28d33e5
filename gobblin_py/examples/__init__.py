"""Example plugins used by the jobs under jobs/: small, complete, and meant to be copied."""
