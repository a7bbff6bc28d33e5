"""`gpy schedule`: Gobblin's job.schedule as crontab lines and Airflow DAG files; validate and run warn of it."""

from __future__ import annotations

import ast
import shlex
import subprocess
import sys
from pathlib import Path

from tests.conftest import run_gpy_here
from tests.runtime.test_run_cli import Job, write_csv


def job_file(folder: Path, name: str, schedule: str | None, *more: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.pull"
    lines = [f"job.name={name}", "source.class=FileBasedSource", *more]
    if schedule is not None:
        lines.append(f"job.schedule={schedule}")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_crontab_prints_one_line_per_job_running_gpy_run_on_the_absolute_job_path(tmp_path):
    every2 = job_file(tmp_path / "jobs", "Every2", "0 0/2 * * * ?")
    sundays = job_file(tmp_path / "jobs" / "weekly", "Sundays", "0 0 18 ? * Sunday")
    result = run_gpy_here("schedule", "jobs/Every2.pull", "jobs/weekly/Sundays.pull", "--crontab", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if not line.startswith("#")]
    gpy = shlex.join([sys.executable, "-m", "gobblin_py.cli"])
    assert lines == [
        f"*/2 * * * * cd {tmp_path} && exec {gpy} run {every2}",
        f"0 18 * * 0 cd {tmp_path} && exec {gpy} run {sundays}",
    ]
    assert "# Every2: job.schedule=0 0/2 * * * ?" in result.stdout


def test_a_schedule_cron_cannot_say_is_refused_per_job_and_nothing_is_printed(tmp_path):
    good = job_file(tmp_path, "Good", "0 0/2 * * * ?")
    seconds = job_file(tmp_path, "Seconds", "30 0 * * * ?")
    last = job_file(tmp_path, "Last", "0 0 0 L * ?")
    unset = job_file(tmp_path, "Unset", None)
    result = run_gpy_here("schedule", str(good), str(seconds), str(last), str(unset), "--crontab")
    assert result.returncode == 2
    assert result.stdout == ""
    assert f"{seconds}: job.schedule=30 0 * * * ?: seconds field '30'" in result.stderr
    assert f"{last}: job.schedule=0 0 0 L * ?: day-of-month field 'L': cron has no 'L'" in result.stderr
    assert f"{unset}: key 'job.schedule': is not set" in result.stderr
    assert "3 of 4 jobs not scheduled; nothing written" in result.stderr


def test_disabled_and_run_once_jobs_are_not_scheduled(tmp_path):
    disabled = job_file(tmp_path, "Off", "0 0 * * * ?", "job.disabled=true")
    once = job_file(tmp_path, "Once", "0 0 * * * ?", "job.runonce=true")
    result = run_gpy_here("schedule", str(disabled), str(once), "--crontab")
    assert result.returncode == 2 and result.stdout == ""
    assert "job.disabled=true" in result.stderr and "job.runonce=true" in result.stderr


def test_airflow_writes_a_thin_dag_file_per_job_with_its_schedule(tmp_path):
    every2 = job_file(tmp_path / "jobs", "Every2", "0 0/2 * * * ?")
    result = run_gpy_here("schedule", str(every2), "--airflow", str(tmp_path / "dags"))
    assert result.returncode == 0, result.stderr
    written = tmp_path / "dags" / "gpy_Every2.py"
    source = written.read_text()
    compile(source, str(written), "exec")
    tree = ast.parse(source)
    [imported] = [n for n in tree.body if isinstance(n, ast.ImportFrom)]
    assert (imported.module, [a.name for a in imported.names]) == ("gpy_dag", ["gpy_job_dag"])
    [call] = [n.value for n in tree.body if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)]
    args = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
    assert ast.literal_eval(call.args[0]) == "gpy_Every2"
    assert args["schedule"] == "*/2 * * * *" and args["job_file"] == str(every2)
    assert args["gpy"] == shlex.join([sys.executable, "-m", "gobblin_py.cli"])
    [path_insert] = [n for n in tree.body if isinstance(n, ast.Expr)][1:]  # (after the docstring)
    assert Path(ast.literal_eval(path_insert.value.args[1]), "gpy_dag.py").is_file()


def test_validate_and_run_warn_that_gpy_does_not_schedule_the_job(tmp_path):
    job = Job(tmp_path, extra="job.schedule=0 0/2 * * * ?\n")
    write_csv(job.data / "a.csv", 1)
    validated = run_gpy_here("validate", str(job.file))
    assert validated.returncode == 0, validated.stdout + validated.stderr
    assert "key 'job.schedule' (0 0/2 * * * ?): gpy does not schedule jobs itself" in validated.stdout
    assert "gpy schedule JOB --crontab" in validated.stdout
    ran = run_gpy_here("run", str(job.file), "--engine", "local")
    assert ran.returncode == 0, ran.stderr
    assert "gpy does not schedule jobs itself" in ran.stderr
    assert job.published_ids() == list(range(1, 41))


def test_a_crontab_line_runs_the_job_where_gpy_schedule_ran_whatever_folder_cron_starts_in(tmp_path):
    """A job with relative folders keeps one state and one published folder: cron starts in $HOME, not where
    the job was scheduled, and the line moves there first."""
    workdir, elsewhere = tmp_path / "work", tmp_path / "home"
    workdir.mkdir()
    elsewhere.mkdir()
    job = Job(tmp_path / "job", extra="state.store.dir=state\ndata.publisher.final.dir=published\n"
                                      "writer.staging.dir=staging\nwriter.output.dir=output\n")
    write_csv(job.data / "a.csv", 1)
    job.file.write_text(job.file.read_text() + "job.schedule=0 0 2 * * ?\n")
    printed = run_gpy_here("schedule", str(job.file), "--crontab", cwd=workdir)
    assert printed.returncode == 0, printed.stderr
    [line] = [line for line in printed.stdout.splitlines() if not line.startswith("#")]
    command = line.split(" ", 5)[5] + " --engine local"
    ran = subprocess.run(["sh", "-c", command.replace("\\%", "%")], cwd=elsewhere, capture_output=True, text=True,
                         timeout=300)
    assert ran.returncode == 0, ran.stderr
    assert (workdir / "state" / "Orders").is_dir() and list((workdir / "published").rglob("*.parquet"))
    assert list(elsewhere.iterdir()) == []


def test_watermark_at_without_a_dataset_judges_the_jobs_own_datasets_and_refuses_when_none_has_event_times(tmp_path):
    """What the DAG's completeness sensor asks: not the default dataset "" (an SQL or Kafka job has none), but
    every dataset the job committed; a job whose datasets carry no event times can never be complete (exit 2)."""
    job = Job(tmp_path)
    write_csv(job.data / "a.csv", 1)
    before = run_gpy_here("state", "watermark", str(job.file), "--at", "2026-01-01T00:00:00Z")
    assert before.returncode == 1 and "no dataset state yet" in before.stdout
    assert run_gpy_here("run", str(job.file), "--engine", "local").returncode == 0
    after = run_gpy_here("state", "watermark", str(job.file), "--at", "2026-01-01T00:00:00Z")
    assert after.returncode == 2, after.stdout + after.stderr
    assert "Orders dataset '': no event times (not judged)" in after.stdout
    assert "none of its datasets ('') carries event times" in after.stderr
