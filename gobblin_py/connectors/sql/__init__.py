"""A query-based source: database tables pulled incrementally by a delta column, with Gobblin's watermarks.

``source.class=gobblin_py.connectors.sql.QueryBasedSource`` (or ``SqliteSource`` / ``PostgresqlSource`` /
``MysqlSource``, which only change the default driver). Each table is a dataset (``dataset.urn`` = the table
as listed), split into half-open watermark ranges ``[low, high)`` that never overlap; a run's low watermark is
the previous run's actual high watermark of that dataset, its expected high watermark ``max(delta) + step``
at planning time.

Modules: ``settings`` (every key, declared once), ``connection`` (where to connect; the password stays there),
``positions`` (previous runs' watermarks as positions), ``planner`` (one table's ranges), ``skipped`` (empty
work units for datasets not pulled), ``source`` (the plugin), ``extractor`` (one work unit's rows),
``dialects`` (one module per database), ``arrow_types`` (columns and their Arrow types), ``delta`` and
``watermarks`` (the algebra of delta values and watermark longs).
"""

from gobblin_py.connectors.sql.extractor import QueryBasedExtractor
from gobblin_py.connectors.sql.source import MysqlSource, PostgresqlSource, QueryBasedSource, SqliteSource
from gobblin_py.connectors.sql.watermarks import TimestampWatermark

__all__ = ["MysqlSource", "PostgresqlSource", "QueryBasedExtractor", "QueryBasedSource", "SqliteSource",
           "TimestampWatermark"]
