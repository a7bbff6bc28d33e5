"""A Hive metastore over thrift (Gobblin's ``HiveMetastoreClientPool`` and ``HiveMetaStoreBasedRegister`` calls),
through the thrift client generated from Hive's IDL that the ``pymetastore`` package ships (extra ``hive``).

The metastore is reached at ``hive.metastore.uri`` (a comma list is tried in order, each
``hive.metastore.connect.retries`` times, ``hive.metastore.client.connect.retry.delay`` seconds apart, each wait out
of the run's retry budget ``gpy.retry.budget.seconds``); a
metastore that cannot be reached, or stops answering within ``hive.metastore.client.socket.timeout``, fails
with a :class:`MetastoreError` naming it. Every call is one the metastore makes idempotent or that is asked
"if not exists": a call repeated after a crash changes nothing.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

from gobblin_py.sdk.errors import GobblinPyError, UsageError
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.retry_budget import RetryBudget, RetryBudgetSpent

log = get_logger(__name__)
BATCH = 200  # partitions per call: a large backfill is not one huge request
EXISTS = object()  # what a call "if not exists" returns when it did exist


class MetastoreError(GobblinPyError):
    """The Hive metastore cannot be reached, stopped answering, or refused a call (the message names it)."""


def _modules() -> Any:
    try:
        from pymetastore.hive_metastore import ThriftHiveMetastore, ttypes
        from thrift.protocol import TBinaryProtocol
        from thrift.transport import TSocket, TTransport
    except ImportError:
        raise UsageError("Hive registration needs the pymetastore package: pip install 'gobblin_py[hive]'") from None
    # thrift logs each refused connection on its own; the MetastoreError that follows says it once, with the URI
    logging.getLogger("thrift.transport.TSocket").setLevel(logging.CRITICAL)
    return ThriftHiveMetastore, ttypes, TBinaryProtocol, TSocket, TTransport


def ttypes() -> Any:
    """The metastore's thrift types (Table, Partition, StorageDescriptor, …)."""
    return _modules()[1]


