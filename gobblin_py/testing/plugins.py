"""Plugins the contract suites put into the jobs they run: a converter that fails chosen tasks on demand.

Named in job files by dotted path, like any plugin of yours (``gobblin_py.testing.plugins.FailTasks``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import pyarrow as pa

from gobblin_py.sdk.contracts import Converter
from gobblin_py.sdk.settings import Scope, Settings, setting
from gobblin_py.sdk.states import WorkUnitState

FAIL_TASKS = "gobblin_py.testing.plugins.FailTasks"
FLAG_KEY = "gpy.contract.fail.flag"
TASKS_KEY = "gpy.contract.fail.tasks"
WHEN_KEY = "gpy.contract.fail.when"


@dataclass(frozen=True)
class FailTasksSettings(Settings):
    """The keys of :class:`FailTasks` (``.N`` inside fork branch N)."""

    flag: str = setting(FLAG_KEY, required=True, scope=Scope.FORK,
                        doc="a file: while it exists, the chosen tasks fail")
    tasks: tuple[str, ...] = setting(TASKS_KEY, default=("0",), scope=Scope.FORK,
                                     doc="sequence numbers of the tasks to fail (the last part of their task ids); "
                                         "* for all")
    when: str = setting(WHEN_KEY, default="init", choices=("init", "batch"), scope=Scope.FORK,
                        doc="init: as the task starts, whatever it reads; batch: at its first batch")


class FailTasks(Converter):
    """Passes batches through; fails the chosen tasks while the flag file exists (a failure a test can end)."""

    settings_class = FailTasksSettings

    def init(self, state: WorkUnitState) -> None:
        settings = FailTasksSettings.load(state)
        sequence = str(state.get_prop("task.id") or "").rsplit("_", 1)[-1]
        self.chosen = os.path.exists(settings.flag) and ("*" in settings.tasks or sequence in settings.tasks)
        if self.chosen and settings.when == "init":
            raise RuntimeError(f"task {state.get_prop('task.id')} fails on purpose ({settings.flag} exists)")
        self.when = settings.when

    def convert_schema(self, schema: pa.Schema, state: WorkUnitState) -> pa.Schema:
        return schema

    def convert_batch(self, batch: pa.RecordBatch, state: WorkUnitState) -> pa.RecordBatch:
        if self.chosen:
            raise RuntimeError(f"task {state.get_prop('task.id')} fails on purpose at its first batch")
        return batch


def with_converter_first(props: dict[str, str], key: str, name: str) -> str:
    """The comma list of ``props[key]`` with ``name`` put first."""
    existing = [item.strip() for item in (props.get(key) or "").split(",") if item.strip()]
    return ",".join([name, *existing])
