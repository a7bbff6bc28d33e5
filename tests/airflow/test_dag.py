"""jobs/airflow/gpy_dag.py under real Apache Airflow: `airflow dags test` runs gpy and the sensor, twice, and
the data lands and the state moves; gpy's exit codes become the task fates they should."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.conftest import REPO, run_gpy

pytestmark = pytest.mark.airflow
DAGS = REPO / "jobs" / "airflow"


def write_csv(path: Path, first_id: int, day: int, rows: int = 20) -> None:
    """Orders ``first_id`` … placed on 2026-01-<day>, one an hour from midnight."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("order_id,amount,ordered_at\n" + "".join(
        f"{first_id + i},{i * 0.5},2026-01-{day:02d}T{i:02d}:00:00Z\n" for i in range(rows)))


@pytest.fixture
def airflow(tmp_path, airflow_venv):
    """Runs the Airflow CLI of the cached environment with its own home (SQLite) and the repository's DAG."""
    home = tmp_path / "airflow-home"
    job = tmp_path / "job"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "GPY_", "PYTHONPATH"))},
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        # the DAG's settings, as Airflow Variables given by the environment
        "AIRFLOW_VAR_GPY_COMMAND": f"{sys.executable} -m gobblin_py.cli",
        "AIRFLOW_VAR_GPY_JOB_FILE": str(job / "orders.pull"),
        "AIRFLOW_VAR_GPY_WORKDIR": str(REPO),
        "AIRFLOW_VAR_GPY_ENGINE": "local",
        "GPY_SENSOR_POKE_SECONDS": "1",
        "GPY_SENSOR_TIMEOUT_SECONDS": "60",
    }

    def run(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
        return subprocess.run([str(airflow_venv / "bin" / "airflow"), *args], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=timeout)

    migrated = run("db", "migrate")
    assert migrated.returncode == 0, migrated.stdout[-2000:] + migrated.stderr[-2000:]
    run.env = env  # type: ignore[attr-defined]
    return run


def make_job(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "orders.pull").write_text("\n".join([
        "job.name=AirflowOrders",
        "source.class=gobblin_py.connectors.files.filebased.FileBasedSource",
        f"source.filebased.data.directory={root}/data",
        f"writer.staging.dir={root}/staging",
        f"writer.output.dir={root}/output",
        f"data.publisher.final.dir={root}/published",
        f"state.store.dir={root}/state",
        "writer.file.pathType=TABLENAME",
        "task.maxretries=0",
        "source.event.time.column=ordered_at",
        "",
    ]))
    return root / "orders.pull"


def published(root: Path) -> list[int]:
    return sorted(i for f in (root / "published").rglob("*.parquet") for i in pq.read_table(f).column("order_id").to_pylist())


def state(job_file: Path) -> dict:
    shown = run_gpy("state", "show", str(job_file), "--json")
    assert shown.returncode == 0, shown.stderr
    return json.loads(shown.stdout)["datasets"][0]


def test_dags_test_runs_gpy_then_the_sensor_sees_the_state_move(tmp_path, airflow):
    job_file = make_job(tmp_path / "job")
    lineage = tmp_path / "lineage.jsonl"  # gpy's OpenLineage events, through the client's file transport
    with job_file.open("a") as job:
        job.write(f"openlineage.transport.type=file\nopenlineage.transport.log_file_path={lineage}\n"
                  "openlineage.transport.append=true\n")
    write_csv(tmp_path / "job" / "data" / "day1.csv", 1, day=1)
    assert run_gpy("state", "show", str(job_file), "--json").returncode == 0
    assert json.loads(run_gpy("state", "show", str(job_file), "--json").stdout)["datasets"] == []  # no state yet

    # the run for noon of January 1st: its sensor waits until the orders are complete up to then
    first = airflow("dags", "test", "gpy_ingest", "2026-01-01T12:00:00+00:00")
    log = first.stdout + first.stderr
    assert first.returncode == 0, log[-4000:]
    assert "state=success" in log and "Success criteria met" in log
    assert published(tmp_path / "job") == list(range(1, 21))
    before = state(job_file)
    assert before["state"] == "COMMITTED"
    # the DAG passed its task's run as the parent of gpy's run
    events = [json.loads(line) for line in lineage.read_text().splitlines()]
    assert [e["eventType"] for e in events] == ["START", "COMPLETE"]
    parents = [e["run"]["facets"]["parent"] for e in events]
    assert parents[0] == parents[1]
    assert (parents[0]["job"]["namespace"], parents[0]["job"]["name"]) == ("default", "gpy_ingest.gpy_run")
    assert uuid.UUID(parents[0]["run"]["runId"]) and parents[0]["run"]["runId"] != events[0]["run"]["runId"]

    write_csv(tmp_path / "job" / "data" / "day2.csv", 101, day=2)
    second = airflow("dags", "test", "gpy_ingest", "2026-01-02T12:00:00+00:00")
    assert second.returncode == 0, (second.stdout + second.stderr)[-4000:]
    assert published(tmp_path / "job") == list(range(1, 21)) + list(range(101, 121))
    after = state(job_file)
    assert after["job_id"] != before["job_id"] and after["end_time"] > before["end_time"]  # the state moved
    assert after["tasks"][0]["low_watermark"] == before["tasks"][0]["actual_high_watermark"]
    assert [t["records_extracted"] for t in after["tasks"]] == [20]


# Runs in the Airflow environment: the DAG's operator and sensor callable with real commands, Airflow's exceptions.
FATES = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import gpy_dag
from airflow.sdk.exceptions import AirflowException, AirflowFailException
assert isinstance(gpy_dag.dag.get_task("gpy_run"), gpy_dag.BashOperator)
fates = {}
for code in (0, 3, 75, 143, 130, 1, 2, 4, 65):
    try:
        gpy_dag.GpyRunOperator(task_id=f"exit_{code}", command=["sh", "-c", f"echo gpy output; exit {code}"],
                               cwd=".").execute({})
        fates[code] = "success"
    except AirflowFailException:
        fates[code] = "fail"
    except AirflowException:
        fates[code] = "retry"
import os
os.environ["AIRFLOW_VAR_GPY_COMMAND"] = sys.argv[2]
os.environ["AIRFLOW_VAR_GPY_WORKDIR"] = "."
for job_name, job in (("run", sys.argv[3]), ("never_run", sys.argv[4])):
    os.environ["AIRFLOW_VAR_GPY_JOB_FILE"] = job
    for wait_for, past, future in (("completeness", "2026-01-01T10:00:00+00:00", "2026-01-01T20:00:00+00:00"),
                                   ("commit", "2000-01-01T00:00:00+00:00", "2100-01-01T00:00:00+00:00")):
        fates[f"{job_name} {wait_for} past"] = gpy_dag.state_reached(past, wait_for=wait_for)
        fates[f"{job_name} {wait_for} future"] = gpy_dag.state_reached(future, wait_for=wait_for)
print(json.dumps(fates))
"""


def test_exit_codes_become_task_fates_and_the_sensor_judges_the_state(tmp_path, airflow, airflow_venv):
    job_file = make_job(tmp_path / "job")
    write_csv(tmp_path / "job" / "data" / "day1.csv", 1, day=1)  # complete up to 2026-01-01T19:00Z
    assert run_gpy("run", str(job_file), "--engine", "local").returncode == 0
    empty = make_job(tmp_path / "never-run")
    result = subprocess.run([str(airflow_venv / "bin" / "python"), "-c", FATES, str(DAGS),
                             f"{sys.executable} -m gobblin_py.cli", str(job_file), str(empty)],
                            env=airflow.env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    fates = json.loads(result.stdout.strip().splitlines()[-1])
    assert fates == {"0": "success", "3": "success", "75": "retry", "143": "retry", "130": "retry", "1": "retry",
                     "2": "fail", "4": "retry", "65": "fail",
                     "run completeness past": True, "run completeness future": False,
                     "run commit past": True, "run commit future": False,
                     "never_run completeness past": False, "never_run completeness future": False,
                     "never_run commit past": False, "never_run commit future": False}
    assert "gpy exited 3: committed, but some tasks failed" in result.stderr + result.stdout


# Runs in the Airflow environment: Airflow's own DagBag parses the DAG files `gpy schedule --airflow` wrote, and
# the tasks' templates are rendered as for a run: the job's path and folder must reach gpy as written.
PARSE = r"""
import datetime, json, sys
from airflow.dag_processing.dagbag import DagBag
bag = DagBag(dag_folder=sys.argv[1])
rendered = {}
for i, d in bag.dags.items():
    run, sensor = d.get_task("gpy_run"), d.get_task("wait_for_state")
    context = {"ds": "RENDERED", "data_interval_end": datetime.datetime(2026, 1, 2), "logical_date": None}
    run.render_template_fields(context)
    sensor.render_template_fields(context)
    rendered[i] = {"cwd": run.cwd, "at": sensor.op_kwargs["at"],
                   "sensor": {k: getattr(sensor.python_callable, "settings", sensor.op_kwargs)[k]
                              for k in ("job_file", "cwd")}}
print(json.dumps({"errors": bag.import_errors, "rendered": rendered,
                  "dags": {i: {"schedule": str(d.schedule), "tasks": sorted(d.task_ids),
                               "job": d.get_task("gpy_run").gpy_job_file} for i, d in bag.dags.items()}}))
"""


def test_gpy_schedule_writes_dags_airflow_parses_with_each_jobs_schedule(tmp_path, airflow, airflow_venv):
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    (jobs / "every2.pull").write_text("job.name=Every2\nsource.class=FileBasedSource\njob.schedule=0 0/2 * * * ?\n")
    (jobs / "sundays.pull").write_text("job.name=Sundays\nsource.class=FileBasedSource\n"
                                       "job.schedule=0 0 18 ? * Sunday\n")
    # a path Python, Jinja and a docstring each read differently: quotes, backslashes, {{ }}
    hostile = jobs / 'q"""; open("PWNED", "w"); """ \\N{a} {{ ds }}'
    hostile.mkdir()
    (hostile / "hostile.pull").write_text("job.name=Hostile\nsource.class=FileBasedSource\njob.schedule=0 0 3 * * ?\n")
    workdir = tmp_path / "work {{ ds }}"
    workdir.mkdir()
    written = run_gpy("schedule", str(jobs / "every2.pull"), str(jobs / "sundays.pull"), str(hostile / "hostile.pull"),
                      "--airflow", str(tmp_path / "dags"), cwd=workdir)
    assert written.returncode == 0, written.stderr
    result = subprocess.run([str(airflow_venv / "bin" / "python"), "-c", PARSE, str(tmp_path / "dags")],
                            env=airflow.env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    parsed = json.loads(result.stdout.strip().splitlines()[-1])
    assert parsed["errors"] == {}
    assert parsed["dags"] == {
        "gpy_Every2": {"schedule": "*/2 * * * *", "tasks": ["gpy_run", "wait_for_state"],
                       "job": str(jobs / "every2.pull")},
        "gpy_Sundays": {"schedule": "0 18 * * 0", "tasks": ["gpy_run", "wait_for_state"],
                        "job": str(jobs / "sundays.pull")},
        "gpy_Hostile": {"schedule": "0 3 * * *", "tasks": ["gpy_run", "wait_for_state"],
                        "job": str(hostile / "hostile.pull")},
    }
    assert parsed["rendered"]["gpy_Hostile"] == {
        "cwd": str(workdir), "at": "2026-01-02T00:00:00",
        "sensor": {"job_file": str(hostile / "hostile.pull"), "cwd": str(workdir)}}
    assert not list(tmp_path.rglob("PWNED"))
