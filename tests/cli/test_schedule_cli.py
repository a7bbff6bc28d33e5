"""`gpy schedule`: Gobblin's job.schedule as crontab lines and Airflow DAG files; validate and run warn of it."""

from __future__ import annotations

import ast
import os
import shlex
import subprocess
import sys

from tests.support.cli import run_gpy_here
from tests.support.jobs import Job, write_csv
from tests.support.paths import REPO
from tests.support.schedules import job_file


def test_crontab_prints_one_line_per_job_running_it_relative_to_the_jobs_root_with_the_dags_engine(tmp_path):
    job_file(tmp_path / "jobs", "Every2", "0 0/2 * * * ?")
    job_file(tmp_path / "jobs" / "weekly", "Sundays", "0 0 18 ? * Sunday")
    result = run_gpy_here("schedule", "jobs/Every2.pull", "jobs/weekly/Sundays.pull", "--crontab", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "# gpy schedule: job files and their relative paths are relative to GPY_JOBS_ROOT",
        f'GPY_JOBS_ROOT="{tmp_path}"',
        "# Every2: job.schedule=0 0/2 * * * ?",
        '*/2 * * * * cd "$GPY_JOBS_ROOT" && exec gpy run jobs/Every2.pull --engine spark --strict',
        "# Sundays: job.schedule=0 0 18 ? * Sunday",
        '0 18 * * 0 cd "$GPY_JOBS_ROOT" && exec gpy run jobs/weekly/Sundays.pull --engine spark --strict',
    ]


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


def test_airflow_writes_a_self_contained_dag_file_holding_no_path_of_this_machine(tmp_path):
    """The DAG names the job relative to the jobs root and finds gpy by its setting: nothing of this clone, this
    venv or this folder is in it, and it imports nothing but Airflow (no sys.path of a clone)."""
    job_file(tmp_path / "jobs", "Every2", "0 0/2 * * * ?")
    result = run_gpy_here("schedule", "jobs/Every2.pull", "--airflow", "dags", "--operator", "kubernetes",
                          "--engine", "local", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    written = tmp_path / "dags" / "gpy_Every2.py"
    source = written.read_text()
    compile(source, str(written), "exec")
    for local in (str(tmp_path), str(REPO), sys.executable, "sys.path"):
        assert local not in source
    tree = ast.parse(source)
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)
                for alias in (node.names if isinstance(node, ast.Import) else [ast.alias(node.module or "")])}
    assert imported <= {"__future__", "airflow", "datetime", "logging", "os", "shlex", "subprocess", "uuid",
                        "collections", "typing", "kubernetes"}, imported
    call = tree.body[-1].value
    args = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
    assert ast.literal_eval(call.args[0]) == "gpy_Every2"
    assert args["schedule"] == "*/2 * * * *" and args["job_file"] == "jobs/Every2.pull"
    assert (args["engine"], args["operator"], args["gpy"], args["wait_for"]) == ("local", "kubernetes", None, None)


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


def test_a_crontab_line_runs_the_job_in_the_jobs_root_whatever_folder_cron_starts_in(tmp_path):
    """A job with relative folders keeps one state and one published folder: cron starts in $HOME, not in the
    jobs root, and the line moves there first (GPY_JOBS_ROOT, as the crontab's variable line sets it)."""
    workdir, elsewhere = tmp_path / "work", tmp_path / "home"
    workdir.mkdir()
    elsewhere.mkdir()
    job = Job(workdir / "job", extra="state.store.dir=state\ndata.publisher.final.dir=published\n"
                                     "writer.staging.dir=staging\nwriter.output.dir=output\n")
    write_csv(job.data / "a.csv", 1)
    job.file.write_text(job.file.read_text() + "job.schedule=0 0 2 * * ?\n")
    printed = run_gpy_here("schedule", str(job.file), "--crontab", "--jobs-root", str(workdir), "--engine", "local",
                           "--gpy", shlex.join([sys.executable, "-m", "gobblin_py.cli"]))
    assert printed.returncode == 0, printed.stderr
    variable, line = [line for line in printed.stdout.splitlines() if not line.startswith("#")]
    name, _, value = variable.partition("=")
    command = line.split(" ", 5)[5]
    assert "--strict" in command and str(workdir) not in command
    ran = subprocess.run(["sh", "-c", command.replace("\\%", "%")], cwd=elsewhere, capture_output=True, text=True,
                         timeout=300, env={**os.environ, name: value.strip('"')})
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
