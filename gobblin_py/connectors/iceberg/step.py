"""The commit step that adds a run's files to an Iceberg table: one snapshot, found again on replay.

The snapshot's summary carries ``gpy.job``, ``gpy.run`` (the run's job id), ``gpy.dataset``, ``gpy.watermark``
and, for a job of several fork branches, ``gpy.branch`` (branches may publish into one table, a snapshot each).
The same table commit sets the table property ``gpy.commit.<hash of job, dataset and branch>`` to the run's id,
as Delta's ``txn`` action records an app's version: a property outlives the snapshot, which the table's
maintenance may expire (and its files compact into others) before a crashed run's replay looks. A step replayed
after a crash (the table committed, the state not yet saved) finds its run there and adds nothing. The files are
added as they are (a fast append: no data is read or rewritten), with the schema change the run needs (new
columns, allowed widenings) in the same table commit. A commit that another writer's beat (optimistic
concurrency) is tried again on the table as it then is, ``iceberg.commit.retries`` times.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from gobblin_py.connectors.iceberg import merging
from gobblin_py.connectors.iceberg.catalog import open_catalog
from gobblin_py.connectors.iceberg.merge import MergeSpec
from gobblin_py.connectors.iceberg.names import check_names
from gobblin_py.connectors.iceberg.snapshots import expire_beyond
from gobblin_py.connectors.tables.evolution import plan_changes
from gobblin_py.connectors.tables.publisher import RunIdentity
from gobblin_py.sdk.commit import CommitStep, step_class_path
from gobblin_py.sdk.errors import GobblinPyError
from gobblin_py.sdk.logs import get_logger

log = get_logger(__name__)

SUMMARY_PREFIX = "gpy."


def table_place(props: Mapping[str, str], identifier: tuple[str, ...]) -> str:
    """How a run names a table it published to: ``iceberg://<catalog name>/<namespace.table>``."""
    from gobblin_py.connectors.iceberg.settings import catalog_name

    return f"iceberg://{catalog_name(props)}/{'.'.join(identifier)}"


def summary_of(identity: RunIdentity, branch: int | None = None) -> dict[str, str]:
    """The snapshot summary properties that name a run's commit (of fork branch ``branch``, None with one)."""
    found = {SUMMARY_PREFIX + k: v for k, v in identity.to_json().items()}
    if branch is not None:
        found[SUMMARY_PREFIX + "branch"] = str(branch)
    return found


def commit_property(identity: RunIdentity, branch: int | None = None, kind: str = "commit") -> str:
    """The table property whose value is the id of the last run of ``identity``'s job and dataset (and branch) to
    commit to the table (``kind`` rewritten: the files of its run that its merge rewrote)."""
    app = "\0".join([identity.job, identity.dataset, *([] if branch is None else [str(branch)])])
    return f"{SUMMARY_PREFIX}{kind}.{hashlib.sha256(app.encode()).hexdigest()[:20]}"


def committed_snapshot(table: Any, identity: RunIdentity, branch: int | None = None) -> int | None:
    """The id of the snapshot ``identity``'s run committed to ``table`` (for ``branch``), None when it has none."""
    wanted = summary_of(identity, branch)
    for snapshot in reversed(table.snapshots()):
        summary = snapshot.summary
        if summary is not None and all(summary.get(k) == wanted.get(k)
                                       for k in ("gpy.job", "gpy.run", "gpy.dataset", "gpy.branch")):
            return int(snapshot.snapshot_id)
    return None


