"""A query-based source: database tables pulled incrementally by a delta column, with Gobblin's watermarks.

``source.class=gobblin_py.sources.sql.QueryBasedSource`` (or ``SqliteSource`` / ``PostgresqlSource`` /
``MysqlSource``, which only change the default driver). Each table is a dataset (``dataset.urn`` = the table
as listed), split into half-open watermark ranges ``[low, high)`` that never overlap; a run's low watermark is
the previous run's actual high watermark of that dataset, its expected high watermark ``max(delta) + step``
at planning time. See :mod:`gobblin_py.sources.sql.watermarks` for how each watermark type maps to longs.

Connection keys (job-level only; the password is never copied into work units, state, logs or errors):

| key | default | meaning |
|---|---|---|
| ``source.conn.driver`` | ``sqlite`` (or the class's) | ``sqlite``, ``postgresql``, ``mysql`` (JDBC driver class names accepted) |
| ``source.conn.database`` | — | SQLite: the database file; PostgreSQL/MySQL: the database name |
| ``source.conn.url`` | — | instead of the keys: ``jdbc:sqlite:/path``, ``jdbc:postgresql://host:port/db``, ``postgresql://…`` |
| ``source.conn.host`` / ``.port`` | libpq defaults / 5432 / 3306 | server address |
| ``source.conn.username`` / ``.password`` | — | credentials (libpq's ``PGPASSWORD``/``.pgpass`` also work) |
| ``source.conn.timeout`` | ``30000`` | connect timeout, milliseconds (as Gobblin) |

Table keys (each can be set for one table as ``source.querybased.entity.<table>.<key>``):

| key | default | meaning |
|---|---|---|
| ``extract.table.name`` / ``source.entities`` | required | the table, or a comma list of tables (``schema.table`` allowed) |
| ``source.querybased.schema`` | ``main`` / ``current_schema()`` / the database | schema of the tables |
| ``extract.delta.fields`` | — | the watermark column; several = ``COALESCE(a, b, …)`` |
| ``extract.primary.key.fields`` | — | tie-break order within a range |
| ``extract.table.type`` | ``append_only`` with a delta column, else ``snapshot_only`` | ``append_only``: rows with delta in ``[low, high)``; ``snapshot_only``: the whole table each run; ``snapshot_append``: whole table first, then appends |
| ``source.querybased.watermark.type`` | from the column | ``simple``, ``timestamp``, ``hour``, ``date`` |
| ``source.querybased.watermark.class`` | ``LongWatermark`` / ``TimestampWatermark`` | a custom ``Watermark`` class by dotted path (``from_long``/``to_long``) |
| ``source.querybased.start.value`` | the column's minimum | first low watermark (``yyyyMMddHHmmss``, ISO, ``CURRENTDAY-n``, a number) |
| ``source.querybased.end.value`` | — | inclusive cap on the high watermark |
| ``source.querybased.is.watermark.override`` | ``false`` | ignore the previous state: start at ``start.value`` |
| ``source.querybased.append.max.watermark.limit`` | — | cap at ``CURRENTDATE-n`` / ``CURRENTHOUR-n`` / ``CURRENTMINUTE-n`` / ``CURRENTSECOND`` (``source.timezone``, default UTC) |
| ``source.querybased.partition.interval`` | ``0`` (one range) | range width: hours for time types, units for simple |
| ``source.max.number.of.partitions`` | ``20`` | at most this many ranges (or partition groups) per table and run |
| ``source.querybased.partition.column`` / ``.values`` | — | a column whose values each keep their own watermark (``MultiLongWatermark``) |
| ``source.querybased.whitelist`` / ``.blacklist`` | — | comma lists of regular expressions over table names (also ``entity.*``) |
| ``source.querybased.skipped.dataset.mode`` | ``urn_state`` | a table not pulled in a run keeps its watermark through its URN's state (``urn_state``) or through an empty work unit (``empty_workunit``) |
| ``source.querybased.fetch.size`` | ``10000`` | rows per Arrow batch |
| ``source.querybased.fetch.method`` | ``copy`` | PostgreSQL: ``copy`` (COPY … TO STDOUT, CSV) or ``cursor`` (server-side cursor) |
| ``source.querybased.skip.count.calc`` | ``false`` | skip the ``COUNT(*)`` (planning estimates and the expected record count) |
| ``source.querybased.unbounded.numeric.type`` | ``decimal128(38,9)`` | Arrow type of ``numeric`` without precision (or ``string``, ``float64``) |
| ``mr.job.max.mappers`` | ``100`` | more work units than this are packed into that many MultiWorkUnits by estimated rows |
"""

from gobblin_py.sources.sql.extractor import QueryBasedExtractor
from gobblin_py.sources.sql.source import MysqlSource, PostgresqlSource, QueryBasedSource, SqliteSource
from gobblin_py.sources.sql.watermarks import TimestampWatermark

__all__ = ["MysqlSource", "PostgresqlSource", "QueryBasedExtractor", "QueryBasedSource", "SqliteSource",
           "TimestampWatermark"]
