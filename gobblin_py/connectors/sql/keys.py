"""Key names of the query-based source (Gobblin's where they exist, ``source.querybased.*`` otherwise).

The keys a job sets are declared, with their types and defaults, in :mod:`gobblin_py.connectors.sql.settings`;
the keys below the last heading are written by the source on each work unit.
"""

# connection
DRIVER = "source.conn.driver"
URL = "source.conn.url"
HOST = "source.conn.host"
PORT = "source.conn.port"
USERNAME = "source.conn.username"
PASSWORD = "source.conn.password"
DATABASE = "source.conn.database"
TIMEOUT = "source.conn.timeout"

# tables
SCHEMA = "source.querybased.schema"
DELTA_FIELDS = "extract.delta.fields"
PK_FIELDS = "extract.primary.key.fields"
TABLE_TYPE = "extract.table.type"
WHITELIST = "source.querybased.whitelist"
BLACKLIST = "source.querybased.blacklist"
ENTITY_PREFIX = "source.querybased.entity."  # source.querybased.entity.<table>.<key> overrides <key> for <table>

# watermarks
WATERMARK_TYPE = "source.querybased.watermark.type"
WATERMARK_CLASS = "source.querybased.watermark.class"
START_VALUE = "source.querybased.start.value"
END_VALUE = "source.querybased.end.value"
WATERMARK_OVERRIDE = "source.querybased.is.watermark.override"
MAX_WATERMARK_LIMIT = "source.querybased.append.max.watermark.limit"
PARTITION_INTERVAL = "source.querybased.partition.interval"
MAX_PARTITIONS = "source.max.number.of.partitions"
SPLIT_ROWS = "source.querybased.split.rows"
SPLIT_MIN_ROWS = "source.querybased.split.min.rows"
PARTITION_COLUMN = "source.querybased.partition.column"
PARTITION_VALUES = "source.querybased.partition.values"
SKIPPED_MODE = "source.querybased.skipped.dataset.mode"
URN_STATE = "urn_state"
EMPTY_WORKUNIT = "empty_workunit"

# extraction
FETCH_SIZE = "source.querybased.fetch.size"
FETCH_METHOD = "source.querybased.fetch.method"
SKIP_COUNT = "source.querybased.skip.count.calc"
UNBOUNDED_NUMERIC = "source.querybased.unbounded.numeric.type"

# set by the source on each work unit (kept in the state store; never a secret)
TABLE = "source.querybased.table"
WATERMARK_RANGE = "source.querybased.watermark.range"
HALF_OPEN = "half-open"
DELTA_KIND = "source.querybased.delta.kind"
UNBOUNDED_LOW = "source.querybased.range.unbounded.low"
PARTITION_VALUES_STATE = "source.querybased.partition.values.json"
ESTIMATED_ROWS = "source.querybased.estimated.rows"
EMPTY = "source.querybased.empty"
RETRY = "source.querybased.retry"
