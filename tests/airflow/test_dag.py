"""The DAG files `gpy schedule --airflow` writes, under real Apache Airflow 3 and 2 with the Kubernetes and Spark
providers: every operator's DAG loads in Airflow's DagBag; the Bash one runs an SQL job with ``dag.test()`` and its
sensor sees every table complete; gpy's exit codes become the task fates they should."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.support.cli import run_gpy_here
from tests.support.paths import REPO

pytestmark = pytest.mark.airflow
GPY = f"{sys.executable} -m gobblin_py.cli"


@pytest.fixture(scope="session", params=["airflow3", "airflow2"])
def airflow(request, tmp_path_factory):
    """(the environment's folder, an Airflow home whose SQLite database is migrated), once per Airflow version."""
    folder = request.getfixturevalue("airflow_venv" if request.param == "airflow3" else "airflow2_venv")
    home = tmp_path_factory.mktemp(f"{request.param}-home")
    migrated = subprocess.run([str(folder / "bin" / "airflow"), "db", "migrate"], env=airflow_env(home, home),
                              capture_output=True, text=True, timeout=300)
    assert migrated.returncode == 0, migrated.stdout[-2000:] + migrated.stderr[-2000:]
    return folder, home


def airflow_env(home: Path, dags: Path, **variables: str) -> dict[str, str]:
    """Airflow's environment: its own home and DAGs folder, and the DAG's settings as Airflow Variables."""
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "GPY_", "PYTHONPATH"))},
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__DAGS_FOLDER": str(dags),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        **{f"AIRFLOW_{'' if name.startswith('conn_') else 'VAR_'}{name.upper()}": value
           for name, value in variables.items()},
        "GPY_SENSOR_POKE_SECONDS": "1",
        "GPY_SENSOR_TIMEOUT_SECONDS": "60",
    }


