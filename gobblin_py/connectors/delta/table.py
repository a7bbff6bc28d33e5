"""What both Delta commit steps share: the table, the run's app transaction, the schema change a commit needs.

A run's commit carries Delta's transaction identifier (the ``txn`` action, as Spark Structured Streaming's Delta
sink writes it): the app id names the job, its state store and the dataset, the version grows with each run (the table's version of
that app id plus one, decided when the run plans its commit and logged with it). The step is done once the table's
version of the app id has reached the run's, so a step replayed after a crash (the table committed, the state not
yet saved) finds its own transaction and commits nothing again. The commit's ``commitInfo`` names the job, the
run, the dataset and its new watermark (``gpy.*``), which ``DESCRIBE HISTORY`` and ``DeltaTable.history()`` show.

Delta (delta-rs) writes a schema change in a commit of its own: the columns a run adds are committed just before
the data, by a step that adds only what the table still lacks, so a replay adds nothing twice; a reader in between
sees the new columns, null everywhere. A type may not change: delta-rs has no type
widening, so a column keeps its type and a run's narrower values (an int in a long column) are read as it.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from gobblin_py.connectors.delta.settings import storage_options
from gobblin_py.connectors.delta.types import delta_schema, table_arrow_schema
from gobblin_py.connectors.tables.evolution import SchemaChanges, plan_changes
from gobblin_py.connectors.tables.publisher import RunIdentity
from gobblin_py.sdk.commit import CommitStep
from gobblin_py.sdk.errors import TransientError
from gobblin_py.sdk.logs import get_logger

log = get_logger(__name__)

METADATA_PREFIX = "gpy."
HISTORY_LOOKUP = (10, 100)  # commits searched (newest first) for the version a run's commit made: few, then more
DATA_OPERATIONS = ("WRITE", "CREATE TABLE", "MERGE")
# a checkpoint every 10 versions in the tables gpy makes (Delta Lake's own default; delta-rs's is 100): opening a
# table then reads its last checkpoint and at most 9 commits, however many runs it has had
NEW_TABLE_CONFIGURATION = {"delta.checkpointInterval": "10"}


def app_id(identity: RunIdentity, branches: int, branch: int, store: str) -> str:
    """The Delta app id of a job's dataset (and branch, with several): the ``txn`` action's ``appId``. ``store``
    (the job's state store, :func:`state_store_of`) tells apart two jobs of one name, each with its own state:
    sharing an app id, one's replay would take the other's version for its own commit and add nothing."""
    base = f"gpy:{identity.job}:{identity.dataset}"
    base = f"{base}:{branch}" if branches > 1 else base
    return f"{base}@{hashlib.sha256(store.encode()).hexdigest()[:12]}"


def state_store_of(props: Mapping[str, str]) -> str:
    """Where the job keeps its state (``state.store.dir`` on ``state.store.fs.uri``), as one spelling: a local
    folder as an absolute path (a relative one resolves from the working folder, as the store itself does)."""
    folder = str(props.get("state.store.dir") or "")
    fs_uri = str(props.get("state.store.fs.uri") or "")
    if "://" in folder and not folder.startswith("file://"):
        return folder.rstrip("/")
    if fs_uri and not fs_uri.startswith("file:"):
        return fs_uri.rstrip("/") + "/" + folder.strip("/")
    return os.path.abspath(folder.removeprefix("file://")) if folder else ""


def app_folder(app: str) -> str:
    """A folder name for an app id (its characters are the job's and the dataset's: anything)."""
    return hashlib.sha256(app.encode()).hexdigest()[:20]


def place(uri: str) -> str:
    """How a run names the table it published to."""
    return f"delta:{uri}"


def open_table(uri: str, options: Mapping[str, str]) -> Any:
    """The DeltaTable at ``uri``, None when there is none; TransientError naming it when its store cannot be
    reached (the next run tries again)."""
    from deltalake import DeltaTable
    from deltalake.exceptions import TableNotFoundError

    try:
        return DeltaTable(uri, storage_options=dict(options))
    except TableNotFoundError:
        return None
    except Exception as exc:  # noqa: BLE001 - delta-rs reports a store's failures as OSError or DeltaError
        raise TransientError(f"Delta table {uri}: cannot read it: {type(exc).__name__}: {condensed(exc)}") from None


def condensed(exc: BaseException) -> str:
    """A delta-rs error on one line: its chain of causes (printed as coloured, indented lines) joined."""
    lines = [re.sub(r"\x1b\[[0-9;]*m|↳", "", line).strip() for line in str(exc).splitlines()]
    return " ".join(line for line in lines if line)[:800]


def committed_version(table: Any, identity: RunIdentity) -> int | None:
    """The table version the run ``identity`` committed its data in, searched among the newest commits."""
    wanted = {METADATA_PREFIX + k: v for k, v in identity.to_json().items() if k != "watermark"}
    for limit in HISTORY_LOOKUP:  # each commit read is a request on an object store
        history = table.history(limit)
        for commit in history:
            if commit.get("operation") in DATA_OPERATIONS and all(commit.get(k) == v for k, v in wanted.items()):
                return int(commit["version"])
        if len(history) < limit:
            break
    return None


def schema_to_text(schema: pa.Schema) -> str:
    return base64.b64encode(schema.serialize().to_pybytes()).decode()


def schema_from_text(text: str) -> pa.Schema:
    return pa.ipc.read_schema(pa.py_buffer(base64.b64decode(text)))


@dataclass
class DeltaStep(CommitStep):
    """A run's commit to the Delta table ``uri`` under the app transaction ``(app, version)``."""

    uri: str
    app: str
    version: int
    identity: RunIdentity
    schema: pa.Schema  # the run's files' (union) schema, as written
    partition_by: list[str]
    evolution: str
    retries: int
    props: Mapping[str, str] = field(default_factory=dict, repr=False)
    table_version: int | None = field(default=None, init=False, compare=False)
    planned: Any = field(default=None, init=False, repr=False, compare=False)  # the table as the plan read it

    def table_for(self, attempt: int, fresh: bool) -> tuple[Any, bool]:
        """The table to commit to on try ``attempt``, and whether it may already hold this run's commit: not when
        the commit was just logged by this process (``fresh``), whose plan read the table (no second read)."""
        if fresh and attempt == 0 and self.planned is not None:
            return self.planned, False
        return self.table(), True

    def options(self) -> dict[str, str]:
        return storage_options(self.props, self.uri)

    def table(self) -> Any:
        return open_table(self.uri, self.options())

    def replayed_and_done(self, table: Any, replayed: bool) -> bool:
        """Whether a table read again (``replayed``) already holds this run's commit; if so noted and logged."""
        if not (replayed and self.done(table)):
            return False
        self.found(table)
        log.info("delta_already_committed", table=self.uri, app=self.app, version=self.version,
                 table_version=self.table_version)
        return True

    def done(self, table: Any) -> bool:
        """Whether ``table`` holds this run's commit (its app transaction has reached the run's version)."""
        return table is not None and (table.transaction_version(self.app) or 0) >= self.version

    def is_completed(self) -> bool:
        table = self.table()
        if not self.done(table):
            return False
        self.found(table)
        return True

    def commit_properties(self, transaction: bool = True, rebased: bool = True) -> Any:
        """The commit's ``commitInfo`` naming the run, with the app transaction when ``transaction``. ``rebased``:
        delta-rs may retry it on top of a commit that beat it (``delta.commit.retries``); a commit that makes the
        table or changes its schema may not, for delta-rs would commit it again over the other (a second
        ``CREATE TABLE`` replacing the first's metadata, a column added twice): it fails, and the step reads the
        table again and decides anew."""
        from deltalake.transaction import CommitProperties, Transaction

        metadata = {METADATA_PREFIX + k: v for k, v in self.identity.to_json().items()}
        return CommitProperties(custom_metadata=metadata, max_commit_retries=self.retries if rebased else 0,
                                app_transactions=[Transaction(self.app, self.version)] if transaction else None)

    def schema_change(self) -> Any:
        """The properties of a commit that makes the table or changes its schema, before the run's data."""
        return self.commit_properties(transaction=False, rebased=False)

    def evolve(self, table: Any) -> SchemaChanges:
        """Commit the columns the run adds that ``table`` still lacks; refuse what the table cannot take
        (SchemaConflict, naming the column and both types)."""
        from deltalake import Field

        current = table_arrow_schema(table)
        incoming = delta_schema(self.schema, f"table {self.uri}", current)
        changes = plan_changes(current, incoming, self.evolution, f"Delta table {self.uri}", decimals=False,
                               widening=False)
        tops = list(dict.fromkeys(name.split(".")[0] for name in changes.added))
        if tops:
            fields = [Field.from_arrow(pa.field(name, incoming.field(name).type)) for name in tops]
            table.alter.add_columns(fields, commit_properties=self.schema_change())
        if changes:
            log.info("delta_schema_changed", table=self.uri, changes=changes.describe(), run=self.identity.run)
        return changes

    def found(self, table: Any) -> None:
        """Note the table version of this run's commit (for the run's summary and history); ``table`` is brought
        up to date first (None: read again)."""
        try:
            if table is None:
                table = self.table()
            else:
                table.update_incremental()
            self.table_version = committed_version(table, self.identity)
        except Exception as exc:  # noqa: BLE001 - only what the summary shows depends on it
            log.warning("delta_history_unreadable", table=self.uri, error=str(exc))

    def committed(self) -> str | None:
        if self.table_version is None:
            return None
        return f"{place(self.uri)} version {self.table_version}"

    def base_json(self) -> dict[str, Any]:
        return {"uri": self.uri, "app": self.app, "version": self.version, "identity": self.identity.to_json(),
                "schema": schema_to_text(self.schema), "partition_by": list(self.partition_by),
                "evolution": self.evolution, "retries": self.retries}

    @staticmethod
    def base_args(data: Mapping[str, Any], props: Mapping[str, str]) -> dict[str, Any]:
        """The keyword arguments of a step's common fields, from its JSON (:meth:`base_json`)."""
        return {"uri": str(data["uri"]), "app": str(data["app"]), "version": int(data["version"]),
                "identity": RunIdentity.from_json(data["identity"]), "schema": schema_from_text(str(data["schema"])),
                "partition_by": list(data["partition_by"]), "evolution": str(data["evolution"]),
                "retries": int(data["retries"]), "props": props}
