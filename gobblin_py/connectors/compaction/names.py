"""The Gobblin classes a compaction job names in its keys and gpy stands in for: the legacy dataset finders
(``compaction.datasets.finder``) and the per-format job runners (``compaction.job.runner.class``)."""

from __future__ import annotations


class TimeBasedSubDirDatasetsFinder:
    """Gobblin's ``TimeBasedSubDirDatasetsFinder``: one dataset per time folder of each dataset name (see
    :class:`~gobblin_py.connectors.compaction.finder.DatasetFinder`)."""


class SimpleDatasetsFinder:
    """Gobblin's ``SimpleDatasetsFinder``: ``compaction.input.dir`` is the one dataset (see
    :class:`~gobblin_py.connectors.compaction.finder.DatasetFinder`)."""


class FormatGenericRunner:
    """What Gobblin's per-format compaction runners and configurators (Avro's ``MRCompactorAvroKeyDedupJobRunner``
    and ``CompactionAvroJobConfigurator$Factory``, ``CompactionOrcJobConfigurator$Factory``) stand for in gpy: one
    runner, reading and writing each dataset in its own format (Avro, Parquet or ORC)."""
