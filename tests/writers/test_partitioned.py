"""The partitioned writer: folders by a time field or by column values, rows per partition, writer ids per
partition, and the publisher moving partition folders as units."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from gobblin_py.connectors.files.partitioners import joda_to_strftime
from gobblin_py.connectors.files.publisher import BaseDataPublisher, PublishConflictError
from gobblin_py.connectors.files.writer_parts import clean_up_all
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.states import State, TaskState, WorkingState, WorkUnit
from tests.support.writers import build, files_under, task_state, write_all

UTC = dt.timezone.utc
TIME = "gobblin_py.connectors.files.partitioners.TimeBasedWriterPartitioner"
VALUE = "gobblin_py.connectors.files.partitioners.ColumnValueWriterPartitioner"

EVENTS = [
    (1, dt.datetime(2024, 1, 1, 2, 0, tzinfo=UTC), "US"),    # 2023-12-31 18:00 in Los Angeles
    (2, dt.datetime(2024, 1, 1, 23, 59, 59, 999999, tzinfo=UTC), "DE"),
    (3, dt.datetime(2024, 1, 2, 0, 0, tzinfo=UTC), "US"),
    (4, dt.datetime(2024, 1, 1, 12, 0, tzinfo=UTC), None),
    (5, dt.datetime(2024, 2, 29, 8, 30, tzinfo=UTC), "F R"),
    (6, dt.datetime(2024, 1, 2, 5, 0, tzinfo=UTC), "DE"),
]


def events(rows=EVENTS) -> pa.RecordBatch:
    ids, times, countries = zip(*rows)
    times_arr = pa.array(times, pa.timestamp("us", "UTC"))
    return pa.record_batch({
        "id": pa.array(ids, pa.int64()),
        "event_time": times_arr,
        "epoch_ms": pc.divide(times_arr.cast(pa.int64()), 1000),
        "country": pa.array(countries),
    })


def _writer_k(path: Path) -> tuple[str, int]:
    return str(path.parent), int(path.name.split(".")[1].rsplit("_", 1)[1])


def rows_by_folder(root: Path) -> dict[str, list[int]]:
    """Ids per partition folder, files read in writer-id order (the order they were written)."""
    out: dict[str, list[int]] = {}
    for path in sorted(root.rglob("*.parquet"), key=_writer_k):
        out.setdefault(str(path.parent.relative_to(root)), []).extend(pq.read_table(path).column("id").to_pylist())
    return out


def test_time_partitions_by_day_in_utc(tmp_path):
    state = task_state(tmp_path, writer__partitioner__class=TIME, writer__partition__columns="event_time",
                       writer__partition__pattern="yyyy/MM/dd", writer__partition__timezone="UTC")
    writer, outputs = write_all(state, events())
    assert rows_by_folder(tmp_path / "output/out") == {
        "2024/01/01": [1, 2, 4], "2024/01/02": [3, 6], "2024/02/29": [5]}
    # one writer per partition, each with the next writer id (k per new partition, in order of appearance)
    assert files_under(tmp_path / "output") == ["out/2024/01/01/part.task_7_0.parquet",
                                               "out/2024/01/02/part.task_7_1.parquet",
                                               "out/2024/02/29/part.task_7_2.parquet"]
    assert sorted(writer.partitions) == ["2024/01/01", "2024/01/02", "2024/02/29"]
    assert writer.records_written == 6 and len(outputs) == 3
    assert files_under(tmp_path / "staging") == []


def test_time_partitions_use_gobblins_default_zone_and_epoch_millis(tmp_path):
    # Gobblin's defaults: America/Los_Angeles, integer fields in MILLISECONDS, granularity HOUR without a pattern
    state = task_state(tmp_path, writer__partitioner__class=TIME, writer__partition__columns="epoch_ms",
                       writer__partition__granularity="DAY")
    write_all(state, events())
    assert rows_by_folder(tmp_path / "output/out") == {
        "2023/12/31": [1], "2024/01/01": [2, 3, 4, 6], "2024/02/29": [5]}


def test_time_partitions_hourly_with_prefix_suffix_and_field_names(tmp_path):
    state = task_state(tmp_path, writer__partitioner__class=TIME, writer__partition__columns="missing,event_time",
                       writer__partition__pattern="yyyy/MM/dd/HH", writer__partition__timezone="UTC",
                       writer__partition__prefix="events", writer__partition__suffix="hourly",
                       writer__include__partition__in__file__names="true")
    write_all(state, events(EVENTS[:2]))
    assert set(rows_by_folder(tmp_path / "output/out")) == {
        "prefix=events/partitionedPath=2024/01/01/02/suffix=hourly",
        "prefix=events/partitionedPath=2024/01/01/23/suffix=hourly"}


def test_time_partitions_epoch_seconds_from_strings(tmp_path):
    batch = pa.record_batch({"id": pa.array([1, 2]), "ts": pa.array(["1704067200", "1709164800"])})
    with pytest.raises(UsageError, match="writer.partition.enableParseAsString=true"):
        build(task_state(tmp_path, writer__partitioner__class=TIME, writer__partition__columns="ts"), batch.schema)
    state = task_state(tmp_path, writer__partitioner__class=TIME, writer__partition__columns="ts",
                       writer__partition__enableParseAsString="true", writer__partition__timeUnit="SECONDS",
                       writer__partition__pattern="'dt='yyyy-MM-dd", writer__partition__timezone="UTC")
    write_all(state, batch)
    assert rows_by_folder(tmp_path / "output/out") == {"dt=2024-01-01": [1], "dt=2024-02-29": [2]}


def test_a_missing_time_is_the_current_time_as_in_gobblin(tmp_path):
    batch = pa.record_batch({"id": pa.array([1, 2]), "t": pa.array([None, 0], pa.timestamp("s", "UTC"))})
    state = task_state(tmp_path, writer__partitioner__class=TIME, writer__partition__columns="t",
                       writer__partition__pattern="yyyy", writer__partition__timezone="UTC")
    write_all(state, batch)
    assert rows_by_folder(tmp_path / "output/out") == {str(dt.datetime.now(UTC).year): [1], "1970": [2]}


def test_time_partitions_of_dates_and_nested_fields(tmp_path):
    batch = pa.record_batch({
        "id": pa.array([1, 2]),
        "header": pa.array([{"day": dt.date(2024, 5, 1)}, {"day": dt.date(2024, 5, 2)}]),
    })
    state = task_state(tmp_path, writer__partitioner__class=TIME, writer__partition__columns="header.day",
                       writer__partition__pattern="yyyy/MM/dd", writer__partition__timezone="Asia/Tokyo")
    write_all(state, batch)
    assert rows_by_folder(tmp_path / "output/out") == {"2024/05/01": [1], "2024/05/02": [2]}


@pytest.mark.parametrize("key,value,message", [
    ("writer.partition.pattern", "yyyy/QQ", "'QQ' is not supported"),
    ("writer.partition.timezone", "Mars/Olympus", "not a time zone"),
    ("writer.partition.granularity", "FORTNIGHT", "expected YEAR | MONTH | DAY | HOUR | MINUTE"),
    ("writer.partition.timeUnit", "JIFFIES", "not one of the accepted values"),
])
def test_bad_time_partitioner_settings(tmp_path, key, value, message):
    props = {"writer__partitioner__class": TIME, "writer__partition__columns": "event_time", key.replace(".", "__"): value}
    with pytest.raises(UsageError, match=message):
        build(task_state(tmp_path, **props), events().schema)


def test_joda_patterns():
    assert joda_to_strftime("yyyy/MM/dd/HH") == "%Y/%m/%d/%H"
    assert joda_to_strftime("'year='yyyy/'month='MM") == "year=%Y/month=%m"
    assert joda_to_strftime("yyyy-MM-dd'T'HH:mm:ss") == "%Y-%m-%dT%H:%M:%S"


def test_column_value_partitions_hive_layout(tmp_path):
    state = task_state(tmp_path, writer__partitioner__class=VALUE, writer__partition__columns="country",
                       writer__include__partition__in__file__names="true")
    write_all(state, events())
    assert rows_by_folder(tmp_path / "output/out") == {
        "country=DE": [2, 6], "country=US": [1, 3], "country=F_R": [5],  # Gobblin's [\s:\\] → _
        "country=__HIVE_DEFAULT_PARTITION__": [4]}


def test_column_value_partitions_several_columns_and_separators(tmp_path):
    batch = pa.record_batch({"id": pa.array([1, 2, 3, 4]), "a": pa.array(["x/y", "x/y", "..", ""]),
                             "b": pa.array([1, 2, 1, 1])})
    write_all(task_state(tmp_path / "plain", writer__partitioner__class=VALUE, writer__partition__columns="a,b"), batch)
    # bare values: "/" nests, empty values vanish, "." and ".." cannot climb out of the output directory
    assert rows_by_folder(tmp_path / "plain/output/out") == {"x/y/1": [1], "x/y/2": [2], "_/1": [3], "1": [4]}
    write_all(task_state(tmp_path / "flat", writer__partitioner__class=VALUE, writer__partition__columns="a,b",
                         writer__replace__path__separators__in__partitions="true"), batch)
    assert rows_by_folder(tmp_path / "flat/output/out") == {"x_y/1": [1], "x_y/2": [2], "_/1": [3], "1": [4]}


def test_partitions_across_batches_and_rolling_within_a_partition(tmp_path):
    state = task_state(tmp_path, writer__partitioner__class=VALUE, writer__partition__columns="country",
                       writer__target__file__size="512", writer__codec__type="none")
    many = [events() for _ in range(30)]  # a partition's rows make more than one 512-byte row group
    writer, outputs = write_all(state, *many)
    by_folder = rows_by_folder(tmp_path / "output/out")
    assert {k: len(v) for k, v in by_folder.items()} == {"US": 60, "DE": 60, "F_R": 30, "__HIVE_DEFAULT_PARTITION__": 30}
    assert by_folder["US"] == [1, 3] * 30  # rows of a partition keep their order across batches
    names = [Path(p).name for p in outputs]
    assert len(names) == len(set(names)) > 4  # every file of the task has its own writer id
    assert writer.records_written == 180


def test_a_per_record_partitioner_works_through_the_adapter(tmp_path):
    state = task_state(tmp_path, writer__partitioner__class="tests.writers.test_partitioned.EvenOdd")
    write_all(state, events())
    assert rows_by_folder(tmp_path / "output/out") == {"even": [2, 4, 6], "odd": [1, 3, 5]}


class EvenOdd:
    """A Gobblin-style partitioner: one record in, the partition's fields out."""

    def partition_for_record(self, record):
        return {"parity": "even" if record["id"] % 2 == 0 else "odd"}


