"""`gpy history` through the real CLI: every run recorded — committed, nothing new, failed, stopped, killed —
with its counts per branch, files, bytes and watermarks, bounded by retention, on any fsspec filesystem."""

from __future__ import annotations

import dataclasses
import json
import re
import signal
import subprocess
import sys
import time

import pytest

from gobblin_py.runtime.execute.dataset_outputs import BranchOutput
from gobblin_py.sdk.errors import CorruptFileError
from gobblin_py.store.run_history import KILLED, RUNNING, RunHistoryStore
from tests.support.cli import run_gpy_here
from tests.support.jobs import Job, run_local, write_csv


def history(job: Job, *args: str) -> dict:
    result = run_gpy_here("history", str(job.file), "--json", *args)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _wait_for(path, proc: subprocess.Popen, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the task never started"
        time.sleep(0.02)


def _slow_job(tmp_path) -> tuple[Job, object]:
    marker = tmp_path / "running"
    job = Job(tmp_path, extra=("converter.classes=tests.runtime.sample_plugins.MarkThenCrawl\n"
                               f"test.marker={marker}\ntest.crawl.seconds=2\n"
                               "source.filebased.batch.size=5\ntaskexecutor.threadpool.size=1\n"))
    for k in range(3):
        write_csv(job.data / f"f{k}.csv", 1 + k * 100)
    return job, marker


def _start(job: Job) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "gobblin_py.cli", "run", str(job.file), "--engine", "local"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_committed_then_nothing_new_listed_newest_first_and_shown_in_full(tmp_path):
    job = Job(tmp_path, extra="fork.operator.class=tests.runtime.sample_plugins.RouteByParity\n"
                              "fork.branch.name.0=even\nfork.branch.name.1=odd\n")
    write_csv(job.data / "a.csv", 1)
    write_csv(job.data / "b.csv", 101)
    assert run_local(job).returncode == 0
    assert run_local(job).returncode == 0
    runs = history(job)["runs"]
    assert [r["status"] for r in runs] == ["NOTHING_NEW", "SUCCEEDED"]
    assert [r["exit_code"] for r in runs] == [0, 0]
    assert runs[0]["started"] > runs[1]["started"]
    assert runs[1]["records_read"] == 80 and runs[1]["records_written"] == 80 and runs[1]["datasets"] == 1
    assert [r["run_id"] for r in history(job, "--limit", "1")["runs"]] == [runs[0]["run_id"]]

    full = run_gpy_here("history", str(job.file), runs[1]["run_id"], "--json")
    assert full.returncode == 0, full.stderr
    record = json.loads(full.stdout)
    assert record["run_id"] == runs[1]["run_id"] and record["job"] == "Orders" and record["engine"] == "local"
    assert record["ended_ms"] >= record["started_ms"] and record["seconds"] >= 0
    (dataset,) = record["datasets"]
    assert dataset["state"] == "COMMITTED" and dataset["tasks"] == 2 and dataset["failed_tasks"] == 0
    assert dataset["records_read"] == 80 and dataset["records_written"] == 80
    branches = {b["name"]: b for b in dataset["branches"]}
    assert set(branches) == {"even", "odd"}
    assert branches["even"]["records_written"] == 40 and branches["odd"]["records_written"] == 40
    published = sorted(job.final.rglob("*.parquet"))
    assert dataset["files"] == len(published) == 4
    assert dataset["bytes"] == sum(b["bytes_written"] for b in branches.values()) > 0
    # one distinct high watermark per task at most (the tasks' files may differ in modification time by a ms)
    assert dataset["watermark_from"] == ["0"] and 1 <= len(dataset["watermark_to"]) <= dataset["tasks"]
    assert all(int(w) > 0 for w in dataset["watermark_to"])
    assert dataset["state_saved"] is True and dataset["error"] is None

    text = run_gpy_here("history", str(job.file), runs[1]["run_id"])
    assert text.returncode == 0, text.stderr
    assert "status    SUCCEEDED (exit 0)" in text.stdout
    assert "branch even: written 40  files 2" in text.stdout and "branch odd: written 40  files 2" in text.stdout
    listing = run_gpy_here("history", str(job.file))
    lines = listing.stdout.splitlines()
    assert lines[0] == "Orders: 2 run(s), newest first" and "NOTHING_NEW" in lines[2] and "SUCCEEDED" in lines[3]


def test_a_failed_run_is_recorded_with_its_errors_and_an_unknown_run_id_exits_2(tmp_path):
    job = Job(tmp_path, extra="converter.classes=tests.runtime.sample_plugins.FailOnMarker\n")
    write_csv(job.data / "a.csv", 1, note="FAIL")
    assert run_local(job).returncode == 1
    (run,) = history(job)["runs"]
    assert run["status"] == "FAILED" and run["exit_code"] == 1
    record = json.loads(run_gpy_here("history", str(job.file), run["run_id"], "--json").stdout)
    (dataset,) = record["datasets"]
    assert dataset["state"] == "FAILED" and dataset["failed_tasks"] == 1 and dataset["records_written"] == 0
    assert "nothing published" in dataset["error"]
    assert len(dataset["task_errors"]) == 1 and "marker FAIL found" in dataset["task_errors"][0]
    unknown = run_gpy_here("history", str(job.file), "job_Orders_1")
    assert unknown.returncode == 2 and "no run 'job_Orders_1'" in unknown.stderr and unknown.stdout == ""


def test_a_stopped_run_is_recorded_as_stopped(tmp_path):
    job, marker = _slow_job(tmp_path)
    proc = _start(job)
    _wait_for(marker, proc)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert proc.returncode == 143
    (run,) = history(job)["runs"]
    assert run["status"] == "STOPPED" and run["exit_code"] == 143 and "stopped by SIGTERM" in run["message"]


def test_a_killed_run_shows_as_killed_and_the_next_run_records_it(tmp_path):
    job, marker = _slow_job(tmp_path)
    proc = _start(job)
    _wait_for(marker, proc)
    (running,) = history(job)["runs"]
    assert running["status"] == RUNNING and running["exit_code"] is None  # recorded as it started
    proc.kill()
    proc.communicate(timeout=60)
    (dead,) = history(job)["runs"]
    assert dead["status"] == KILLED  # its process is gone: it cannot still be running
    job.file.write_text(job.file.read_text().replace("test.crawl.seconds=2", "test.crawl.seconds=0"))
    rerun = run_local(job)
    assert rerun.returncode == 0, rerun.stderr
    assert "earlier_run_killed" in rerun.stderr
    runs = history(job)["runs"]
    assert [r["status"] for r in runs] == ["SUCCEEDED", KILLED]
    stored = RunHistoryStore(str(job.state / "_history")).get("Orders", runs[1]["run_id"])
    assert stored["status"] == KILLED and "without recording its end" in stored["message"]  # written down, not guessed
    shown = run_gpy_here("history", str(job.file), runs[1]["run_id"])
    assert "status    KILLED" in shown.stdout and "ended     not recorded" in shown.stdout


def test_retention_keeps_the_newest_runs(tmp_path):
    job = Job(tmp_path, extra="job.history.retention=2\n")
    ids = []
    for k in range(3):
        write_csv(job.data / f"f{k}.csv", 1 + k * 100)
        assert run_local(job).returncode == 0
        ids.append(history(job)["runs"][0]["run_id"])
    assert [r["run_id"] for r in history(job)["runs"]] == ids[:0:-1]
    assert len(list((job.state / "_history" / "Orders").glob("*.json"))) == 2


def test_a_job_without_history_says_so(tmp_path):
    job = Job(tmp_path, extra="job.history.enabled=false\n")
    write_csv(job.data / "a.csv", 1)
    assert run_local(job).returncode == 0
    assert not (job.state / "_history").exists()
    result = run_gpy_here("history", str(job.file))
    assert result.returncode == 2 and "records no run history" in result.stderr


def test_the_store_on_another_filesystem_prunes_and_finds_runs():
    store = RunHistoryStore("memory://gpy-history-test/_history", keep=2)
    for started in (1000, 2000, 3000):
        store.put("J", {"run_id": f"job_J_{started}", "started_ms": started, "status": "SUCCEEDED"})
    assert store.prune("J") == ["000000000001000-job_J_1000.json"]
    assert [r["run_id"] for r in store.runs("J")] == ["job_J_3000", "job_J_2000"]
    assert store.get("J", "job_J_2000")["started_ms"] == 2000
    aged = RunHistoryStore("memory://gpy-history-test/_history", keep=10, max_age_seconds=1.5)
    assert aged.prune("J", now=4.0) == ["000000000002000-job_J_2000.json"]  # older than 1.5 s; the newest stays
    assert [r["run_id"] for r in aged.runs("J")] == ["job_J_3000"]


def test_a_run_record_gpy_history_cannot_show_exits_2_naming_the_file_and_the_field(tmp_path):
    # found by fuzzing: a record of the wrong shape (a startpoint without its id, a count that is not a number)
    # or nested too deeply failed `gpy history` with a KeyError, a ValueError or a RecursionError traceback
    job = Job(tmp_path)
    folder = job.state / "_history" / "Orders"
    folder.mkdir(parents=True)
    record = {"run_id": "job_Orders_1", "status": "SUCCEEDED", "started_ms": 1,
              "datasets": [{"urn": "orders", "startpoints": [{"kind": "TIMESTAMP", "set": "x"}]}]}
    (folder / "000000000000001-job_Orders_1.json").write_text(json.dumps(record))
    shown = run_gpy_here("history", str(job.file))
    assert shown.returncode == 2, shown.stderr
    assert "000000000000001-job_Orders_1.json: not a run record: datasets[0].startpoints[0].id is missing" in shown.stderr
    assert "Traceback" not in shown.stderr

    store = RunHistoryStore(str(job.state / "_history"))
    for fields, said in [({"pid": "12"}, 'pid is "12", not a whole number'),
                         ({"datasets": [{"records_read": "many"}]}, 'datasets[0].records_read is "many", not a whole number'),
                         ({"datasets": [None]}, "datasets[0] is null, not an object"),
                         ({"warnings": "w"}, 'warnings is "w", not a list'),
                         ({"datasets": [{"task_attempts": [{"attempts": [{"retry_in_s": "soon"}]}]}]},
                          'datasets[0].task_attempts[0].attempts[0].retry_in_s is "soon", not a number')]:
        (folder / "000000000000001-job_Orders_1.json").write_text(json.dumps({**record, "datasets": [], **fields}))
        with pytest.raises(CorruptFileError, match=re.escape(f"job_Orders_1.json: not a run record: {said}")):
            store.runs("Orders")
    (folder / "000000000000001-job_Orders_1.json").write_text('{"run_id": ' + "[" * 100_000)
    with pytest.raises(CorruptFileError, match=r"job_Orders_1.json: not a run record \(nested too deeply\)"):
        store.runs("Orders")


def test_a_runs_record_holds_each_dataset_on_a_line_of_its_own(tmp_path):
    # a run of thousands of datasets writes its record in one pass of the JSON encoder per dataset
    job = Job(tmp_path, extra="source.filebased.dataset.urn.level=subdirectory\ntaskexecutor.threadpool.size=1\n")
    for name in ("north", "south", "west"):
        (job.data / name).mkdir()
        write_csv(job.data / name / "part.csv", 1)
    assert run_local(job).returncode == 0
    (path,) = (job.state / "_history" / "Orders").glob("*.json")
    text = path.read_text(encoding="utf-8")
    record = json.loads(text)
    assert [d["urn"] for d in record["datasets"]] == ["north", "south", "west"]
    lines = text.splitlines()
    assert [json.loads(line.rstrip(",")) for line in lines if line.startswith('  {"urn"')] == record["datasets"]
    assert lines[0] == "{" and lines[-1] == "}" and f' "run_id": "{record["run_id"]}",' in lines
    (branch,) = record["datasets"][0]["branches"]
    assert branch == {f.name: getattr(BranchOutput("fork_0", 40, 1, branch["bytes_written"]), f.name)
                      for f in dataclasses.fields(BranchOutput)}
    full = run_gpy_here("history", str(job.file), record["run_id"], "--json")
    assert full.returncode == 0, full.stderr
    assert json.loads(full.stdout)["datasets"] == record["datasets"]