@dataclass
class IcebergCommitStep(CommitStep):
    """Append ``files`` to the table ``identifier`` in one snapshot carrying ``identity`` (idempotent)."""

    identifier: tuple[str, ...]
    files: list[str]
    identity: RunIdentity
    schema: pa.Schema
    evolution: str
    retries: int
    props: Mapping[str, str] = field(default_factory=dict, repr=False)
    merge: MergeSpec | None = None
    keep: int | None = None  # iceberg.snapshots.keep: the commit expires snapshots beyond the newest this many
    branch: int | None = None  # the fork branch, with several: the run's branches may publish into one table
    kind: str = "iceberg_append"
    snapshot_id: int | None = field(default=None, init=False, compare=False)

    @property
    def name(self) -> str:
        return ".".join(self.identifier)

    def _table(self) -> Any:
        return open_catalog(self.props).load_table(self.identifier)

    def is_completed(self) -> bool:
        from pyiceberg.exceptions import NoSuchTableError

        try:
            table = self._table()
        except NoSuchTableError:
            return False
        return self._found(table)

    def _found(self, table: Any) -> bool:
        """Whether ``table`` holds this run's commit (its property says so; its snapshot, when not yet expired,
        gives the id the run reports)."""
        self.snapshot_id = committed_snapshot(table, self.identity, self.branch)
        if table.properties.get(commit_property(self.identity, self.branch)) != self.identity.run:
            return False
        log.info("iceberg_commit_found", table=self.name, run=self.identity.run, snapshot=self.snapshot_id)
        return True

    def _merge_run(self) -> str:
        """What names the files this commit's merge writes: the run, and the branch (another branch's commit to
        the same table holds files of its own)."""
        return self.identity.run if self.branch is None else f"{self.identity.run}-branch{self.branch}"

    def execute(self, fresh: bool = False) -> None:
        from pyiceberg.exceptions import CommitFailedException

        for attempt in range(self.retries + 1):
            # not the table the plan loaded: a batch plans up to 100 datasets before it commits any, and a table's
            # metadata in memory grows with its snapshots (about 5 KB each)
            table = self._table()
            if self._found(table):  # a replay of a commit made, or a try beaten by a replay elsewhere
                return
            changes = plan_changes(table.schema().as_arrow(), self.schema, self.evolution, f"table {self.name}")
            check_names(table.metadata, self.schema, f"table {self.name}")  # as the plan did: renamed since?
            expired = 0
            rewritten = commit_property(self.identity, self.branch, "rewritten")
            if self.merge is not None:  # the earlier run's commit finished before this one was logged
                merging.remove_files(table, merging.rewritten_earlier(table, rewritten, self.identity.run))
            try:
                with table.transaction() as transaction:
                    transaction.set_properties(**{commit_property(self.identity, self.branch): self.identity.run})
                    if changes:
                        with transaction.update_schema() as update:
                            update.union_by_name(self.schema)
                    if self.merge is None:
                        # the files' names are new to this run (task ids): no scan of the manifests for them
                        transaction.add_files(self.files, snapshot_properties=summary_of(self.identity, self.branch),
                                              check_duplicate_files=False)
                    else:
                        # the run's files the merge rewrote stay where the moves put them (a replay of this commit
                        # checks them there) until the next merge deletes them
                        superseded = merging.merge(transaction, table, self.files, self.merge, self._merge_run(),
                                                   summary_of(self.identity, self.branch), f"table {self.name}")
                        merging.record_rewritten(transaction, table, rewritten, self.identity.run, superseded)
                    if self.keep:
                        expired = expire_beyond(transaction, table, self.keep)
            except CommitFailedException as exc:
                if attempt == self.retries:
                    raise GobblinPyError(f"table {self.name}: another writer's commits kept beating this one "
                                         f"({self.retries + 1} tries, iceberg.commit.retries): {exc}") from None
                log.warning("iceberg_commit_retry", table=self.name, attempt=attempt + 1, error=str(exc))
                continue
            # the commit left the table at its snapshot
            self.snapshot_id = committed_snapshot(table, self.identity, self.branch)
            log.info("iceberg_committed", table=self.name, files=len(self.files), snapshot=self.snapshot_id,
                     schema_changes=changes.describe(), snapshots_expired=expired)
            return

    def committed(self) -> str | None:
        return None if self.snapshot_id is None else f"{table_place(self.props, self.identifier)} snapshot {self.snapshot_id}"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "class": step_class_path(self), "table": list(self.identifier),
                "files": self.files, "identity": self.identity.to_json(),
                "schema": base64.b64encode(self.schema.serialize().to_pybytes()).decode(),
                "evolution": self.evolution, "retries": self.retries, "keep": self.keep, "branch": self.branch,
                "merge": None if self.merge is None else {"keys": list(self.merge.keys), "order": self.merge.order}}

    @classmethod
    def from_json(cls, data: dict[str, Any], props: Mapping[str, str]) -> IcebergCommitStep:
        schema = pa.ipc.read_schema(pa.py_buffer(base64.b64decode(data["schema"])))
        merge = data.get("merge")
        return cls(tuple(data["table"]), list(data["files"]), RunIdentity.from_json(data["identity"]), schema,
                   str(data["evolution"]), int(data["retries"]), props,
                   None if merge is None else MergeSpec(tuple(merge["keys"]), merge.get("order")),
                   None if data.get("keep") is None else int(data["keep"]),
                   None if data.get("branch") is None else int(data["branch"]))

    def describe(self) -> str:
        how = "add" if self.merge is None else f"upsert by {', '.join(self.merge.keys)}"
        return f"{how} {len(self.files)} file(s) to Iceberg table {self.name} in one snapshot"
