"""The one SparkSession of a gpy process, built from the job's ``spark.*`` keys and the chosen master."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING

from gobblin_py.runtime.engines import spark_logging
from gobblin_py.runtime.engines.java import ensure_java
from gobblin_py.runtime.execute import signals
from gobblin_py.sdk.logs import get_logger

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[*]"
_lock = threading.Lock()
_driver: dict[str, subprocess.Popen] = {}  # the driver JVM this process started
log = get_logger(__name__)

# Quiet, small defaults that suit a batch ingestion driver; any spark.* key of the job overrides them.
_DEFAULTS = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "8",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.bindAddress": "127.0.0.1",
}


def chosen_master(master: str | None, conf: Mapping[str, str] | None) -> str:
    """The master a session started now would use: ``master``, else spark-submit's ``--master`` (when spark-submit
    started this process), else the job's ``spark.master``, else local[*]."""
    return master or submitted_conf().get("spark.master") or (conf or {}).get("spark.master") or DEFAULT_MASTER


def submitted_conf() -> dict[str, str]:
    """The settings spark-submit gave the session (``--master``, ``--conf``, ``--archives`` …) when spark-submit
    started this Python, its JVM holding them; empty otherwise. They win over gpy's defaults and, as a command line
    wins over a job file, over the job's keys (the engine merges them so); the application keeps the job's name
    (spark-submit's default name is the script's file name)."""
    if "PYSPARK_GATEWAY_PORT" not in os.environ:
        return {}
    from pyspark import SparkConf, SparkContext

    SparkContext._ensure_initialized()  # connects to spark-submit's JVM
    return {k: v for k, v in SparkConf().getAll() if k != "spark.app.name"}


def has_session() -> bool:
    """Whether this process has a SparkContext already (a new session would reuse it and its settings)."""
    from pyspark import SparkContext

    return SparkContext._active_spark_context is not None


def get_spark_session(
    master: str | None = None, conf: Mapping[str, str] | None = None, app_name: str = "gpy"
) -> SparkSession:
    """Get or create the process's SparkSession. Executors run this interpreter (``PYSPARK_PYTHON``), or the one
    the ``spark.pyspark.python`` of ``conf`` names (on a cluster, the shipped environment's: see ``pack``).

    A new driver JVM starts quietly (see :mod:`gobblin_py.runtime.engines.spark_logging`): its start-up noise stays off
    the console at gpy's default log level, and its stderr reaches the console through gpy.
    """
    with _lock:
        ensure_java()
        # Executors' Python workers must run our virtual environment's interpreter, not python3 from PATH, unless
        # the job or spark-submit names one (PySpark's driver reads only the variable)
        submitted = submitted_conf()
        python = (conf or {}).get("spark.pyspark.python") or submitted.get("spark.pyspark.python")
        if python and not has_session():
            os.environ["PYSPARK_PYTHON"] = python
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        from pyspark.sql import SparkSession

        settings = {**_DEFAULTS, **submitted}  # a caller's conf has spark-submit's settings where they matter
        settings.update({k: v for k, v in (conf or {}).items() if k.startswith("spark.")})
        chosen = chosen_master(master, settings)
        settings.pop("spark.master", None)
        quiet = spark_logging.quiet(settings)
        level = spark_logging.spark_log_level(settings)  # before gpy's own log4j option is added
        if quiet:
            settings[spark_logging.JAVA_OPTIONS_KEY] = spark_logging.driver_java_options(settings)
        app = settings.pop("spark.app.name", app_name)
        _start_driver(chosen, app, settings, quiet)
        builder = SparkSession.builder.master(chosen).appName(app)
        for key, value in settings.items():
            builder = builder.config(key, value)
        session = builder.getOrCreate()
        if level:
            session.sparkContext.setLogLevel(level)
        return session


def _start_driver(master: str, app: str, settings: Mapping[str, str], quiet: bool) -> None:
    """Start the driver JVM and its SparkContext with the JVM's stderr read by gpy (unless one runs already)."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    # a JVM this process already has (an earlier session), or one that started this Python (spark-submit)
    if getattr(SparkContext, "_gateway", None) is not None or "PYSPARK_GATEWAY_PORT" in os.environ:
        return
    log.info("spark_starting", master=master)
    began = time.monotonic()
    spark_conf = SparkConf().setMaster(master).setAppName(app).setAll(list(settings.items()))
    # the JVM's process is known once its gateway is up: a signal before stops the run then, with the JVM
    with signals.shielded():
        gateway = launch_gateway(spark_conf, popen_kwargs={"stderr": subprocess.PIPE})
    if gateway.proc is not None:
        _driver["proc"] = gateway.proc
        spark_logging.JvmStderrFilter(gateway.proc.stderr, drop_noise=quiet).start()
    log.info("spark_jvm_started", pid=gateway.proc.pid if gateway.proc is not None else None)
    signals.raise_if_interrupted()
    try:
        SparkContext(conf=spark_conf, gateway=gateway)
    finally:
        signals.reclaim_signals()  # PySpark's SIGINT handler would end the run with a KeyboardInterrupt
    log.info("spark_started", master=master, seconds=round(time.monotonic() - began, 3))


def stop_driver() -> None:
    """Stop the driver JVM this process started, and wait for it to end (a stopped run leaves no process)."""
    proc = _driver.pop("proc", None)
    if proc is None or proc.poll() is not None:
        return
    from pyspark import SparkContext

    SparkContext._active_spark_context = None  # its JVM is gone
    SparkContext._gateway = None
    SparkContext._jvm = None
    proc.terminate()  # its shutdown hooks stop the SparkContext and the executors' Python workers
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