def test_partition_column_must_exist_and_name_a_folder(tmp_path):
    with pytest.raises(UsageError, match="no column 'nope'"):
        build(task_state(tmp_path, writer__partitioner__class=VALUE, writer__partition__columns="nope"), events().schema)
    schema = pa.schema([("l", pa.list_(pa.int32()))])
    with pytest.raises(UsageError, match="cannot name a folder"):
        build(task_state(tmp_path, writer__partitioner__class=VALUE, writer__partition__columns="l"), schema)


def test_cleanup_after_failure_removes_every_partitions_files(tmp_path):
    state = task_state(tmp_path, writer__partitioner__class=VALUE, writer__partition__columns="country")
    writer = build(state, events().schema)
    writer.write(events())
    assert len(files_under(tmp_path / "staging")) == 4
    writer.cleanup()
    assert files_under(tmp_path) == []


def test_a_part_failing_its_cleanup_leaves_the_others_cleaned_and_its_error_raised():
    class Part:
        def __init__(self, error: Exception | None) -> None:
            self.error, self.cleaned = error, False

        def cleanup(self) -> None:
            self.cleaned = True
            if self.error is not None:
                raise self.error

    first, second = OSError("disk gone"), OSError("also gone")
    parts = [Part(None), Part(first), Part(None), Part(second)]
    with pytest.raises(OSError) as raised:
        clean_up_all(parts)  # type: ignore[arg-type]
    assert raised.value is first and all(part.cleaned for part in parts)


