"""Gobblin's ``BaseDataPublisherWithHiveRegistration`` and ``HiveRegistrationPublisher``: the files published as
:class:`~gobblin_py.connectors.files.publisher.BaseDataPublisher` publishes them, then each final folder
registered in the Hive metastore as an external table (``hive.*`` keys: :mod:`.settings`; names: :mod:`.policy`;
partitions and columns: :mod:`.layout`).

The registration is part of the dataset's commit: its steps (one per table) come after the file moves in the
commit log, so a run killed between the moves and the registration has it done by the next run, before that run
pulls anything; registering again adds nothing twice. Before anything moves, ``plan`` reads the files' columns,
reaches the metastore and compares each existing table with what it would register: a metastore out of reach,
or a table over another folder, with other partition columns or a column of another type, fails the dataset
with nothing published and its watermark kept.

Gobblin runs ``HiveRegistrationPublisher`` as a job-level publisher after tasks published their files
themselves; gpy publishes at the job level only, so it publishes the files too: both names are one publisher.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from gobblin_py.connectors.files.publisher import BaseDataPublisher
from gobblin_py.connectors.hive.client import MetastoreError
from gobblin_py.connectors.hive.layout import layout, location_uri
from gobblin_py.connectors.hive.policy import TableName, static_problems, table_names
from gobblin_py.connectors.hive.registration import TableSpec, conflict
from gobblin_py.connectors.hive.schema import SERDES
from gobblin_py.connectors.hive.settings import HiveRegistrationSettings, props_of
from gobblin_py.connectors.hive.step import HiveRegisterStep, MetastoreAddress
from gobblin_py.io import fs as fsutil
from gobblin_py.io.branch_paths import BranchScope, successful_branches
from gobblin_py.io.rename_step import FsRenameStep
from gobblin_py.sdk.branches import branch_count, branch_key
from gobblin_py.sdk.commit import CommitStep
from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.errors import GobblinPyError
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.retry_budget import run_budget
from gobblin_py.sdk.settings import SettingsError, problem_at
from gobblin_py.sdk.states import TaskState

log = get_logger(__name__)
REGISTERING = ("BaseDataPublisherWithHiveRegistration", "HiveRegistrationPublisher")
FILE_PUBLISHERS = ("BaseDataPublisher", "TimePartitionedDataPublisher", *REGISTERING)


class BaseDataPublisherWithHiveRegistration(BaseDataPublisher):
    """Publishes the files as BaseDataPublisher does, then registers each final folder as a Hive table."""

    settings_class = HiveRegistrationSettings  # type: ignore[assignment]

    @classmethod
    def validate(cls, props: Mapping[str, str]) -> list[ConfigError]:
        """Names that are no Hive names, file formats no Hive table is registered over, and a task-level
        publisher that would not run beside this one."""
        problems = list(super().validate(props))
        try:
            settings = HiveRegistrationSettings.load(props)
        except SettingsError:
            return problems  # the keys' own problems are reported with the settings
        problems += static_problems(settings)
        branches = branch_count(props)
        path_type = (props.get("writer.file.pathType") or props.get("writer.file.path.type") or "DEFAULT").upper()
        appended = (props.get("data.publisher.appendExtractToFinalDir") or "true").strip().lower() != "false"
        if path_type == "DEFAULT" and appended and not any(
                props.get(branch_key("writer.file.path", branches, b)) for b in range(branches)):
            key = "writer.file.pathType" if "writer.file.pathType" in props else "writer.file.path.type"
            problems.append(problem_at(props, key, "DEFAULT publishes each run into a folder of its own "
                                                   "(<table>/<extract id>_append), and a Hive table is over one "
                                                   "folder", "set it to TABLENAME or NAMESPACE_TABLE"))
        for branch in range(branches):
            key = branch_key("writer.output.format", branches, branch)
            fmt = (props.get(key) or props.get("writer.output.format") or "").strip().upper()
            if fmt and fmt not in SERDES:
                problems.append(problem_at(props, key, f"{fmt}: a Hive table is registered over Parquet, ORC or "
                                                       "Avro files", "write PARQUET, ORC or AVRO"))
            elif fmt and settings.row_format and fmt != settings.row_format:
                problems.append(problem_at(props, "hive.row.format", f"{settings.row_format}, but the files are "
                                                                     f"{fmt} ({key})", f"set it to {fmt}, or unset"))
        task_level = (props.get("data.publisher.type") or "").strip()
        job_level = (props.get("data.publisher.job.type") or "").strip()
        if job_level.rsplit(".", 1)[-1] in REGISTERING and task_level \
                and task_level.rsplit(".", 1)[-1] not in FILE_PUBLISHERS:
            problems.append(problem_at(props, "data.publisher.type",
                                       f"{task_level} would not run: the job-level {job_level} publishes the files "
                                       "itself, as BaseDataPublisher does, and registers them", "remove it"))
        return problems

    def plan(  # type: ignore[override]
            self, task_states: Sequence[TaskState], allow_replace: bool = False) -> list[CommitStep]:
        """The file moves, then one registration per table; nothing is moved or registered yet. Refused
        (MetastoreError, GobblinPyError) when the metastore is out of reach or a table cannot take its folder."""
        moves = super().plan(task_states, allow_replace)
        if not moves:
            return list(moves)
        specs, address = self._specs(task_states, moves)
        with address.connect() as metastore:
            for spec in specs:
                existing = metastore.table(spec.name.database, spec.name.table)
                problem = conflict(spec, existing) if existing is not None else None
                if problem:
                    raise MetastoreError(f"cannot register {spec.location} in the Hive metastore {metastore.uri}: "
                                         f"{problem}; nothing of the dataset is published")
        log.info("hive_registration_planned", tables=[str(s.name) for s in specs],
                 partitions=sum(len(s.partitions) for s in specs))
        return [*moves, *(HiveRegisterStep(spec, address) for spec in specs)]

    def _specs(self, task_states: Sequence[TaskState],
               moves: Sequence[FsRenameStep]) -> tuple[list[TableSpec], MetastoreAddress]:
        """A TableSpec for each table each final folder is registered as (from the first task branch
        publishing there)."""
        scopes: dict[str, tuple[TaskState, BranchScope]] = {}
        for task, scope in successful_branches(task_states):
            fs_uri = scope.prop("data.publisher.fs.uri") or scope.prop("writer.fs.uri")
            dst_fs, target = fsutil.open_fs(scope.final_dir(), fs_uri)
            scopes.setdefault(target if fsutil.is_local(dst_fs) else dst_fs.unstrip_protocol(target), (task, scope))
        specs: list[TableSpec] = []
        owners: dict[TableName, str] = {}
        address = None
        for folder in self.final_dirs:
            task, scope = scopes[folder]
            settings = HiveRegistrationSettings.load(task, branches=scope.branches, branch=scope.branch)
            address = address or MetastoreAddress.of(settings, run_budget(task))
            inside = [m for m in moves if m.dst.startswith(folder.rstrip("/") + "/")]
            location = location_uri(folder, settings.fs_uri)
            found = layout(inside, folder, location, settings.partition_key.lower(),
                           scope.prop("writer.partition.prefix") or "", scope.prop("writer.partition.suffix") or "",
                           settings.row_format)
            root = location_uri(settings.db_root_dir, settings.fs_uri) if settings.db_root_dir else None
            for name in table_names(settings, folder):
                if owners.setdefault(name, folder) != folder:
                    raise GobblinPyError(f"{owners[name]} and {folder} would both be registered as table {name}: "
                                         "name them apart (hive.table.regex, or a table name per branch folder)")
                specs.append(TableSpec(name, location, found.row_format, found.columns, found.partition_keys,
                                       found.partitions, props_of(settings.table_props),
                                       props_of(settings.storage_props), props_of(settings.serde_props),
                                       found.avro_schema, f"{root}/{name.database}.db" if root else None))
        assert address is not None  # moves were planned: there is a final folder
        return specs, address


class HiveRegistrationPublisher(BaseDataPublisherWithHiveRegistration):
    """Gobblin's job-level Hive registration publisher: in gpy it publishes the files too (see the module)."""
