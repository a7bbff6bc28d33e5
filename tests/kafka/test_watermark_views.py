"""Kafka watermarks as people read them: each partition's low → high under its partition number, partitions in
numeric order (2, 9, 10 — never 10 before 9), in the run summary, its table and ``gpy state show``."""

from __future__ import annotations

import io
import json

from rich.console import Console

from gobblin_py.cli.summary_table import print_summary_table
from gobblin_py.connectors.kafka.keys import partitions_of
from gobblin_py.connectors.kafka.packer import squeeze
from gobblin_py.runtime.commit.dataset_result import DatasetResult
from gobblin_py.runtime.commit.job_result import JobResult
from gobblin_py.runtime.commit.summary import render
from gobblin_py.sdk.run_states import DatasetState
from gobblin_py.sdk.states import Extract, RunningState, TaskState, WorkingState, WorkUnit
from gobblin_py.sdk.watermarks import MultiLongWatermark, WatermarkInterval
from gobblin_py.store import FsDatasetStateStore
from tests.kafka.helpers import KafkaJob
from tests.support.cli import run_gpy

JOB, JOB_ID, TOPIC = "Clicks", "job_Clicks_1763600000000", "clicks"
# partition: (low, expected high, actual high); sorted as text the lows and highs would not line up
ONE_EACH = {2: (7262, 10893, 10893), 10: (5946, 10188, 10188), 9: (6792, 8919, 8919)}
SQUEEZED = {11: (400, 400, 400), 3: (120, 120, 120)}  # partitions with nothing new, in one work unit


def _unit(partition: int, low: int, high: int) -> WorkUnit:
    unit = WorkUnit.create(Extract.create("append_only", "kafka", TOPIC, now_ms=1763600000000),
                           WatermarkInterval.of(MultiLongWatermark([low]), MultiLongWatermark([high])))
    unit.set_prop("topic.name", TOPIC)
    unit.set_prop("partition.id", partition)
    unit.set_prop("dataset.urn", TOPIC)
    return unit


def _tasks() -> list[TaskState]:
    units = [_unit(p, low, high) for p, (low, high, _) in ONE_EACH.items()]
    units.append(squeeze([_unit(p, low, high) for p, (low, high, _) in SQUEEZED.items()]))
    tasks = []
    for seq, unit in enumerate(units):
        task = TaskState(JOB_ID, f"task_{JOB}_1763600000000_{seq}", unit, start_time=1763600000003,
                         end_time=1763600001400, task_duration=1397)
        task.working_state = WorkingState.COMMITTED
        parts = partitions_of(unit)
        task.set_actual_high_watermark(MultiLongWatermark([{**ONE_EACH, **SQUEEZED}[p][2] for p in parts]))
        tasks.append(task)
    return tasks


def _result(tasks: list[TaskState]) -> JobResult:
    """What the commit records of the tasks (datasets.commit_dataset's fields)."""
    dataset = DatasetResult(TOPIC, RunningState.COMMITTED, len(tasks), 0, 30_000, 30_000,
                            low_watermarks=[t.workunit.low_watermark() for t in tasks],
                            high_watermarks=[t.actual_high_watermark() for t in tasks],
                            partitions=[partitions_of(t.workunit) for t in tasks])
    return JobResult(JOB, JOB_ID, RunningState.COMMITTED, [dataset], 1.0, "local")


EXPECTED = ["2: 7262 → 10893", "3: 120 → 120", "9: 6792 → 8919", "10: 5946 → 10188", "11: 400 → 400"]


def test_the_run_summary_lists_each_partition_low_to_high_in_partition_order():
    text = render(_result(_tasks()))
    [line] = [line for line in text.splitlines() if "watermarks" in line]
    assert line == "    watermarks by partition: " + ", ".join(EXPECTED), text


def test_the_summary_table_lists_each_partition_in_partition_order():
    out = io.StringIO()
    print_summary_table(_result(_tasks()), Console(file=out, width=120, force_terminal=True, color_system=None))
    shown = [e for line in out.getvalue().splitlines() for e in [f"partition {x}" for x in EXPECTED] if e in line]
    assert shown == [f"partition {x}" for x in EXPECTED], out.getvalue()


def _store(tmp_path) -> str:
    store = FsDatasetStateStore(str(tmp_path / "store"))
    state = DatasetState(JOB, JOB_ID, dataset_urn=TOPIC, state=RunningState.COMMITTED, start_time=1763600000000,
                         end_time=1763600001469, duration=1469, task_count=4)
    for task in _tasks():
        state.add_task_state(task)
    store.persist_dataset_state(state)
    return str(tmp_path / "store")


def test_state_show_has_a_partition_column_in_partition_order(tmp_path):
    result = run_gpy("state", "show", _store(tmp_path))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    header = next(line.split() for line in lines if line.strip().startswith("task "))
    assert header[:3] == ["task", "partition", "state"], result.stdout
    rows = [line.split() for line in lines if line.strip().startswith("task_")]
    assert [row[1] for row in rows] == ["2", "3", "9", "10", "11"], result.stdout
    by_partition = {row[1]: row[3:6] for row in rows}
    assert by_partition["10"] == ["5946", "10188", "10188"] and by_partition["2"] == ["7262", "10893", "10893"]
    assert by_partition["11"] == ["400", "400", "400"], result.stdout


def test_state_show_json_labels_each_partition_in_partition_order(tmp_path):
    result = run_gpy("state", "show", _store(tmp_path), "--json")
    assert result.returncode == 0, result.stderr
    [dataset] = json.loads(result.stdout)["datasets"]
    tasks = [[(p["partition"], p["low"], p["expected_high"], p["actual_high"]) for p in t["partitions"]]
             for t in dataset["tasks"]]
    assert tasks == [[(2, *ONE_EACH[2])], [(3, *SQUEEZED[3]), (11, *SQUEEZED[11])], [(9, *ONE_EACH[9])],
                     [(10, *ONE_EACH[10])]]


def test_a_real_run_of_eleven_partitions_lists_them_in_numeric_order(tmp_path, broker):
    """Partitions 2, 9 and 10 get messages, the others none (squeezed into one work unit)."""
    topic = broker.create_topic(partitions=11)
    for partition, count in ((2, 3), (9, 5), (10, 4)):
        broker.produce(topic, [f"p{partition}-{i}" for i in range(count)], partition=partition)
    job = KafkaJob(tmp_path, broker, topic__whitelist=topic)
    result = job.run()
    [line] = [line for line in result.stdout.splitlines() if "watermarks" in line]
    expected = {p: f"{p}: 0 → {({2: 3, 9: 5, 10: 4}).get(p, 0)}" for p in range(11)}
    assert line == "    watermarks by partition: " + ", ".join(expected[p] for p in range(11)), result.stdout
    shown = run_gpy("state", "show", str(job.file))
    rows = [row.split() for row in shown.stdout.splitlines() if row.strip().startswith("task_")]
    assert [int(row[1]) for row in rows] == list(range(11)), shown.stdout
