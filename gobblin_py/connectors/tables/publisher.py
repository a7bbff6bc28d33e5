"""What every table publisher shares: the run's Parquet files moved into the table's data folder, then one commit.

A table publisher is a :class:`~gobblin_py.connectors.files.publisher.BaseDataPublisher` whose files go to a
table's data folder instead of ``data.publisher.final.dir``: the tasks' Parquet files are moved there as today
(each move a logged, idempotent step; no data is rewritten), checked to hold what their writers counted, and then
one step of the format's own (:meth:`TablePublisher.table_step`) adds them to the table in one atomic commit (an
Iceberg snapshot, a Delta version) that carries the run's identity, so that a commit replayed after a crash finds
its own and does not add the files twice. Each fork branch may publish to a table of its own (the format's table
keys take a ``.N`` suffix).

Before anything is logged, the run's schema (the union of its files' Parquet schemas) is compared with the table's
(:mod:`gobblin_py.connectors.tables.evolution`): new columns and allowed widenings are applied by the same commit,
anything else fails the dataset with its watermark kept.
"""

from __future__ import annotations

import json
import posixpath
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pyarrow as pa

from gobblin_py.connectors.files.publisher import BaseDataPublisher, Destination, PublisherSettings
from gobblin_py.connectors.tables.evolution import ADD_COLUMNS, EVOLUTION_MODES
from gobblin_py.io import fs as fsutil
from gobblin_py.io.branch_paths import BranchScope, successful_branches
from gobblin_py.io.rename_step import FsRenameStep
from gobblin_py.sdk.branches import branch_count, branch_key
from gobblin_py.sdk.commit import FILE_RECORDS_KEY, CommitStep
from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.settings import Scope, problem_at, setting
from gobblin_py.sdk.states import TaskState

PARQUET = "PARQUET"


@dataclass(frozen=True)
class TableSettings(PublisherSettings):
    """The keys every table publisher reads (per branch, ``.N`` with several branches, a branch without its own
    taking the unsuffixed value), the file publisher's too: ``data.publisher.final.dir`` is where tables are kept by
    default."""

    evolution: str = setting("table.schema.evolution", default=ADD_COLUMNS, choices=EVOLUTION_MODES,
                             scope=Scope.BRANCH, shared_fallback=True,
                             doc="add_columns: new columns (and, where the format allows, widenings such as int "
                                 "to long) are applied with the data that brings them; fail: any change fails the "
                                 "dataset")
    merge_key: tuple[str, ...] = setting("table.merge.key", default=(), scope=Scope.BRANCH,
                                         shared_fallback=True,
                                         doc="columns whose values identify a row: a run's row replaces the table's "
                                             "row of the same key and the others are inserted (upsert); empty: "
                                             "append")
    merge_order: str | None = setting("table.merge.order.column", scope=Scope.BRANCH, shared_fallback=True,
                                      default_doc="the first of extract.delta.fields (the source's watermark column)",
                                      doc="with table.merge.key: of a run's rows with one key, the one with the latest "
                                          "value of this column wins (the last written on a tie or without one)")

    def merge_order_column(self, delta_fields: str | None, schema: pa.Schema) -> str | None:
        """The column whose latest value wins among a run's rows of one key (``delta_fields``: the source's
        ``extract.delta.fields``); None: the last row written."""
        if self.merge_order:
            return self.merge_order
        delta = [c.strip() for c in (delta_fields or "").split(",") if c.strip()]
        return delta[0] if delta and delta[0] in schema.names else None


@dataclass(frozen=True)
class DataFile:
    """A file of the run, where it is published, what it holds: its records, bytes and Parquet schema."""

    source: str
    path: str
    fs_uri: str | None
    records: int
    size: int
    schema: pa.Schema
    folder: str  # the folders between the table's data folder and the file (partition folders), '' for none


@dataclass
class RunIdentity:
    """Who commits: the job, the run (its job id), the dataset, and the watermarks the run checks in."""

    job: str
    run: str
    dataset: str
    watermark: str

    def to_json(self) -> dict[str, str]:
        return {"job": self.job, "run": self.run, "dataset": self.dataset, "watermark": self.watermark}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunIdentity:
        return cls(str(data["job"]), str(data["run"]), str(data["dataset"]), str(data.get("watermark", "")))

    @classmethod
    def of(cls, tasks: Sequence[TaskState]) -> RunIdentity:
        first = tasks[0]
        marks = [t.actual_high_watermark() for t in tasks]  # each as its JSON
        job = first.get_prop("job.name") or ""
        return cls(job, first.job_id, first.dataset_urn, json.dumps(marks, separators=(",", ":"), sort_keys=True))


@dataclass
class BranchTable:
    """One branch's table as planned: where its files go, and the files that go there."""

    branch: int
    scope: BranchScope
    data_folder: str
    fs_uri: str | None
    key: str  # the key that names the table, for messages
    files: list[DataFile] = field(default_factory=list)
    state: Any = None  # what the format keeps between planning and its step (a loaded table, …)