class Metastore:
    """One connection to a Hive metastore; use :func:`connect`."""

    def __init__(self, uri: str, client: Any, transport: Any) -> None:
        self.uri = uri
        self.client = client
        self.transport = transport
        self.types = ttypes()

    def _call(self, what: str, method: str, *args: Any, missing_ok: bool = False, exists_ok: bool = False) -> Any:
        """``client.method(*args)``; None for a missing object (``missing_ok``), EXISTS for one that exists
        (``exists_ok``), MetastoreError naming the metastore and ``what`` otherwise."""
        t = self.types
        try:
            return getattr(self.client, method)(*args)
        except t.NoSuchObjectException:
            if missing_ok:
                return None
            raise MetastoreError(f"the Hive metastore {self.uri}: {what}: it does not exist") from None
        except t.AlreadyExistsException:
            if exists_ok:
                return EXISTS
            raise MetastoreError(f"the Hive metastore {self.uri}: {what}: it already exists") from None
        except (t.MetaException, t.InvalidObjectException, t.InvalidOperationException) as exc:
            raise MetastoreError(f"the Hive metastore {self.uri} refused to {what}: {exc.message}") from None
        except Exception as exc:  # noqa: BLE001 - a transport's error (socket closed, timed out)
            raise MetastoreError(f"the Hive metastore {self.uri} stopped answering ({what}): "
                                 f"{type(exc).__name__}: {exc}") from None

    def ping(self) -> None:
        self._call("list its databases", "get_all_databases")

    def database(self, name: str) -> Any | None:
        return self._call(f"get database {name}", "get_database", name, missing_ok=True)

    def create_database(self, name: str, location: str | None) -> None:
        database = self.types.Database(name=name, description=None, locationUri=location, parameters={})
        self._call(f"create database {name}", "create_database", database, exists_ok=True)

    def table(self, database: str, name: str) -> Any | None:
        return self._call(f"get table {database}.{name}", "get_table", database, name, missing_ok=True)

    def create_table(self, table: Any) -> bool:
        """Create ``table``; False when it exists already (another writer, or an earlier try)."""
        what = f"create table {table.dbName}.{table.tableName}"
        return self._call(what, "create_table", table, exists_ok=True) is not EXISTS

    def alter_table(self, table: Any) -> None:
        self._call(f"alter table {table.dbName}.{table.tableName}", "alter_table", table.dbName, table.tableName,
                   table)

    def databases(self) -> list[str]:
        return list(self._call("list its databases", "get_all_databases") or [])

    def table_names(self, database: str) -> list[str]:
        return list(self._call(f"list the tables of {database}", "get_all_tables", database) or [])

    def all_partitions(self, database: str, table: str) -> list[Any]:
        """Every partition of the table (the metastore's -1: no limit)."""
        return list(self._call(f"list the partitions of {database}.{table}", "get_partitions", database, table,
                               -1) or [])

    def drop_table(self, database: str, name: str) -> None:
        """Drop the table if it exists, keeping its files (what an external table's drop does anyway)."""
        self._call(f"drop table {database}.{name}", "drop_table", database, name, False, missing_ok=True)

    def put_partition(self, partition: Any) -> None:
        """Add the partition, or point the existing one at the new storage (one metastore call each)."""
        what = f"add partition {partition.values} to {partition.dbName}.{partition.tableName}"
        if self._call(what, "add_partition", partition, exists_ok=True) is EXISTS:
            self._call(f"alter partition {partition.values} of {partition.dbName}.{partition.tableName}",
                       "alter_partition", partition.dbName, partition.tableName, partition)

    def partitions(self, database: str, table: str, names: Sequence[str]) -> list[Any]:
        """The partitions of those ``names`` (``key=value/…``, escaped as Hive does) that exist."""
        found: list[Any] = []
        for start in range(0, len(names), BATCH):
            found += self._call(f"get partitions of {database}.{table}", "get_partitions_by_names", database,
                                table, list(names[start:start + BATCH])) or []
        return found

    def add_partitions(self, database: str, table: str, partitions: Sequence[Any]) -> int:
        """Add those of ``partitions`` that do not exist; how many were added."""
        added = 0
        for start in range(0, len(partitions), BATCH):
            request = self.types.AddPartitionsRequest(dbName=database, tblName=table,
                                                      parts=list(partitions[start:start + BATCH]),
                                                      ifNotExists=True, needResult=True)
            result = self._call(f"add partitions to {database}.{table}", "add_partitions_req", request)
            added += len(result.partitions or []) if result is not None else 0
        return added


@contextmanager
def connect(uris: Sequence[str], timeout_s: float, tries: int = 1, delay_s: float = 0.0,
            budget: RetryBudget | None = None) -> Iterator[Metastore]:
    """A connection to the first of ``uris`` that answers; MetastoreError naming them all when none does (or
    when the run's retry ``budget`` is spent before the next try)."""
    service, _, protocol, socket_module, transport_module = _modules()
    problems: list[str] = []
    for attempt in range(tries):
        if attempt:
            try:
                wait = budget.grant(delay_s).seconds if budget is not None else delay_s
            except RetryBudgetSpent as spent:
                raise MetastoreError(f"the Hive metastore {', '.join(uris)} cannot be reached ({attempt} tries), "
                                     f"not tried again: {spent}: {'; '.join(dict.fromkeys(problems))}") from None
            time.sleep(wait)  # not cut short by a stop: a commit under way finishes
        for uri in uris:
            parts = urlsplit(uri.strip())
            sock = socket_module.TSocket(parts.hostname or "localhost", parts.port or 9083)
            sock.setTimeout(int(timeout_s * 1000))
            transport = transport_module.TBufferedTransport(sock)
            try:
                transport.open()
            except Exception as exc:  # noqa: BLE001 - thrift's TTransportException, or an OS error
                problems.append(f"{uri}: {exc}")
                continue
            metastore = Metastore(uri, service.Client(protocol.TBinaryProtocol(transport)), transport)
            try:
                yield metastore
            finally:
                transport.close()
            return
    shown = "; ".join(dict.fromkeys(p if len(uris) > 1 else p.split(": ", 1)[-1] for p in problems))
    raise MetastoreError(f"the Hive metastore {', '.join(uris)} cannot be reached ({tries} tries): {shown}")
