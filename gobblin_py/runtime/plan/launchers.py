"""The job launchers of Gobblin a job file may name in ``job.class``: gpy launches every job itself."""

from __future__ import annotations


class IngestionJobLauncher:
    """``job.class`` of an ordinary ingestion job: Gobblin's ``AzkabanJobLauncher``, the class Azkaban runs to
    launch a job of source, converters, writers and publisher. gpy runs such a job as it runs any (``gpy run``,
    ``gpy schedule``, Airflow), so the name is accepted and changes nothing."""
