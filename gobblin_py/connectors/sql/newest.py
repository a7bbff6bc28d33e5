"""What a table's rows say about a ``TIMESTAMP`` startpoint, asked when an operator sets one.

A row's event time is ``source.event.time.column`` where it is set, else the table's (first) delta column when
that holds times, as the extractor reads it. The newest is ``MAX`` of that column: one aggregate, read from the
index's end where the column leads one (a delta column usually does), else one scan of the table. A table whose
rows carry no event time (an id-watermarked table without ``source.event.time.column``) cannot resolve a time to
a row at all: a ``TIMESTAMP`` startpoint for it is refused, naming the column and the fix.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gobblin_py.connectors.sql import delta as deltas
from gobblin_py.connectors.sql import keys as K
from gobblin_py.connectors.sql.arrow_types import parse_arrow_type
from gobblin_py.connectors.sql.connection import ConnectionConfig, text
from gobblin_py.connectors.sql.dialects import dialect_for
from gobblin_py.connectors.sql.dialects.base import Dialect
from gobblin_py.connectors.sql.settings import QueryBasedSettings, entity_key
from gobblin_py.sdk.errors import UsageError

EVENT_KEY = "source.event.time.column"


def no_event_time(table: str, column: str) -> UsageError:
    """The refusal of a TIMESTAMP startpoint for a table whose rows carry no event time."""
    return UsageError(f"table {table}: its rows carry no event time (its delta column {column} holds numbers, and "
                      f"{EVENT_KEY} is not set), so no row can be found for a time: give --value with a {column} "
                      f"to start from, or set {EVENT_KEY} to the column holding the rows' times")


def newest_event_ms(props: Mapping[str, str], urn: str, default_driver: str | None) -> int | None:
    """The newest event time of table ``urn``'s rows (epoch milliseconds); None when the table has no row with one
    or the database cannot be asked. UsageError when its rows carry no event time."""
    try:
        settings = QueryBasedSettings.load(props, entity=urn)
        dialect = dialect_for(ConnectionConfig.from_settings(settings, default_driver))
        conn = dialect.connect(read_only_snapshot=False)
    except Exception:  # noqa: BLE001 - a database that cannot be reached cannot say: the caller falls back
        return None
    try:
        found = _newest(dialect, conn, settings, urn, props)
    except Exception:  # noqa: BLE001 - as above: a table the run would fail on says nothing here
        return None
    finally:
        dialect.close(conn)
    if isinstance(found, UsageError):
        raise found
    return found


def _newest(dialect: Dialect, conn: Any, settings: QueryBasedSettings, urn: str,
            props: Mapping[str, str]) -> int | UsageError | None:
    schema_name, table_name = text(settings.schema), urn
    if "." in urn and not schema_name:
        schema_name, table_name = urn.split(".", 1)
    schema, table = dialect.resolve_table(conn, schema_name, table_name)
    unbounded = parse_arrow_type(settings.unbounded_numeric, entity_key(props, urn, K.UNBOUNDED_NUMERIC))
    names = {spec.name.lower(): spec.name for spec in dialect.describe(conn, schema, table, unbounded)}
    event = text(settings.event_column)
    wanted = event or (settings.delta_fields[0] if settings.delta_fields else None)
    if wanted is None:
        return None  # a whole-table snapshot: no row is found for a time either way
    column = names.get(wanted.lower(), wanted)
    expr, qualified = dialect.quote(column), dialect.qualified(schema, table)
    value = dialect.query(conn, f"SELECT MAX({expr}) FROM {qualified}")[0][0]
    if value is None:
        return None
    kind = deltas.infer_kind(value, column)
    if kind == deltas.NUMBER:  # an event column of numbers holds epoch milliseconds; a delta column of them ids
        return int(value) if event else no_event_time(urn, column)
    if kind == deltas.TEXTZONE:  # text with zones sorts as text, not as time: compare it normalised to UTC
        value = dialect.query(conn, f"SELECT MAX({deltas.sql_expression(kind, expr, dialect.name)}) FROM {qualified}")[0][0]
    return deltas.to_long(value, kind) // 1000
