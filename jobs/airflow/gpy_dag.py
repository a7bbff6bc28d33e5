"""An Airflow DAG that runs a gpy job; the run's exit code says whether its data landed.

    gpy_run  [──▶  wait_for_complete]

``gpy_run`` runs ``gpy run JOB_FILE --engine ENGINE --strict`` in the jobs root, with one of three operators:

    bash         a BashOperator on the Airflow worker (the default), gpy found on its PATH or by ``gpy_command``
    kubernetes   a KubernetesPodOperator: the image ``gpy_image`` runs gpy, the job file relative to its workdir
    spark        a SparkSubmitOperator: ``spark-submit --archives <gpy pack archive>#environment`` of
                 ``gpy_spark_application`` (gobblin_py/cli/__main__.py) with ``run ROOT/JOB_FILE ...`` as arguments

The Bash operator maps gpy's exit codes (the README lists them):

    0          success: every dataset the job committed is published, whatever the job's kind
    3          success, with a WARNING in the task log: committed, but some tasks failed (retried next run)
    75         retry later: another run of the job holds its lock (Airflow retries after retry_delay)
    143, 130   retry: the run was stopped by SIGTERM / SIGINT, nothing half done
    1          retry: the run failed (a dataset was not committed); fails once the retries are used up
    2          fail at once, no retry: bad configuration or usage, or a corrupt state file (a person must fix it)
    4          retry: the source found nothing to pull and the job sets job.fail.on.empty (the data may still come)

It passes its own run to gpy as the OpenLineage parent run (``OPENLINEAGE_PARENT_ID``), so a job that sends
OpenLineage events shows under this DAG's task in Marquez.

``wait_for_complete`` (only with ``wait_for="completeness"``) is for a downstream DAG that needs the data complete
up to the run's data interval end T: ``gpy state watermark JOB_FILE --at T`` exits 0 once every dataset of the job
that carries event times is complete up to T (``source.event.time.column``, a Kafka record's timestamp, an SQL
table's time delta column), and 2, failing the sensor at once, when none does.

Settings are Airflow Variables, read when the tasks run (``AIRFLOW_VAR_<NAME>`` environment variables work too),
else environment variables of the same name in capitals, else the defaults:

    gpy_command              GPY_COMMAND               gpy            the gpy command (e.g. /opt/gpy/bin/gpy)
    gpy_jobs_root            GPY_JOBS_ROOT             (required)     the folder job files and their relative
                                                                      paths are relative to; gpy runs there
    gpy_job_file             GPY_JOB_FILE              jobs/quickstart.pull (the example DAG's job)
    gpy_engine               GPY_ENGINE                spark          local or spark (the example DAG's engine)
    gpy_image                GPY_IMAGE                 gobblin-py     kubernetes: the image (gpy on its PATH)
    gpy_namespace            GPY_NAMESPACE             default        kubernetes: the pod's namespace
    gpy_archive              GPY_ARCHIVE               (required)     spark: the `gpy pack` archive (path or URL)
    gpy_spark_application    GPY_SPARK_APPLICATION     (required)     spark: gobblin_py/cli/__main__.py's path
    gpy_spark_conn_id        GPY_SPARK_CONN_ID         spark_default  spark: the Spark connection

It imports on Airflow 2.9+ and 3.x, needs nothing of gpy's beside it, and holds no path of the machine it was
written on: ``gpy schedule --airflow`` copies it into each DAG file it writes.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import shlex
import subprocess
import uuid
from collections.abc import Sequence
from typing import Any

try:  # Airflow 3
    from airflow.sdk import DAG, Variable
    from airflow.sdk.exceptions import AirflowException, AirflowFailException
except ImportError:  # Airflow 2.9+
    from airflow import DAG  # type: ignore[no-redef]
    from airflow.exceptions import AirflowException, AirflowFailException  # type: ignore[no-redef]
    from airflow.models import Variable  # type: ignore[no-redef]
try:  # the standard provider (Airflow 3, and 2.9+ where it is installed)
    from airflow.providers.standard.operators.bash import BashOperator
    from airflow.providers.standard.sensors.python import PythonSensor
except ImportError:
    from airflow.operators.bash import BashOperator  # type: ignore[no-redef]
    from airflow.sensors.python import PythonSensor  # type: ignore[no-redef]

log = logging.getLogger(__name__)

DEFAULTS = {
    "gpy_command": "gpy",
    "gpy_jobs_root": "",
    "gpy_job_file": "jobs/quickstart.pull",
    "gpy_engine": "spark",
    "gpy_image": "gobblin-py",
    "gpy_namespace": "default",
    "gpy_archive": "",
    "gpy_spark_application": "",
    "gpy_spark_conn_id": "spark_default",
}
REQUIRED = {
    "gpy_jobs_root": "the folder the job files (and their relative paths) are relative to",
    "gpy_archive": "the archive `gpy pack` built (a path or a URL the cluster reads)",
    "gpy_spark_application": "the path of gobblin_py/cli/__main__.py where spark-submit runs",
}
OPERATORS = ("bash", "kubernetes", "spark")

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_PARTIAL, EXIT_EMPTY, EXIT_DATA, EXIT_LOCKED = 0, 1, 2, 3, 4, 65, 75
EXIT_SIGTERM, EXIT_SIGINT = 143, 130
PARENT_ENV = "OPENLINEAGE_PARENT_ID"  # what gpy reads for its OpenLineage events' parent run


def setting(name: str) -> str:
    """An Airflow Variable, else the environment variable of the same name in capitals, else the default;
    AirflowFailException naming both when a required one is not set."""
    fallback = os.environ.get(name.upper(), DEFAULTS[name])
    value = str(Variable.get(name, fallback))  # positional: Airflow 2 calls it default_var, Airflow 3 default
    if not value and name in REQUIRED:
        raise AirflowFailException(f"set the Airflow Variable {name} (or the environment variable {name.upper()}) "
                                   f"to {REQUIRED[name]}")
    return value


def gpy_arguments(job_file: str | None, engine: str | None, conf_args: Sequence[str] = ()) -> list[str]:
    """``--log-format json run JOB_FILE --engine ENGINE --strict ...``: what every operator passes to gpy."""
    return ["--log-format", "json", "run", job_file or setting("gpy_job_file"), "--engine",
            engine or setting("gpy_engine"), "--strict", *conf_args]


def _gpy(*args: str, gpy: str | None = None) -> list[str]:
    return [*shlex.split(gpy or setting("gpy_command")), *args]


class GpyRunOperator(BashOperator):
    """A BashOperator that runs ``gpy run`` (or ``command``) and turns gpy's exit code into the task's fate.

    The command is built when the task runs, from the settings then in force (``job_file``, ``engine`` and
    ``gpy``, when given, fix the job, the engine and the gpy command instead), in the jobs root; its output goes
    to the task log. Only ``env`` is a Jinja template: the job file and the command reach gpy as given, so a path
    holding ``{{ }}`` is never rendered.
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
        command = self.gpy_command or _gpy(*gpy_arguments(self.gpy_job_file, self.gpy_engine, self.gpy_conf_args),
                                           gpy=self.gpy)
        self.bash_command = "exec " + shlex.join(command)  # exec: gpy itself receives Airflow's SIGTERM
        self.cwd = self.cwd or setting("gpy_jobs_root")
        try:
            super().execute(context)
        except AirflowException as exc:
            if isinstance(exc, AirflowFailException):
                raise
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


