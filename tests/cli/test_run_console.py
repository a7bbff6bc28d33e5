"""`gpy run` for people at a terminal (a real pseudo-terminal): live progress, then a summary table; off a
terminal the same progress and summaries as JSON lines."""

from __future__ import annotations

import json
import re

from gobblin_py.runtime.execute.run_progress import RunProgress
from gobblin_py.runtime.execute.task_progress import TaskReport
from tests.support.cli import run_gpy
from tests.support.console import summary_cells
from tests.support.jobs import Job, write_csv
from tests.support.pty_run import run_gpy_in_pty


def _forked_job(tmp_path) -> Job:
    job = Job(tmp_path, extra="fork.branches=2\n")
    write_csv(job.data / "a.csv", 1)
    write_csv(job.data / "b.csv", 100)
    return job


def test_a_run_at_a_terminal_shows_live_progress_then_a_summary_table(tmp_path):
    job = _forked_job(tmp_path)
    result = run_gpy_in_pty("run", str(job.file), "--engine", "local")
    text = result.text
    assert result.returncode == 0, text
    # the live display, redrawn as the run goes (at least once before the end and once at it)
    assert result.raw.count("work units") >= 2, text
    assert "2/2" in text and "rows read 80" in text and "rows/s" in text, text
    assert "branch fork_0" in text and "branch fork_1" in text and "rows written 80" in text, text
    # the summary table: a row per branch with rows in and out, files, bytes, watermarks, duration, status
    header = next(line for line in text.splitlines() if "rows out" in line)
    for column in ("dataset", "status", "rows in", "branch", "files", "bytes", "watermark from → to", "duration"):
        assert column in header, header
    rows = [line for line in text.splitlines() if "fork_0" in line and "│" in line] + \
           [line for line in text.splitlines() if "fork_1" in line and "│" in line]
    assert len(rows) == 2, text
    first = summary_cells(header, rows[0])
    fork_0_bytes = sum(p.stat().st_size for p in (job.final / "fork_0").rglob("*.parquet"))
    assert {k: v for k, v in first.items() if k not in ("watermark from → to", "duration")} == {
        "dataset": '"" (default)', "status": "COMMITTED", "tasks": "2/2", "rows in": "80", "branch": "fork_0",
        "rows out": "80", "files": "2", "bytes": f"{fork_0_bytes:,}"}, rows[0]
    assert first["watermark from → to"].startswith("0 → "), rows[0]
    assert [c.strip() for c in rows[1].split("│")][6:8] == ["80", "2"], rows[1]  # rows out and files of fork_1
    # people see the display, not a line per task nor JSON
    assert "task_finished" not in text and '"event"' not in text, text
    assert "job_started" in text  # other events still print, above the display


def test_off_a_terminal_progress_and_summaries_are_json_lines(tmp_path):
    job = _forked_job(tmp_path)
    result = run_gpy("run", str(job.file), "--engine", "local")
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stderr.splitlines()]  # every line is JSON
    names = [e["event"] for e in events]
    assert {"job_started", "task_finished", "job_finished", "run_progress", "dataset_summary"} <= set(names)
    progress = [e for e in events if e["event"] == "run_progress"][-1]
    assert progress["work_units"] == progress["work_units_done"] == 2 and progress["work_units_failed"] == 0
    assert progress["rows_read"] == 80 and progress["rows_written"] == {"fork_0": 80, "fork_1": 80}
    summary = next(e for e in events if e["event"] == "dataset_summary")
    assert summary["state"] == "COMMITTED" and summary["records_read"] == 80 and summary["files"] == 4
    assert [(b["name"], b["records_written"], b["files"]) for b in summary["branches"]] == \
        [("fork_0", 80, 2), ("fork_1", 80, 2)]
    assert summary["watermark_from"] and summary["watermark_to"]
    assert result.stdout.startswith("job Orders ")  # the plain summary, as cron mail and Airflow logs had it
    assert "│" not in result.stdout and "\x1b[" not in result.stdout + result.stderr


def test_json_logs_asked_for_on_a_terminal_stay_json(tmp_path):
    job = _forked_job(tmp_path)
    result = run_gpy_in_pty("--log-format", "json", "run", str(job.file), "--engine", "local")
    assert result.returncode == 0, result.text
    logged = [line for line in result.text.splitlines() if line.startswith("{")]
    assert "run_progress" in {json.loads(line)["event"] for line in logged}, result.text
    assert "work units" not in result.text  # no live display mixed into the JSON lines


def test_progress_adds_up_tasks_and_branches_and_keeps_a_tasks_end():
    progress = RunProgress()
    progress.planned(3)
    progress.update(TaskReport("t0", "", 10, {"fork_0": 10, "fork_1": 4}))
    progress.update(TaskReport("t1", "", 5, {"fork_0": 5}))
    progress.update(TaskReport("t0", "", 20, {"fork_0": 20, "fork_1": 9}, "SUCCESSFUL"))
    progress.update(TaskReport("t0", "", 15, {"fork_0": 15}))  # a running report that arrived late
    progress.update(TaskReport("t1", "", 5, {"fork_0": 0}, "FAILED"))
    snap = progress.snapshot()
    assert (snap.planned, snap.done, snap.failed, snap.rows_read) == (3, 2, 1, 25)
    assert snap.written == {"fork_0": 20, "fork_1": 9}
    assert snap.as_json()["work_units_done"] == 2


def test_a_task_waiting_for_its_retry_shows_a_line_until_it_ends():
    progress = RunProgress()
    progress.planned(2)
    progress.update(TaskReport("task_Orders_17_3", "", 0, {}, None, "attempt 2 of 6 in 300 s — ConnectionRefusedError"))
    progress.update(TaskReport("task_Orders_17_3", "", 7, {"fork_0": 7}))  # the next attempt running
    progress.update(TaskReport("task_Orders_17_4", "", 5, {"fork_0": 5}))
    assert progress.snapshot().retries == ["task 3: attempt 2 of 6 in 300 s — ConnectionRefusedError"]
    progress.update(TaskReport("task_Orders_17_3", "", 9, {"fork_0": 9}, "SUCCESSFUL"))
    assert progress.snapshot().retries == []


def test_a_retry_shows_on_the_live_display(tmp_path):
    job = Job(tmp_path, extra=("converter.classes=tests.runtime.sample_plugins.FailAttempts\ntest.fail.attempts=2\n"
                               f"test.attempts.dir={tmp_path / 'attempts'}\ntask.maxretries=3\n"
                               "task.retry.intervalinsec=1\n"))
    write_csv(job.data / "a.csv", 1)
    result = run_gpy_in_pty("run", str(job.file), "--engine", "local")
    assert result.returncode == 0, result.text
    # the second retry waits 1 s: the display shows it meanwhile (the first, at once, may come and go unseen)
    assert re.search(r"task \d+: attempt 3 of 4 in 1 s — RuntimeError: this attempt fails on purpose \(unknown\)",
                     result.text), result.text