def in_airflow(airflow, script: str, *args: str, dags: Path, env: dict[str, str] | None = None,
               **variables: str) -> dict:
    """Runs ``script`` with the environment's Python; the JSON its last line prints."""
    folder, home = airflow
    done = subprocess.run([str(folder / "bin" / "python"), "-c", script, *args],
                          env={**airflow_env(home, dags, **variables), **(env or {})},
                          cwd=home, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def sql_job(root: Path) -> Path:
    """jobs/sqlite_incremental.pull (three tables: orders by a time delta column, customers by id, products as a
    snapshot) under ``root`` with its sample database, on a schedule, sending OpenLineage events to a file."""
    (root / "jobs").mkdir(parents=True)
    job = root / "jobs" / "sqlite_incremental.pull"
    shutil.copy(REPO / "jobs" / "sqlite_incremental.pull", job)
    with job.open("a") as out:
        out.write("\njob.schedule=0 0 * * * ?\nopenlineage.transport.type=file\n"
                  "openlineage.transport.log_file_path=lineage.jsonl\nopenlineage.transport.append=true\n")
    made = subprocess.run([sys.executable, str(REPO / "scripts" / "make_sqlite_sample.py")], cwd=root,
                          capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    return job


# Airflow's own DagBag parses the DAG files; the tasks' templates are rendered as for a run: the job's path must
# reach gpy as written.
PARSE = r"""
import datetime, json, sys
try:
    from airflow.dag_processing.dagbag import DagBag
except ImportError:  # Airflow 2
    from airflow.models.dagbag import DagBag
found = {}
for folder in sys.argv[1:]:
    bag = DagBag(dag_folder=folder)
    for i, d in bag.dags.items():
        run = d.get_task("gpy_run")
        context = {"ds": "RENDERED", "data_interval_end": datetime.datetime(2026, 1, 2), "logical_date": None}
        run.render_template_fields(context)
        sensor = {}
        if "wait_for_complete" in d.task_ids:
            task = d.get_task("wait_for_complete")
            task.render_template_fields(context)
            sensor = {"at": task.op_kwargs["at"], "job_file": task.python_callable.settings["job_file"]}
        started = None  # what the Kubernetes and Spark operators would start, their settings read as for a run
        if hasattr(run, "gpy_prepare"):
            run.gpy_prepare({})
            if hasattr(run, "build_pod_request_obj"):
                pod = run.build_pod_request_obj({})
                started = [pod.spec.containers[0].image, *pod.spec.containers[0].command, *pod.spec.containers[0].args]
            else:
                started = run._get_hook()._build_spark_submit_command(run.application)
        found[f"{folder.rsplit('/', 1)[-1]}/{i}"] = {
            "schedule": str(d.schedule_interval if hasattr(d, "schedule_interval") else d.schedule),
            "tasks": sorted(d.task_ids), "base": type(run).__mro__[1].__name__,
            "sensor": sensor, "started": started, "errors": bag.import_errors}
print(json.dumps(found))
"""


def test_every_operators_dag_loads_in_a_real_dagbag_with_the_providers(tmp_path, airflow):
    root = tmp_path / "root"
    root.mkdir()
    job = root / "sqlite_incremental.pull"
    job.write_text("job.name=SqliteIncremental\nsource.class=QueryBasedSource\njob.schedule=0 0 * * * ?\n")
    # a path Python, Jinja and a docstring each read differently: quotes, backslashes, {{ }}
    hostile = root / 'q"""; open("PWNED", "w"); """ \\N{a} {{ ds }}'
    hostile.mkdir()
    (hostile / "hostile.pull").write_text("job.name=Hostile\nsource.class=FileBasedSource\njob.schedule=0 0 3 * * ?\n")
    for operator in ("bash", "kubernetes", "spark"):
        written = run_gpy_here("schedule", str(job), str(hostile / "hostile.pull"), "--airflow", str(tmp_path / operator),
                          "--operator", operator, *(["--wait-complete"] if operator == "bash" else []), cwd=root)
        assert written.returncode == 0, written.stderr
    kubeconfig = tmp_path / "kubeconfig"  # a cluster nothing connects to: the pod is built, not started
    kubeconfig.write_text("apiVersion: v1\nkind: Config\ncurrent-context: x\n"
                          "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:9'}}]\n"
                          "users: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\n")
    found = in_airflow(airflow, PARSE, *(str(tmp_path / o) for o in ("bash", "kubernetes", "spark")), dags=tmp_path,
                       env={"KUBECONFIG": str(kubeconfig)}, gpy_image="registry/gpy:1",
                       gpy_archive="s3://b/gpy.tar.gz", gpy_spark_application="/opt/gpy/__main__.py",
                       conn_spark_default="spark://master:7077", gpy_jobs_root="/srv/gpy")
    assert {name: (dag["errors"], dag["tasks"], dag["schedule"]) for name, dag in found.items()} == {
        f"{operator}/gpy_{name}": ({}, ["gpy_run", "wait_for_complete"] if operator == "bash" else ["gpy_run"], cron)
        for operator in ("bash", "kubernetes", "spark")
        for name, cron in (("SqliteIncremental", "0 * * * *"), ("Hostile", "0 3 * * *"))}
    assert {name.split("/")[0]: dag["base"] for name, dag in found.items()} == {
        "bash": "BashOperator", "kubernetes": "KubernetesPodOperator", "spark": "SparkSubmitOperator"}
    assert found["bash/gpy_Hostile"]["sensor"] == {"at": "2026-01-02T00:00:00", "job_file": f"{hostile.name}/hostile.pull"}
    gpy_words = ["--log-format", "json", "run", "sqlite_incremental.pull", "--engine", "spark", "--strict"]
    assert found["kubernetes/gpy_SqliteIncremental"]["started"] == ["registry/gpy:1", "gpy", *gpy_words]
    assert found["spark/gpy_SqliteIncremental"]["started"] == [
        "spark-submit", "--master", "spark://master:7077", "--conf", "spark.pyspark.python=./environment/bin/python",
        "--archives", "s3://b/gpy.tar.gz#environment", "--name", "arrow-spark", "/opt/gpy/__main__.py",
        *gpy_words[:3], "/srv/gpy/sqlite_incremental.pull", *gpy_words[4:]]
    assert found["kubernetes/gpy_Hostile"]["started"][5] == f"{hostile.name}/hostile.pull"
    assert not list(tmp_path.rglob("PWNED"))


DAG_TEST = r"""
import datetime, json, sys
try:
    from airflow.dag_processing.dagbag import DagBag
except ImportError:  # Airflow 2
    from airflow.models.dagbag import DagBag
bag = DagBag(dag_folder=sys.argv[1])
assert not bag.import_errors, bag.import_errors
[dag] = bag.dags.values()
when = datetime.datetime.fromisoformat(sys.argv[2])
try:
    run = dag.test(logical_date=when)
except TypeError:  # Airflow 2
    run = dag.test(execution_date=when)
print(json.dumps({"state": str(run.state), "tasks": {ti.task_id: str(ti.state) for ti in run.get_task_instances()}}))
"""


def test_the_bash_dag_runs_an_sql_job_with_dag_test_and_its_sensor_sees_every_table_complete(tmp_path, airflow):
    """Before, the sensor asked for the default dataset "", which an SQL job does not have, and failed each poke."""
    root = tmp_path / "root"
    sql_job(root)
    written = run_gpy_here("schedule", "jobs/sqlite_incremental.pull", "--airflow", str(tmp_path / "dags"),
                           "--wait-complete", "--engine", "local", cwd=root)
    assert written.returncode == 0, written.stderr
    shutil.copytree(root, tmp_path / "moved")  # the jobs root moves: the DAG follows its setting, not a path
    shutil.rmtree(root)
    moved = tmp_path / "moved"
    # orders' updated_at runs to 2026-11-08T06:20Z: complete up to 06:00, not yet up to 07:00
    ran = in_airflow(airflow, DAG_TEST, str(tmp_path / "dags"), "2026-11-08T06:00:00+00:00", dags=tmp_path / "dags",
                     gpy_jobs_root=str(moved), gpy_command=GPY)
    assert ran == {"state": "success", "tasks": {"gpy_run": "success", "wait_for_complete": "success"}}
    shown = json.loads(run_gpy_here("state", "show", "jobs/sqlite_incremental.pull", "--json", cwd=moved).stdout)
    assert {d["urn"]: d["state"] for d in shown["datasets"]} == {"customers": "COMMITTED", "orders": "COMMITTED",
                                                                 "products": "COMMITTED"}
    assert all(list(Path(p).iterdir()) for d in shown["datasets"] for p in d["published"])
    # the DAG passed its task's run as the parent of gpy's run
    events = [json.loads(line) for line in (moved / "lineage.jsonl").read_text().splitlines()]
    parents = {json.dumps(e["run"]["facets"]["parent"], sort_keys=True) for e in events}
    [parent] = [json.loads(p) for p in parents]
    assert (parent["job"]["namespace"], parent["job"]["name"]) == ("default", "gpy_SqliteIncremental.gpy_run")
    assert uuid.UUID(parent["run"]["runId"])
    later = run_gpy_here("state", "watermark", "jobs/sqlite_incremental.pull", "--at", "2026-11-08T07:00:00Z",
                         cwd=moved)
    assert later.returncode == 1 and "not yet ('orders')" in later.stdout


# Runs in the Airflow environment: the DAG's operator and sensor callable with real commands, Airflow's exceptions.
FATES = r"""
import json, os, sys
sys.path.insert(0, sys.argv[1])
import gpy_dag
from gpy_dag import AirflowException, AirflowFailException
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
for job_name, job, when in (("timed", sys.argv[2], "10:00"), ("timed", sys.argv[2], "20:00"),
                            ("never_run", sys.argv[3], "10:00"), ("untimed", sys.argv[4], "10:00")):
    os.environ["AIRFLOW_VAR_GPY_JOB_FILE"] = job
    try:
        fates[f"{job_name} {when}"] = gpy_dag.complete_up_to(f"2026-01-01T{when}:00+00:00")
    except AirflowFailException:
        fates[f"{job_name} {when}"] = "fail"
del os.environ["AIRFLOW_VAR_GPY_JOBS_ROOT"]  # a DAG whose jobs root is not set fails at once, saying which setting
try:
    gpy_dag.GpyRunOperator(task_id="no_root", job_file="orders.pull").execute({})
except AirflowFailException as exc:
    fates["no jobs root"] = str(exc)
print(json.dumps(fates))
"""


def test_exit_codes_become_task_fates_and_the_sensor_judges_completeness(tmp_path, airflow):
    jobs = {}
    for name, event_time in (("timed", True), ("never_run", True), ("untimed", False)):
        folder = tmp_path / name
        (folder / "data").mkdir(parents=True)
        (folder / "data" / "day1.csv").write_text("order_id,amount,ordered_at\n" + "".join(
            f"{i},{i * 0.5},2026-01-01T{i:02d}:00:00Z\n" for i in range(20)))  # complete up to 19:00Z
        (folder / "orders.pull").write_text("\n".join([
            "job.name=AirflowOrders", "source.class=gobblin_py.connectors.files.filebased.FileBasedSource",
            f"source.filebased.data.directory={folder}/data", f"writer.staging.dir={folder}/staging",
            f"writer.output.dir={folder}/output", f"data.publisher.final.dir={folder}/published",
            f"state.store.dir={folder}/state", "task.maxretries=0",
            *(["source.event.time.column=ordered_at"] if event_time else []), ""]))
        jobs[name] = folder / "orders.pull"
        if name != "never_run":
            assert run_gpy_here("run", str(jobs[name]), "--engine", "local").returncode == 0
    fates = in_airflow(airflow, FATES, str(REPO / "jobs" / "airflow"), *(str(jobs[n]) for n in jobs), dags=tmp_path,
                       gpy_command=GPY, gpy_jobs_root=str(tmp_path))
    assert fates == {"0": "success", "3": "success", "75": "retry", "143": "retry", "130": "retry", "1": "retry",
                     "2": "fail", "4": "retry", "65": "fail",
                     "timed 10:00": True, "timed 20:00": False, "never_run 10:00": False, "untimed 10:00": "fail",
                     "no jobs root": "set the Airflow Variable gpy_jobs_root (or the environment variable "
                                     "GPY_JOBS_ROOT) to the folder the job files (and their relative paths) are "
                                     "relative to"}
