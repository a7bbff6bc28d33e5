"""Gobblin's Avro-to-ORC conversion, its publishing half: ``HiveConvertPublisher``.

For each converted unit, one step of the table's commit (Gobblin's publish queries, made idempotent): the staging
folder replaces the final one (``<dataPath>/final[/<partition name>]``), the ORC table (external) and the
partition are registered over it when missing, and the staging table is dropped. A run killed part-way is finished
by the next one from the commit log; the watermarks are committed with the step, so a partition is never marked
converted before its data is in place.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gobblin_py.connectors.hive.client import connect
from gobblin_py.connectors.hive.conversion_writer import PUBLISH_KEY
from gobblin_py.connectors.hive.datasets import HiveDatasetSettings, qualified, storage_path
from gobblin_py.connectors.hive.policy import TableName
from gobblin_py.connectors.hive.registration import PartitionSpec, TableSpec, register, registered
from gobblin_py.io import fs as fsutil
from gobblin_py.sdk.commit import CommitStep, step_class_path
from gobblin_py.sdk.contracts import DataPublisher
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.settings import Settings, same_as
from gobblin_py.sdk.states import TaskState, WorkingState

log = get_logger(__name__)


def _fs(location: str) -> tuple[Any, str]:
    return fsutil.open_fs(storage_path(location))


@dataclass
class HiveConvertPublishStep(CommitStep):
    """Swap one converted unit's staging folder into the ORC table and drop its staging table (idempotent)."""

    unit: dict[str, Any]
    metastore: tuple[str, ...]
    timeout_s: float = 60.0
    kind: str = "hive_convert_publish"
    done: bool = field(default=False, init=False, compare=False)

    def spec(self) -> TableSpec:
        u = self.unit
        partitions = (PartitionSpec(tuple(u["values"]), qualified(u["final_folder"])),) if u["values"] else ()
        return TableSpec(TableName(u["database"], u["table"]), qualified(u["table_folder"]), "ORC",
                         tuple((n, t) for n, t in u["columns"]), tuple(k.lower() for k in u["partition_keys"]),
                         partitions)

    def is_completed(self) -> bool:
        fs, staging = _fs(self.unit["staging_root"])
        with connect(self.metastore, self.timeout_s) as hms:
            self.done = (not fs.exists(staging) and hms.table(self.unit["database"], self.unit["staging_table"]) is None
                         and registered(hms, self.spec()))
        return self.done

    def execute(self, fresh: bool = False) -> None:
        u = self.unit
        fs, staging = _fs(u["staging_folder"])
        _, final = _fs(u["final_folder"])
        if fs.exists(staging):  # not moved yet: the new data replaces the old (Gobblin's publishDirectories)
            if fs.exists(final):
                fs.rm(final, recursive=True)
            fs.makedirs(posixpath.dirname(final), exist_ok=True)
            fs.mv(staging, final, recursive=True)
        with connect(self.metastore, self.timeout_s) as hms:
            register(hms, self.spec())
            hms.drop_table(u["database"], u["staging_table"])
        _, root = _fs(u["staging_root"])
        if fs.exists(root):
            fs.rm(root, recursive=True)
        self.done = True
        log.info("hive_orc_published", table=f"{u['database']}.{u['table']}", source=u["source"],
                 partition=u["values"] or None, folder=u["final_folder"])

    def committed(self) -> str | None:
        u = self.unit
        where = f" partition {u['values']}" if u["values"] else ""
        return f"ORC table {u['database']}.{u['table']}{where} published" if self.done else None

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "class": step_class_path(self), "unit": self.unit,
                "metastore": list(self.metastore), "timeout_s": self.timeout_s}

    @classmethod
    def from_json(cls, data: dict[str, Any], props: Mapping[str, str]) -> HiveConvertPublishStep:
        return cls(dict(data["unit"]), tuple(map(str, data["metastore"])), float(data.get("timeout_s", 60.0)))

    def describe(self) -> str:
        u = self.unit
        return f"publish {u['staging_folder']} as {u['final_folder']} of ORC table {u['database']}.{u['table']}"


@dataclass(frozen=True)
class HiveConvertPublisherSettings(Settings):
    """The keys of HiveConvertPublisher: the metastore the ORC tables are registered in."""

    metastore_uris: tuple[str, ...] = same_as(HiveDatasetSettings, "metastore_uris")
    timeout_s: int = same_as(HiveDatasetSettings, "timeout_s")


class HiveConvertPublisher(DataPublisher):
    """Gobblin's HiveConvertPublisher: each converted unit's staging data swapped into its ORC table."""

    settings_class = HiveConvertPublisherSettings

    def init(self, job_props: dict[str, str]) -> None:
        self.job_props = job_props
        self.final_dirs: list[str] = []

    def plan(self, task_states: Sequence[TaskState]) -> list[CommitStep]:
        settings = HiveConvertPublisherSettings.load(self.job_props)
        steps: list[CommitStep] = []
        for task in task_states:
            if task.working_state is not WorkingState.SUCCESSFUL:
                continue
            for unit in json.loads(task.get_prop(PUBLISH_KEY) or "[]"):
                steps.append(HiveConvertPublishStep(unit, settings.metastore_uris, settings.timeout_s))
        self.final_dirs = sorted({str(step.unit["table_folder"]) for step in steps
                                  if isinstance(step, HiveConvertPublishStep)})
        return steps

    def publish(self, task_states: Sequence[TaskState]) -> list[str]:
        for step in self.plan(task_states):
            step.execute(fresh=True)
        return list(self.final_dirs)