def gpy_pod_operator(job_file: str | None, engine: str | None, gpy: str | None, conf_args: list[str]) -> Any:
    """``gpy_run`` as a KubernetesPodOperator: the image, namespace and command are read when the task runs."""
    from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator

    class GpyPodOperator(KubernetesPodOperator):  # type: ignore[misc, valid-type]
        """A pod of the image ``gpy_image`` running ``gpy run``; the job file is relative to the image's workdir."""

        template_fields: Sequence[str] = ()  # the job file reaches gpy as given, never rendered

        def gpy_prepare(self, context: Any) -> None:
            """The pod's image, namespace, command and environment, from the settings in force now."""
            command = _gpy(*gpy_arguments(job_file, engine, conf_args), gpy=gpy)
            self.image, self.namespace = setting("gpy_image"), setting("gpy_namespace")
            self.cmds, self.arguments = command[:1], command[1:]
            parent = lineage_parent_id(context)
            if parent:
                self.env_vars = [*(self.env_vars or []), _k8s_env(PARENT_ENV, parent)]

        def execute(self, context: Any) -> Any:
            self.gpy_prepare(context)
            return super().execute(context)

    return GpyPodOperator(task_id="gpy_run", name="gpy-run", image=DEFAULTS["gpy_image"], get_logs=True)


def _k8s_env(name: str, value: str) -> Any:
    from kubernetes.client import models as k8s

    return k8s.V1EnvVar(name=name, value=value)


