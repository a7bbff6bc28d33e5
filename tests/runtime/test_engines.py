"""The engine interface: every engine implements Engine, and ``make_engine`` picks one from the ENGINES table."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from gobblin_py.runtime import engines
from gobblin_py.runtime.engines import ENGINES, engine_class, make_engine
from gobblin_py.runtime.engines.base import Engine, TaskGroup, task_groups
from gobblin_py.runtime.engines.connect import ConnectEngine
from gobblin_py.runtime.engines.local import LocalEngine, ProcessEngine, ThreadEngine
from gobblin_py.runtime.engines.spark import SparkEngine
from gobblin_py.sdk.states import TaskState, WorkUnit


def test_each_engine_implements_the_interface_under_its_name():
    assert {name: engine_class(name) for name in ENGINES} == {"local": LocalEngine, "spark": SparkEngine,
                                                           "connect": ConnectEngine}
    for name in ENGINES:
        assert issubclass(engine_class(name), Engine) and engine_class(name).name == name


def test_the_cli_offers_every_engine_and_loads_none_to_list_them():
    import subprocess
    import sys

    listed = subprocess.run([sys.executable, "-c", "import sys, gobblin_py.cli; "
                             "print(any(m.startswith('gobblin_py.runtime.engines.') for m in sys.modules))"],
                            capture_output=True, text=True, check=True)
    assert listed.stdout.strip() == "False"
    from click.testing import CliRunner

    from gobblin_py.cli import main

    shown = CliRunner().invoke(main, ["run", "--help"])
    assert "[connect|local|spark]" in shown.output.replace("\n", "")


def test_make_engine_builds_the_named_engine_with_the_master():
    assert type(make_engine("local")) is LocalEngine
    spark = make_engine("spark", "local[2]")
    assert type(spark) is SparkEngine and spark.master == "local[2]"


def test_an_unknown_engine_is_named():
    with pytest.raises(ValueError, match="unknown engine 'yarn': use one of connect, local, spark"):
        make_engine("yarn")


def test_an_engine_added_to_the_table_is_picked(monkeypatch):
    class InlineEngine(Engine):
        """Runs every task in the calling thread."""

        name = "inline"

        def run(self, job_props: Mapping[str, str], job_id: str, groups: list[TaskGroup]) -> list[TaskState]:
            return []

    monkeypatch.setitem(engines.ENGINES, "inline", InlineEngine)
    engine = make_engine("inline", "ignored")
    assert isinstance(engine, InlineEngine) and engine.run({}, "job_1", []) == []


def test_an_engine_must_run_tasks():
    class Incomplete(Engine):
        name = "incomplete"

    with pytest.raises(TypeError):
        Incomplete()  # type: ignore[abstract]


def test_task_groups_number_tasks_in_work_unit_order():
    groups = task_groups([WorkUnit(), WorkUnit()], "job", 7)
    assert [[task_id for task_id, _ in group.tasks] for group in groups] == [["task_job_7_0"], ["task_job_7_1"]]


def test_the_local_engine_runs_threads_unless_the_job_asks_for_worker_processes():
    assert issubclass(ThreadEngine, Engine) and issubclass(ProcessEngine, Engine)
    assert LocalEngine.engine_for({}) is ThreadEngine
    assert LocalEngine.engine_for({"gpy.taskexecutor.processes": "0"}) is ThreadEngine
    assert LocalEngine.engine_for({"gpy.taskexecutor.processes": "2"}) is ProcessEngine


@pytest.mark.parametrize("engine", [ThreadEngine, ProcessEngine])
def test_an_engine_given_no_tasks_returns_no_states(engine):
    assert engine().run({"gpy.taskexecutor.processes": "2"}, "job_1", []) == []