# -- publishing: partition folders move as units -------------------------------------------------------------

def _task(tmp_path: Path, task_id: str, **props: str) -> TaskState:
    job = State({"writer.staging.dir": f"{tmp_path}/staging", "writer.output.dir": f"{tmp_path}/output",
                 "writer.file.path": "events", "data.publisher.final.dir": f"{tmp_path}/final",
                 **{k.replace("__", "."): v for k, v in props.items()}})
    task = TaskState("job_1", task_id, WorkUnit(), job_state=job)
    task.working_state = WorkingState.SUCCESSFUL
    return task


def _run_and_publish(tmp_path: Path, task_ids_and_rows) -> list[TaskState]:
    tasks = []
    for task_id, rows in task_ids_and_rows:
        task = _task(tmp_path, task_id, writer__partitioner__class=TIME, writer__partition__columns="event_time",
                     writer__partition__pattern="yyyy/MM/dd", writer__partition__timezone="UTC")
        writer = build(task, events(rows).schema, writer_id=f"{task_id}_0")
        writer.write(events(rows))
        writer.commit()
        writer.cleanup()
        tasks.append(task)
    publisher = BaseDataPublisher()
    publisher.init({})
    publisher.publish(tasks)
    return tasks


def test_publisher_moves_partition_folders_as_units(tmp_path):
    _run_and_publish(tmp_path, [("task_a", EVENTS[:3]), ("task_b", EVENTS[3:])])
    assert files_under(tmp_path / "output") == [] and files_under(tmp_path / "staging") == []
    assert files_under(tmp_path / "final/events") == [
        "2024/01/01/part.task_a_0.parquet", "2024/01/01/part.task_b_0.parquet",
        "2024/01/02/part.task_a_1.parquet", "2024/01/02/part.task_b_1.parquet",
        "2024/02/29/part.task_b_2.parquet"]
    assert {k: sorted(v) for k, v in rows_by_folder(tmp_path / "final/events").items()} == {
        "2024/01/01": [1, 2, 4], "2024/01/02": [3, 6], "2024/02/29": [5]}


