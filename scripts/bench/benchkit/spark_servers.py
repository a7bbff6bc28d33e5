"""A Spark standalone cluster and a Spark Connect server on loopback, for the cluster benchmarks.

The same start-up as the test fixtures (tests/spark/conftest.py, tests/connect/conftest.py): pyspark's own
``spark-class`` and ``sbin/start-connect-server.sh``, their Python workers a bare virtual environment (nothing
of gpy, no pyarrow), so gpy's tasks run there only with the environment archive gpy ships. Each server is a
context manager that yields once it accepts work, with its start-up time measured; leaving it stops every
process it started.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

START_TIMEOUT = 180.0


class ServerError(RuntimeError):
    """A server did not come up; the message holds the end of its log."""


@dataclass(frozen=True)
class Server:
    """A running server: its address (``spark://`` or ``sc://``), its start-up seconds and its workers' Python."""

    url: str
    start_seconds: float
    python: Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def bare_python(folder: Path) -> Path:
    """A new virtual environment of this interpreter's version with nothing installed in it: its Python."""
    if not (folder / "bin" / "python").exists():
        subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", "--without-pip", "--clear",
                        str(folder)], check=True)
    return folder / "bin" / "python"


def _env(spark_home: Path, work: Path, python: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env.update({"SPARK_HOME": str(spark_home), "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_LOG_DIR": str(work / "logs"),
                "SPARK_PID_DIR": str(work / "pid"), "SPARK_WORKER_DIR": str(work / "workers"),
                "PYSPARK_PYTHON": str(python), "PATH": f"{python.parent}{os.pathsep}{env.get('PATH', '')}"})
    return env


def _stop(procs: list[subprocess.Popen]) -> None:
    """Each process and its process group (they were started in sessions of their own)."""
    for proc in reversed(procs):
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    for proc in procs:
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _tail(*logs: Path) -> str:
    return "\n".join(f"{log}:\n{log.read_text(errors='replace')[-1500:]}" for log in logs if log.exists())


@contextmanager
def standalone(work: Path, python: Path, workers: int = 2) -> Iterator[Server]:
    """A standalone master and ``workers`` one-core, 1 GB workers, started with pyspark's ``spark-class``."""
    import pyspark

    spark_home = Path(pyspark.__file__).parent
    spark_class = str(spark_home / "bin" / "spark-class")
    work.mkdir(parents=True, exist_ok=True)
    env = _env(spark_home, work, python)
    port, ui = free_port(), free_port()
    master = f"spark://127.0.0.1:{port}"
    started = time.perf_counter()
    procs = [subprocess.Popen([spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                               "--port", str(port), "--webui-port", str(ui)], env=env, start_new_session=True,
                              stdout=open(work / "master.log", "wb"), stderr=subprocess.STDOUT)]
    try:
        for n in range(workers):
            procs.append(subprocess.Popen(
                [spark_class, "org.apache.spark.deploy.worker.Worker", master, "--cores", "1", "--memory", "1g",
                 "--host", "127.0.0.1", "--webui-port", str(free_port()), "--work-dir", str(work / f"worker{n}")],
                env=env, start_new_session=True, stdout=open(work / f"worker{n}.log", "wb"),
                stderr=subprocess.STDOUT))
        alive = 0
        while alive < workers:
            if time.perf_counter() - started > START_TIMEOUT:
                raise ServerError(f"the standalone cluster did not come up with {workers} workers:\n"
                                  + _tail(work / "master.log", work / "worker0.log"))
            try:
                status = json.load(urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=2))
                alive = sum(1 for w in status.get("workers", []) if w.get("state") == "ALIVE")
            except OSError:
                pass
            time.sleep(0.2)
        yield Server(master, time.perf_counter() - started, python)
    finally:
        _stop(procs)


@contextmanager
def connect(work: Path, python: Path, master: str = "local[2]") -> Iterator[Server]:
    """A Spark Connect server on ``master``, from pyspark's ``sbin/start-connect-server.sh``; up once its port
    accepts connections."""
    import pyspark

    spark_home = Path(pyspark.__file__).parent
    work.mkdir(parents=True, exist_ok=True)
    port, log = free_port(), work / "server.log"
    started = time.perf_counter()
    proc = subprocess.Popen(
        ["bash", str(spark_home / "sbin" / "start-connect-server.sh"), "--wait", "--master", master,
         "--conf", f"spark.connect.grpc.binding.port={port}", "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
         "--conf", "spark.ui.enabled=false", "--conf", "spark.ui.showConsoleProgress=false"],
        env=_env(spark_home, work, python), stdout=open(log, "wb"), stderr=subprocess.STDOUT, start_new_session=True)
    try:
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None or time.perf_counter() - started > START_TIMEOUT:
                    raise ServerError(f"the Spark Connect server did not start:\n{_tail(log)}") from None
                time.sleep(0.2)
        yield Server(f"sc://127.0.0.1:{port}", time.perf_counter() - started, python)
    finally:
        _stop([proc])
