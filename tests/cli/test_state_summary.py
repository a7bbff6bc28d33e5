"""`gpy state show` on a store of many datasets: one line per dataset, newest first, kept fast by an index file
that is never believed when it is stale, and reported and rebuilt when it is corrupt."""

import json
import os

import pytest

from gobblin_py.sdk.run_states import DatasetState
from gobblin_py.sdk.states import Extract, RunningState, TaskState, WorkUnit
from gobblin_py.sdk.watermarks import LongWatermark, WatermarkInterval
from gobblin_py.store import FsDatasetStateStore
from gobblin_py.store.summary_index import INDEX_FILE, VERSION
from tests.support.cli import run_gpy_here

JOB = "Many"
COUNT = 25


def make_state(i: int, run: int = 1, written: int = 100) -> DatasetState:
    urn = f"db:public.table_{i:02d}"
    job_id = f"job_{JOB}_{1_763_600_000_000 + run}"
    # dataset i ended i minutes after the first: the newest is the last one
    end = 1_763_600_000_000 + i * 60_000 + run * 3_600_000
    state = DatasetState(JOB, job_id, dataset_urn=urn, state=RunningState.COMMITTED, task_count=1,
                         start_time=end - 1000, end_time=end, duration=1000)
    unit = WorkUnit.create(Extract.create("append_only", "db", f"table_{i:02d}"),
                           WatermarkInterval.of(LongWatermark(i), LongWatermark(i + 1000 * run)))
    unit.set_prop("dataset.urn", urn)
    task = TaskState(job_id, f"task_{JOB}_{run}_{i}", unit)
    task.set_actual_high_watermark(LongWatermark(i + 1000 * run))
    task.set_prop("writer.records.written", written)
    state.add_task_state(task)
    return state


@pytest.fixture
def store(tmp_path):
    store = FsDatasetStateStore(str(tmp_path / "store"))
    for i in range(COUNT):
        store.persist_dataset_state(make_state(i))
    return store


def show(store, *args):
    result = run_gpy_here("state", "show", store.root, *args)
    assert result.returncode == 0, result.stderr
    return result


def rows(stdout: str) -> list[list[str]]:
    lines = stdout.splitlines()
    assert lines[0] == f"job {JOB}: {COUNT} datasets, newest first (--dataset URN or --json for the full detail)"
    assert lines[1].split() == ["dataset", "state", "last", "run", "records", "watermark"]
    return [line.split() for line in lines[2:]]


def test_summary_has_one_line_per_dataset_newest_first(store):
    result = show(store)
    table = rows(result.stdout)
    assert [r[0] for r in table] == [f"db:public.table_{i:02d}" for i in reversed(range(COUNT))]
    assert table[0] == ["db:public.table_24", "COMMITTED", "2025-11-20T02:17:20.000Z", "100", "1024"]
    assert table[-1] == ["db:public.table_00", "COMMITTED", "2025-11-20T01:53:20.000Z", "100", "1000"]
    assert os.path.exists(os.path.join(store.root, JOB, INDEX_FILE))


def test_index_written_then_used_gives_the_same_summary(store):
    first = show(store).stdout
    index_path = os.path.join(store.root, JOB, INDEX_FILE)
    index = json.loads(open(index_path).read())
    assert len(index["tables"]) == COUNT
    modified = os.stat(index_path).st_mtime_ns
    assert show(store).stdout == first
    assert os.stat(index_path).st_mtime_ns == modified  # every entry was fresh: nothing to rewrite


def test_stale_index_is_not_believed(store):
    show(store)  # builds the index
    store.persist_dataset_state(make_state(3, run=2, written=7))  # a newer run of one dataset
    os.remove(os.path.join(store.root, JOB, "db.public.table_05-current.jst"))  # another one's latest is gone
    result = run_gpy_here("state", "show", store.root)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"job {JOB}: {COUNT - 1} datasets")
    table = [line.split() for line in lines[2:]]
    assert table[0] == ["db:public.table_03", "COMMITTED", "2025-11-20T02:56:20.000Z", "7", "2003"]
    assert "db:public.table_05" not in [r[0] for r in table]
    assert len(table) == COUNT - 1 and result.stderr == ""


def test_corrupt_index_is_reported_and_rebuilt(store):
    good = show(store).stdout
    index_path = os.path.join(store.root, JOB, INDEX_FILE)
    entry = json.loads(open(index_path).read())["tables"]["db.public.table_00-current.jst"]
    del entry["line"]["end_ms"]
    no_time = json.dumps({"format": "gpy-state-index", "version": VERSION,
                          "tables": {"db.public.table_00-current.jst": entry}})
    for garbage in (b'{"format": "gpy-state-index", "version": %d, "tables": {"x": 3}}' % VERSION, b"\x00\x01not json",
                    no_time.encode()):
        with open(index_path, "wb") as out:
            out.write(garbage)
        result = run_gpy_here("state", "show", store.root)
        assert result.returncode == 0, result.stderr
        assert result.stdout == good
        assert index_path in result.stderr and "corrupt" in result.stderr
        assert len(json.loads(open(index_path).read())["tables"]) == COUNT  # rebuilt
        assert run_gpy_here("state", "show", store.root).stderr == ""


