"""Gobblin's Hive copy: ``HiveDatasetFinder`` as the copy job's ``gobblin.dataset.profile.class``.

Each selected table (``hive.dataset.*``, :mod:`.datasets`) is a dataset named ``<db>.<table>``; its files — every
file below the table's folder, its partitions' included — are copied by the copy job as any dataset's are, to
``hive.dataset.copy.target.table.root`` (``$DB`` and ``$TABLE`` stand for the source's names; a root without
``$TABLE`` gets ``/<table>`` appended: Gobblin's ``HiveTargetPathHelper``) at their paths below the table's folder.
That root must lie inside ``data.publisher.final.dir``, where the copy job publishes. Then, as a step of the same
commit, the table is registered at the destination (``hive.dataset.copy.target.metastore.uri``, database
``hive.dataset.copy.target.database``) over the copied folder, with its columns, SerDe and every partition. A
partition whose folder is not below its table's cannot be relocated and fails the plan, naming it (Gobblin's rule).
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gobblin_py.connectors.copy.finder import CopyDataset, Listed, list_files
from gobblin_py.connectors.copy.source import REGISTRATION_KEY
from gobblin_py.connectors.files.publisher import PublisherSettings
from gobblin_py.connectors.hive.client import connect
from gobblin_py.connectors.hive.datasets import HiveDatasetSettings, find_tables, qualified, storage_path
from gobblin_py.connectors.hive.policy import TableName
from gobblin_py.connectors.hive.registration import PartitionSpec, TableSpec
from gobblin_py.connectors.hive.schema import AVRO_LITERAL, SERDES
from gobblin_py.connectors.hive.step import HiveRegisterStep, MetastoreAddress
from gobblin_py.io import fs as fsutil
from gobblin_py.io.contained_paths import contained_join, is_within
from gobblin_py.sdk.commit import CommitStep
from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.errors import GobblinPyError
from gobblin_py.sdk.retry_budget import run_budget
from gobblin_py.sdk.settings import same_as, setting
from gobblin_py.sdk.states import TaskState, WorkingState

_FORMATS = {serde.serde: name for name, serde in SERDES.items()}
_TRANSIENT = ("transient_lastDdlTime", "numFiles", "totalSize", "numRows", "rawDataSize", "COLUMN_STATS_ACCURATE",
              "EXTERNAL")


@dataclass(frozen=True)
class HiveCopySettings(HiveDatasetSettings):
    """The keys of Gobblin's HiveDatasetFinder in a copy job: the tables, where they go, where they register."""

    target_root: str = setting("hive.dataset.copy.target.table.root", required=True, example="/data/copy/$DB",
                               doc="the copied table's folder ($DB, $TABLE: the source's names; without $TABLE, "
                                   "/<table> is appended); inside data.publisher.final.dir")
    target_metastore: tuple[str, ...] = setting("hive.dataset.copy.target.metastore.uri", default=(),
                                                default_doc="hive.dataset.hive.metastore.uri",
                                                doc="the metastore the copied table is registered in")
    target_database: str | None = setting("hive.dataset.copy.target.database", default_doc="the source's",
                                          doc="the database the copied table is registered in ($DB: the source's)")
    final_dir: str = same_as(PublisherSettings, "final_dir")

    def check(self) -> list[ConfigError]:
        problems = super().check()
        example = target_root(self.target_root, "db", "table")
        if not is_within(self.final_dir.rstrip("/") or "/", example):
            problems.append(ConfigError(f"{self.target_root} is not inside data.publisher.final.dir "
                                        f"{self.final_dir}, where the copy job publishes",
                                        key="hive.dataset.copy.target.table.root",
                                        hint="a folder below data.publisher.final.dir, e.g. "
                                             f"{self.final_dir.rstrip('/')}/$DB"))
        return problems


def target_root(pattern: str, database: str, table: str) -> str:
    pattern = pattern.replace("$DB", database)
    return pattern.replace("$TABLE", table) if "$TABLE" in pattern else posixpath.join(pattern, table)


@dataclass(frozen=True)
class HiveCopyDataset(CopyDataset):
    """A Hive table to copy: its folder (``root``), its name, and its folder below the publish root."""

    name: str = ""
    relative: str = ""
    table: str = ""  # the destination table (TableSpec JSON)

    @property
    def urn(self) -> str:
        return self.name

    @property
    def target(self) -> str:
        return self.relative

    def destination(self, path: str) -> str:
        return contained_join(self.relative, posixpath.relpath(path, self.root), what=f"the destination of {path}")