def gpy_spark_operator(job_file: str | None, engine: str | None, conf_args: list[str]) -> Any:
    """``gpy_run`` as a SparkSubmitOperator: the `gpy pack` archive ships gpy and its Python to the cluster."""
    from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator

    class GpySparkSubmitOperator(SparkSubmitOperator):  # type: ignore[misc, valid-type]
        """``spark-submit --archives ARCHIVE#environment gobblin_py/cli/__main__.py run JOB_FILE ...``; the job file
        joined to the jobs root (its relative folders resolve from where spark-submit starts: give it absolute
        ones, or URLs)."""

        template_fields: Sequence[str] = ()  # the job file reaches gpy as given, never rendered

        def gpy_prepare(self, context: Any) -> None:
            """The application, archive, arguments and connection, from the settings in force now."""
            self.application = setting("gpy_spark_application")
            self._archives = f"{setting('gpy_archive')}#environment"
            self.conf = {**(self.conf or {}), "spark.pyspark.python": "./environment/bin/python"}
            # spark-submit starts in the worker's folder, not the jobs root: a relative job file is joined to it
            job = job_file or setting("gpy_job_file")
            if "://" not in job and not os.path.isabs(job):
                job = os.path.join(setting("gpy_jobs_root"), job)
            self.application_args = gpy_arguments(job, engine or "spark", conf_args)
            self._conn_id = setting("gpy_spark_conn_id")

        def execute(self, context: Any) -> Any:
            self.gpy_prepare(context)
            return super().execute(context)

    return GpySparkSubmitOperator(task_id="gpy_run", application="gobblin_py/cli/__main__.py")


def complete_up_to(at: str, job_file: str | None = None, gpy: str | None = None,
                   conf_args: list[str] | None = None) -> bool:
    """Whether every dataset of the job that carries event times is complete up to ``at`` (ISO 8601)."""
    job = job_file or setting("gpy_job_file")
    done = subprocess.run(_gpy("state", "watermark", job, "--at", at, *(conf_args or []), gpy=gpy),
                          cwd=setting("gpy_jobs_root"), capture_output=True, text=True)
    log.info("%s", (done.stdout + done.stderr).strip())
    if done.returncode == EXIT_USAGE:  # no dataset with event times, or a bad job file: waiting cannot help
        raise AirflowFailException(f"gpy state watermark exited 2: {done.stderr.strip()}")
    return done.returncode == EXIT_OK


class CompleteUpTo:
    """:func:`complete_up_to` with a DAG's fixed settings, for its sensor. They are kept here, not in the sensor's
    ``op_kwargs``, which Airflow renders with Jinja: a job path holding ``{{ }}`` reaches gpy as given."""

    def __init__(self, **settings: Any) -> None:
        self.settings = settings

    def __call__(self, at: str) -> bool:
        return complete_up_to(at, **self.settings)

    def __repr__(self) -> str:
        return f"complete_up_to({', '.join(f'{k}={v!r}' for k, v in self.settings.items() if v is not None)})"


def gpy_job_dag(dag_id: str, *, schedule: str | None = None, job_file: str | None = None,
                engine: str | None = None, operator: str = "bash", wait_for: str | None = None,
                gpy: str | None = None, conf_args: list[str] | None = None,
                description: str = "gpy run; its exit code says whether the data landed") -> DAG:
    """A DAG of ``gpy_run`` (and, with ``wait_for="completeness"``, ``wait_for_complete``) for one job: what is not
    given here comes from the settings (Airflow Variables, environment variables, defaults) when the tasks run.
    ``gpy schedule --airflow`` writes one such DAG per job, with the job's own schedule."""
    if operator not in OPERATORS or wait_for not in (None, "completeness"):
        raise ValueError(f"operator={operator!r} (one of {', '.join(OPERATORS)}), wait_for={wait_for!r} "
                         "(None or 'completeness')")
    conf = list(conf_args or [])
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
        if operator == "kubernetes":
            gpy_run = gpy_pod_operator(job_file, engine, gpy, conf)
        elif operator == "spark":
            gpy_run = gpy_spark_operator(job_file, engine, conf)
        else:
            gpy_run = GpyRunOperator(task_id="gpy_run", job_file=job_file, engine=engine, gpy=gpy, conf_args=conf)
        if wait_for == "completeness":
            gpy_run >> PythonSensor(
                task_id="wait_for_complete",
                python_callable=CompleteUpTo(job_file=job_file, gpy=gpy, conf_args=conf),
                op_kwargs={"at": "{{ (data_interval_end or logical_date or dag_run.start_date).isoformat() }}"},
                poke_interval=float(os.environ.get("GPY_SENSOR_POKE_SECONDS", "60")),
                timeout=float(os.environ.get("GPY_SENSOR_TIMEOUT_SECONDS", str(6 * 3600))),
                mode="reschedule",
            )
    return job_dag


# ---- the example DAG (gpy schedule --airflow writes each job's own DAG in its place)
dag = gpy_job_dag("gpy_ingest")