def test_corrupt_state_file_still_fails_naming_it(store):
    show(store)
    victim = os.path.join(store.root, JOB, "db.public.table_07-current.jst")
    data = open(victim, "rb").read()
    with open(victim, "wb") as out:
        out.write(data[:-1])
    result = run_gpy_here("state", "show", store.root)
    assert result.returncode == 2 and victim in result.stderr and "truncated" in result.stderr


def test_dataset_json_and_full_keep_the_full_detail(store):
    show(store)
    one = show(store, "--dataset", "db:public.table_04").stdout
    assert one.splitlines()[0] == "job Many  dataset db:public.table_04"
    [task] = [line.split() for line in one.splitlines() if line.strip().startswith("task_")]
    assert task == ["task_Many_1_4", "PENDING", "4", "1004", "1004", "-", "100"]
    report = json.loads(show(store, "--json").stdout)
    assert len(report["datasets"]) == COUNT and all(d["tasks"] for d in report["datasets"])
    full = show(store, "--full").stdout
    assert full.count("\njob Many  dataset ") + full.startswith("job Many  dataset ") == COUNT


def test_a_run_keeps_the_index_fresh(tmp_path):
    data = tmp_path / "data"
    for i in range(COUNT):
        (data / f"d{i:02d}").mkdir(parents=True)
        (data / f"d{i:02d}" / "part.csv").write_text(f"id,name\n{i},row{i}\n")
    job = tmp_path / "many.pull"
    job.write_text("\n".join([
        "job.name=ManyFiles", "source.class=gobblin_py.connectors.files.filebased.FileBasedSource",
        f"source.filebased.data.directory={data}", "source.filebased.dataset.urn.level=subdirectory",
        "extract.namespace=many", f"writer.staging.dir={tmp_path}/staging", f"writer.output.dir={tmp_path}/output",
        f"data.publisher.final.dir={tmp_path}/published", f"state.store.dir={tmp_path}/state",
        "writer.file.pathType=TABLENAME", ""]))
    result = run_gpy_here("run", str(job), "--engine", "local")
    assert result.returncode == 0, result.stderr
    job_dir = tmp_path / "state" / "ManyFiles"
    index = json.loads((job_dir / INDEX_FILE).read_text())
    assert len(index["tables"]) == COUNT
    for name, entry in index["tables"].items():
        stat = os.stat(job_dir / name)
        assert entry["fp"] == [stat.st_size, str(stat.st_mtime_ns), str(stat.st_ino)]
    modified = os.stat(job_dir / INDEX_FILE).st_mtime_ns
    indexed = run_gpy_here("state", "show", str(job))
    assert indexed.returncode == 0 and indexed.stderr == ""
    assert os.stat(job_dir / INDEX_FILE).st_mtime_ns == modified  # the run's index was fresh: used as it was
    (job_dir / INDEX_FILE).unlink()
    rebuilt = run_gpy_here("state", "show", str(job))
    assert rebuilt.stdout == indexed.stdout and len(indexed.stdout.splitlines()) == COUNT + 2


def test_few_datasets_are_shown_in_full_and_get_no_index(tmp_path):
    store = FsDatasetStateStore(str(tmp_path / "store"))
    for i in range(3):
        store.persist_dataset_state(make_state(i))
    result = show(store)
    assert result.stdout.startswith("job Many  dataset db:public.table_00")
    assert not os.path.exists(os.path.join(store.root, JOB, INDEX_FILE))


def test_state_datasets_reads_many_datasets_from_the_index_with_their_completeness(tmp_path):
    store = FsDatasetStateStore(str(tmp_path / "store"))
    for i in range(COUNT):
        state = make_state(i)
        if i == 3:
            state.properties["gpy.completeness.watermark"] = "1763600000000"
        store.persist_dataset_state(state)
    job = tmp_path / "many.pull"
    job.write_text(f"job.name={JOB}\nstate.store.dir={store.root}\n")
    expected = [f"db:public.table_{i:02d}  job_{JOB}_1763600000001  COMMITTED" +
                ("  complete up to 2025-11-20T00:53:20.000Z" if i == 3 else "") for i in range(COUNT)]
    first = run_gpy_here("state", "datasets", str(job))
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines() == expected  # read from the state files, the index built on the way
    assert os.path.exists(os.path.join(store.root, JOB, INDEX_FILE))
    assert run_gpy_here("state", "datasets", str(job)).stdout == first.stdout  # from the index