class HiveDatasetFinder:
    """Gobblin's HiveDatasetFinder for the copy job: each selected Hive table is a dataset, registered at the
    destination after its files are published."""

    settings_class = HiveCopySettings

    def init(self, props: Any) -> None:
        self.settings = HiveCopySettings.load(props)
        self.fs, self.publish_root = fsutil.open_fs(self.settings.final_dir)

    def find_datasets(self) -> list[HiveCopyDataset]:
        s = self.settings
        found = []
        with connect(s.metastore_uris, s.timeout_s) as hms:
            for table in find_tables(hms, s):
                root = storage_path(table.sd.location).rstrip("/")
                target = target_root(s.target_root, table.dbName, table.tableName).rstrip("/")
                if not is_within(self.publish_root, target):
                    raise GobblinPyError(f"table {table.dbName}.{table.tableName}: its copy's folder {target} is not "
                                         f"inside data.publisher.final.dir {self.publish_root}, where the copy job "
                                         "publishes: set hive.dataset.copy.target.table.root below it")
                partitions = hms.all_partitions(table.dbName, table.tableName) if table.partitionKeys else []
                spec = self._spec(table, partitions, root, target)
                found.append(HiveCopyDataset(root, root, f"{table.dbName}.{table.tableName}",
                                             posixpath.relpath(target, self.publish_root),
                                             json.dumps(spec.to_json(), sort_keys=True)))
        return found

    def _spec(self, table: Any, partitions: list[Any], root: str, target: str) -> TableSpec:
        name = f"{table.dbName}.{table.tableName}"
        serde = table.sd.serdeInfo
        row_format = _FORMATS.get(serde.serializationLib if serde else "")
        if row_format is None:
            raise GobblinPyError(f"table {name}: its SerDe {serde.serializationLib if serde else None} is not one "
                                 f"the copy registers ({', '.join(sorted(SERDES))} tables are)")
        placed = []
        for p in partitions:
            folder = storage_path(p.sd.location).rstrip("/")
            if not is_within(root, folder):
                raise GobblinPyError(f"table {name}: partition {p.values} is at {folder}, outside the table's folder "
                                     f"{root}: it cannot be relocated below {target}")
            placed.append(PartitionSpec(tuple(p.values), qualified(posixpath.join(target, posixpath.relpath(
                folder, root)))))
        database = (self.settings.target_database or table.dbName).replace("$DB", table.dbName)
        params = dict(serde.parameters or {})
        return TableSpec(TableName(database, table.tableName), qualified(target), row_format,
                         tuple((c.name, c.type) for c in table.sd.cols), tuple(k.name for k in table.partitionKeys),
                         tuple(placed), {k: v for k, v in (table.parameters or {}).items() if k not in _TRANSIENT},
                         serde_props={k: v for k, v in params.items() if k != AVRO_LITERAL},
                         avro_schema=params.get(AVRO_LITERAL))

    def list_files(self, dataset: CopyDataset) -> list[Listed]:
        return list_files(self.fs, dataset.root)

    def url(self, path: str) -> str:
        return path if fsutil.is_local(self.fs) else self.fs.unstrip_protocol(path)

    def registration(self, dataset: CopyDataset) -> str | None:
        """What the dataset's units carry for :meth:`publish_steps` (the destination table)."""
        return dataset.table if isinstance(dataset, HiveCopyDataset) else None

    @staticmethod
    def publish_steps(props: Mapping[str, str], task_states: Sequence[TaskState]) -> list[CommitStep]:
        """The registration of the copied table at the destination, after its files' moves."""
        settings = HiveCopySettings.load(props)
        address = MetastoreAddress(settings.target_metastore or settings.metastore_uris, settings.timeout_s,
                                   budget=run_budget(props))
        specs = {t.get_prop(REGISTRATION_KEY) for t in task_states
                 if t.working_state is WorkingState.SUCCESSFUL and t.get_prop(REGISTRATION_KEY)}
        return [HiveRegisterStep(TableSpec.from_json(json.loads(s)), address) for s in sorted(specs)]