def test_a_later_run_adds_to_existing_partition_folders(tmp_path):
    _run_and_publish(tmp_path, [("task_a", EVENTS[:1])])
    _run_and_publish(tmp_path, [("task_b", EVENTS[3:4] + [(7, dt.datetime(2025, 3, 1, tzinfo=UTC), "US")])])
    assert files_under(tmp_path / "final/events") == ["2024/01/01/part.task_a_0.parquet",
                                                      "2024/01/01/part.task_b_0.parquet",
                                                      "2025/03/01/part.task_b_1.parquet"]


def test_a_partition_file_that_exists_is_never_overwritten(tmp_path):
    _run_and_publish(tmp_path, [("task_a", EVENTS[:1])])
    with pytest.raises(PublishConflictError, match="2024/01/01/part.task_a_0.parquet already exists"):
        _run_and_publish(tmp_path, [("task_a", EVENTS[3:4])])
    assert rows_by_folder(tmp_path / "final/events") == {"2024/01/01": [1]}


def test_a_job_with_a_partitioner_passes_the_pre_run_check():
    """A partitioner's validate(schema) is its own method, not the Validating protocol's validate(props)."""
    from gobblin_py.runtime.plan.validation import check_job

    check = check_job({"job.name": "P", "source.class": "gobblin_py.connectors.files.filebased.FileBasedSource",
                       "source.filebased.data.directory": "/tmp", "task.data.root.dir": "/tmp/x", "state.store.dir": "/tmp/s", "data.publisher.final.dir": "/tmp/f",
                       "writer.partitioner.class": "gobblin_py.connectors.files.partitioners.TimeBasedWriterPartitioner",
                       "writer.partition.columns": "at"})
    assert check.ok, check.errors
