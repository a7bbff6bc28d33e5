"""An Airflow DAG that runs a gpy job and waits until the job's state shows the data landed.

    gpy_run  ──▶  wait_for_state

``gpy_run`` runs ``gpy run JOB_FILE`` and maps its exit code (gpy's exit codes are in the README):

    0          success
    3          success, with a WARNING in the task log: committed, but some tasks failed (retried next run)
    75         retry later: another run of the job holds its lock (Airflow retries after retry_delay)
    143, 130   retry: the run was stopped by SIGTERM / SIGINT, nothing half done
    1          retry: the run failed (a dataset was not committed); fails once the retries are used up
    2          fail at once, no retry: bad configuration or usage, or a corrupt state file (a person must fix it)
    4          retry: the source found nothing to pull and the job sets job.fail.on.empty (the data may still come)

``gpy_run`` passes its own run to gpy as the OpenLineage parent run (``OPENLINEAGE_PARENT_ID``), so a job that
sends OpenLineage events shows under this DAG's task in Marquez.

A plain BashOperator retries every non-zero exit alike; ``GpyRunOperator`` is a BashOperator that reads gpy's
exit code after the command ends, to tell "try again later" from "fix the job first". ``wait_for_state`` waits for the DAG run's data interval end (or its logical date, for a run
without one), T, in one of two ways (``gpy_wait_for``):

    completeness   ``gpy state watermark JOB_FILE --dataset URN --at T`` exits 0: every record with an event
                   time before T is committed, in every partition of the dataset (needs event times:
                   ``source.event.time.column``, a Kafka record's timestamp, an SQL table's time delta column)
    commit         ``gpy state show JOB_FILE --dataset URN --json``: the dataset's latest run is COMMITTED and
                   ended at or after T (for jobs whose records carry no event time)

Settings are Airflow Variables, read when the tasks run (``AIRFLOW_VAR_<NAME>`` environment variables work
too), else environment variables of the same name in capitals, else the defaults:

    gpy_command    GPY_COMMAND    gpy                          the command (e.g. /opt/gpy/.venv/bin/gpy)
    gpy_job_file   GPY_JOB_FILE   <repository>/jobs/quickstart.pull
    gpy_workdir    GPY_WORKDIR    <repository>                 where gpy runs (relative paths of the job)
    gpy_engine     GPY_ENGINE     local                        local or spark
    gpy_dataset    GPY_DATASET    (the default dataset "")     the dataset URN the sensor waits on
    gpy_wait_for   GPY_WAIT_FOR   completeness                 completeness or commit (see above)
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import shlex
import subprocess
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from airflow.sdk import DAG, Variable
from airflow.sdk.exceptions import AirflowException, AirflowFailException
from airflow.providers.standard.operators.bash import BashOperator
from airflow.providers.standard.sensors.python import PythonSensor

log = logging.getLogger(__name__)

REPOSITORY = Path(__file__).resolve().parents[2]
DEFAULTS = {
    "gpy_command": "gpy",
    "gpy_job_file": str(REPOSITORY / "jobs" / "quickstart.pull"),
    "gpy_workdir": str(REPOSITORY),
    "gpy_engine": "local",
    "gpy_dataset": "",
    "gpy_wait_for": "completeness",
}

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_PARTIAL, EXIT_EMPTY, EXIT_DATA, EXIT_LOCKED = 0, 1, 2, 3, 4, 65, 75
EXIT_SIGTERM, EXIT_SIGINT = 143, 130
PARENT_ENV = "OPENLINEAGE_PARENT_ID"  # what gpy reads for its OpenLineage events' parent run


def setting(name: str) -> str:
    """An Airflow Variable, else the environment variable of the same name in capitals, else the default."""
    fallback = os.environ.get(name.upper(), DEFAULTS[name])
    return str(Variable.get(name, default=fallback))


def _gpy(*args: str, gpy: str | None = None) -> list[str]:
    return [*shlex.split(gpy or setting("gpy_command")), *args]


class GpyRunOperator(BashOperator):
    """A BashOperator that runs ``gpy run`` (or ``command``) and turns gpy's exit code into the task's fate.

    The command is built when the task runs, from the settings then in force (``job_file``, ``engine`` and
    ``gpy``, when given, fix the job, the engine and the gpy command instead); its output goes to the task log.
    Only ``env`` is a Jinja template: the working folder and the command reach gpy as given, so a path holding
    ``{{ }}`` is never rendered.
    """

    template_fields: Sequence[str] = ("env",)

    def __init__(self, *, command: list[str] | None = None, job_file: str | None = None, engine: str | None = None,
                 gpy: str | None = None, conf_args: list[str] | None = None, **kwargs: Any) -> None:
        super().__init__(bash_command="true", skip_on_exit_code=None, **kwargs)  # the real command: at run time
        self.gpy_command = command
        self.gpy_job_file, self.gpy_engine, self.gpy = job_file, engine, gpy
        self.gpy_conf_args = list(conf_args or [])  # --conf-root / --sysconfig

    def execute(self, context: Any) -> int:
        parent = lineage_parent_id(context)
        if parent and PARENT_ENV not in (self.env or os.environ):  # gpy's OpenLineage events name this task's run
            self.env = {**(self.env or os.environ), PARENT_ENV: parent}
        command = self.gpy_command or _gpy("--log-format", "json", "run", self.gpy_job_file or setting("gpy_job_file"),
                                           "--engine", self.gpy_engine or setting("gpy_engine"), *self.gpy_conf_args,
                                           gpy=self.gpy)
        self.bash_command = "exec " + shlex.join(command)  # exec: gpy itself receives Airflow's SIGTERM
        self.cwd = self.cwd or setting("gpy_workdir")
        try:
            super().execute(context)
        except AirflowException:
            process = self.subprocess_hook.sub_process
            if process is None or process.returncode is None:
                raise
            return judge(process.returncode)
        return judge(EXIT_OK)


def lineage_parent_id(context: Any) -> str | None:
    """``<namespace>/<dag id>.<task id>/<run id>`` of this task's run, for gpy's OpenLineage parent run facet: the
    OpenLineage provider's own when it is installed, else a UUID derived from the DAG run, task and try (None
    outside a task run)."""
    ti = (context.get("ti") or context.get("task_instance")) if hasattr(context, "get") else None
    if ti is None:
        return None
    try:
        from airflow.providers.openlineage.plugins.macros import lineage_parent_id as provider_parent_id
    except ImportError:
        namespace = os.environ.get("OPENLINEAGE_NAMESPACE", "default")
        run = uuid.uuid5(uuid.NAMESPACE_URL, f"airflow:{ti.dag_id}.{ti.task_id}:{ti.run_id}:{ti.try_number}")
        return f"{namespace}/{ti.dag_id}.{ti.task_id}/{run}"
    return str(provider_parent_id(ti))


def judge(code: int) -> int:
    """The task's fate for a gpy exit code: return (success), AirflowException (retried), AirflowFailException."""
    if code == EXIT_OK:
        return code
    if code == EXIT_PARTIAL:
        log.warning("gpy exited 3: committed, but some tasks failed; their work units are retried by the next run")
        return code
    if code == EXIT_LOCKED:
        raise AirflowException("gpy exited 75: another run of the job holds its lock; retrying later")
    if code in (EXIT_SIGTERM, EXIT_SIGINT, -15, -2):
        raise AirflowException(f"gpy exited {code}: the run was stopped by a signal, nothing half done; retrying")
    if code == EXIT_EMPTY:
        raise AirflowException("gpy exited 4: the source found nothing to pull (job.fail.on.empty=true); retrying, "
                               "the data may still arrive")
    if code == EXIT_USAGE:
        raise AirflowFailException("gpy exited 2: bad configuration or usage, or a corrupt state file "
                                   "(see the log above); not retried until the job is fixed")
    if code == EXIT_DATA:
        raise AirflowFailException("gpy exited 65: a value of the input does not fit its column (the log above names "
                                   "its file, line and column); not retried until the data is fixed")
    raise AirflowException(f"gpy exited {code}: the run failed (see the log above)")