class TablePublisher(BaseDataPublisher):
    """Publishes a dataset's Parquet files into a table (see the module); subclasses say which table and how."""

    settings_class = TableSettings
    marks_final_folders = False  # a table knows what it holds: its commits carry the runs' identities
    table_format: ClassVar[str] = "table"

    @classmethod
    def validate(cls, props: Mapping[str, str]) -> list[ConfigError]:
        problems = list(super().validate(props))
        branches = branch_count(props)
        for branch in range(branches):
            key = branch_key("writer.output.format", branches, branch)
            value = props.get(key) or props.get("writer.output.format") or PARQUET
            if value.upper() != PARQUET:
                problems.append(problem_at(props, key, f"{value}: {cls.table_format} tables take Parquet files",
                                           f"set {key}=PARQUET"))
        return problems

    def init(self, job_props: dict[str, str]) -> None:
        super().init(job_props)
        self.tables: dict[int, BranchTable] = {}

    # -- what a format says ----------------------------------------------------------------------------------

    @abstractmethod
    def open_table(self, scope: BranchScope, schema: pa.Schema, identity: RunIdentity) -> BranchTable:
        """The branch's table, made when missing (with ``schema``), checked against the run's ``schema``."""

    @abstractmethod
    def table_step(self, table: BranchTable, identity: RunIdentity) -> CommitStep:
        """The step that adds ``table.files`` to the table in one commit carrying ``identity``."""

    @abstractmethod
    def place(self, table: BranchTable) -> str:
        """How the run names the table it published to (``iceberg://gpy/shop.orders``): the summary, history,
        metrics and lineage show it where a file publisher shows its folder."""

    # -- planning ------------------------------------------------------------------------------------------------

    def destination(self, task: TaskState, scope: BranchScope) -> Destination:
        table = self.tables.get(scope.branch)
        if table is None:  # the branch wrote no file this run (no rows): there is nothing to move
            return super().destination(task, scope)
        return Destination(table.data_folder, table.data_folder, table.key, table.fs_uri)

    def plan(self, task_states: Sequence[TaskState], allow_replace: bool = False) -> list[Any]:
        successful = [t for t in task_states if t.working_state.name == "SUCCESSFUL"]
        if not successful:
            return []
        identity = RunIdentity.of(successful)
        written = _written_files(successful)
        self.tables = {}
        for branch, (scope, files) in written.items():
            schema = _union_schema([f.schema for f in files.values()], scope)
            self.tables[branch] = self.open_table(scope, schema, identity)
        moves: list[FsRenameStep] = super().plan(successful, allow_replace)
        sources = {posixpath.normpath(fsutil.open_fs(p)[1]): (b, f) for b, (_, fs) in written.items()
                   for p, f in fs.items()}
        for move in moves:
            found = sources.get(posixpath.normpath(fsutil.open_fs(move.src, move.src_fs_uri)[1]))
            if found is None:
                raise UsageError(f"{move.src}: a file in the task's output that its writer did not count; "
                                 f"{self.table_format} tables take only the Parquet files the writers wrote")
            branch, written_file = found
            table = self.tables[branch]
            folder = posixpath.dirname(posixpath.relpath(fsutil.open_fs(move.dst, move.dst_fs_uri)[1],
                                                         fsutil.open_fs(table.data_folder, table.fs_uri)[1]))
            table.files.append(DataFile(move.src, move.dst, move.dst_fs_uri, written_file.records,
                                        written_file.size, written_file.schema, "" if folder == "." else folder))
        filled = [t for t in self.tables.values() if t.files]
        self.final_dirs = list(dict.fromkeys(self.place(t) for t in filled))
        return [*moves, *(self.table_step(t, identity) for t in filled)]


@dataclass(frozen=True)
class _Written:
    records: int
    size: int
    schema: pa.Schema


def _written_files(tasks: Sequence[TaskState]) -> dict[int, tuple[BranchScope, dict[str, _Written]]]:
    """Per branch, every file its writers counted (``writer.output.file.records``), with its Parquet footer's
    schema and size (one read of each file's end)."""
    import pyarrow.parquet as pq

    found: dict[int, tuple[BranchScope, dict[str, _Written]]] = {}
    for _task, scope in successful_branches(tasks):
        counted = scope.prop(FILE_RECORDS_KEY)
        if not counted:
            continue
        # the writer counted its files by their paths on its output folder's filesystem (S3 keys without s3://)
        fs = fsutil.open_fs(scope.writer_dirs()[1], scope.prop("writer.fs.uri"))[0]
        files = found.setdefault(scope.branch, (scope, {}))[1]
        for path, records in json.loads(counted).items():
            local = fs._strip_protocol(path)
            with fs.open(local, "rb") as stream:
                parquet = pq.ParquetFile(stream)
                schema = parquet.schema_arrow.remove_metadata()
                size = int(fs.size(local))
            files[fs.unstrip_protocol(local) if not fsutil.is_local(fs) else local] = _Written(int(records), size,
                                                                                               schema)
    return found


def _union_schema(schemas: list[pa.Schema], scope: BranchScope) -> pa.Schema:
    """One schema for the run's files of a branch (a source whose schema changed mid-run wrote several)."""
    try:
        return pa.unify_schemas(schemas, promote_options="permissive") if len(schemas) > 1 else schemas[0]
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise UsageError(f"branch {scope.name}: the run's files have schemas that do not unify: {exc}") from None