def _time(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def state_reached(at: str, cwd: str | None = None, wait_for: str | None = None, job_file: str | None = None,
                  dataset: str | None = None, gpy: str | None = None, conf_args: list[str] | None = None) -> bool:
    """Whether the dataset has reached ``at`` (ISO 8601): complete up to it, or committed by a run ended after it."""
    job = job_file or setting("gpy_job_file")
    urn = dataset if dataset is not None else setting("gpy_dataset")
    cwd = cwd or setting("gpy_workdir")
    wait_for = wait_for or setting("gpy_wait_for")
    if wait_for == "completeness":  # exit 0: complete up to the time, 1: not yet, 2: no state or a bad job file
        done = subprocess.run(_gpy("state", "watermark", job, "--dataset", urn, "--at", at, *(conf_args or []), gpy=gpy), cwd=cwd,
                              capture_output=True, text=True)
        log.info("%s", (done.stdout + done.stderr).strip())
        return done.returncode == 0
    if wait_for != "commit":
        raise AirflowFailException(f"gpy_wait_for={wait_for!r}: use completeness or commit")
    shown = subprocess.run(_gpy("state", "show", job, "--dataset", urn, "--json", *(conf_args or []), gpy=gpy), cwd=cwd,
                           capture_output=True, text=True)
    if shown.returncode != 0:
        log.info("no state yet (%s)", shown.stderr.strip().splitlines()[-1:] or shown.returncode)
        return False
    datasets: list[dict[str, Any]] = json.loads(shown.stdout)["datasets"]
    latest = datasets[0] if datasets else None
    if latest is None or latest["state"] != "COMMITTED" or not latest["end_time"]:
        return False
    log.info("dataset %r: run %s %s, ended %s", urn, latest["job_id"], latest["state"], latest["end_time"])
    return _time(latest["end_time"]) >= _time(at)


class StateReached:
    """:func:`state_reached` with a DAG's fixed settings, for its sensor. They are kept here, not in the sensor's
    ``op_kwargs``, which Airflow renders with Jinja: a job path holding ``{{ }}`` reaches gpy as given."""

    def __init__(self, **settings: Any) -> None:
        self.settings = settings

    def __call__(self, at: str) -> bool:
        return state_reached(at, **self.settings)

    def __repr__(self) -> str:
        return f"state_reached({', '.join(f'{k}={v!r}' for k, v in self.settings.items() if v is not None)})"


def gpy_job_dag(dag_id: str, *, schedule: str | None = None, job_file: str | None = None,
                workdir: str | None = None, engine: str | None = None, dataset: str | None = None,
                wait_for: str | None = None, gpy: str | None = None, conf_args: list[str] | None = None,
                description: str = "gpy run, then wait until the dataset's data is complete (or committed) up to "
                                   "the run's interval") -> DAG:
    """A DAG of ``gpy_run`` then ``wait_for_state`` for one job: what is not given here comes from the settings
    (Airflow Variables, environment variables, defaults) when the tasks run. ``gpy schedule --airflow`` writes
    one such DAG per job, with the job's own schedule."""
    with DAG(
        dag_id=dag_id,
        description=description,
        schedule=schedule,
        start_date=dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc),
        catchup=False,
        default_args={"retries": 3, "retry_delay": dt.timedelta(minutes=5)},
        tags=["gpy"],
        # found as a module's global (``dag = gpy_job_dag(...)``) only: importing this module to build another
        # DAG must not bring gpy_ingest along
        auto_register=False,
    ) as job_dag:
        gpy_run = GpyRunOperator(task_id="gpy_run", job_file=job_file, engine=engine, gpy=gpy, conf_args=conf_args,
                                 cwd=workdir)
        wait_for_state = PythonSensor(
            task_id="wait_for_state",
            python_callable=StateReached(cwd=workdir, wait_for=wait_for, job_file=job_file, dataset=dataset, gpy=gpy,
                                         conf_args=conf_args),
            op_kwargs={"at": "{{ (data_interval_end or logical_date or dag_run.start_date).isoformat() }}"},
            poke_interval=float(os.environ.get("GPY_SENSOR_POKE_SECONDS", "60")),
            timeout=float(os.environ.get("GPY_SENSOR_TIMEOUT_SECONDS", str(6 * 3600))),
            mode="reschedule",
        )
        gpy_run >> wait_for_state
    return job_dag


dag = gpy_job_dag("gpy_ingest")
