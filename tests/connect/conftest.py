"""One Spark Connect server for the test session, started on loopback from pyspark's own
``sbin/start-connect-server.sh`` (the server's jar ships in pyspark's ``jars/``) and stopped at the end."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from gobblin_py.runtime.engines.java import ensure_java
from tests.support.environment import missing
from tests.support.net import free_ports

REPO = Path(__file__).resolve().parents[2]


STARTED = "Spark Connect server started at"  # the server's log line once its gRPC service listens


def _ensure_client() -> None:
    """PySpark's Connect client and its dependencies (grpcio, pandas …), installed when missing."""
    try:
        import pyspark.sql.connect.session  # noqa: F401  (checks the client's dependencies as it loads)
    except ImportError:
        import pyspark

        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", f"pyspark[connect]=={pyspark.__version__}"],
                       check=True, timeout=600)


@dataclass(frozen=True)
class ConnectServer:
    """A running Spark Connect server: its ``sc://`` address and its log."""

    url: str
    log: Path
    pid: int  # its launcher, every process of the server descends from it


@pytest.fixture(scope="session")
def connect_server(tmp_path_factory, bare_python) -> ConnectServer:
    """A Spark Connect server (``local[2]``) on loopback whose Python workers run a bare virtual environment's
    Python (no gobblin_py, no pyarrow): a job's tasks run there only with the environment gpy ships."""
    import pyspark

    spark_home = Path(pyspark.__file__).parent
    script = spark_home / "sbin" / "start-connect-server.sh"
    if not script.exists():
        missing(f"pyspark {pyspark.__version__} has no {script}")
    if not list((spark_home / "jars").glob("spark-connect_*.jar")):
        missing(f"pyspark {pyspark.__version__} bundles no spark-connect jar")
    _ensure_client()
    ensure_java()
    work = tmp_path_factory.mktemp("spark-connect")
    # the driver's and the block manager's ports are chosen too: left to Spark, one of them can take the gRPC port
    # before the gRPC service binds it, and a client then waits on a port that speaks another protocol
    port, driver_port, block_port = free_ports(3)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env.update({"SPARK_HOME": str(spark_home), "SPARK_LOCAL_IP": "127.0.0.1",
                "SPARK_LOG_DIR": str(work / "logs"), "SPARK_PID_DIR": str(work / "pid"),
                "PYSPARK_PYTHON": str(bare_python),
                "PATH": f"{bare_python.parent}{os.pathsep}{env.get('PATH', '')}"})
    log = work / "server.log"
    proc = subprocess.Popen(
        ["bash", str(script), "--wait", "--master", "local[2]",
         "--conf", f"spark.connect.grpc.binding.port={port}",
         "--conf", f"spark.driver.port={driver_port}", "--conf", f"spark.blockManager.port={block_port}",
         "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
         "--conf", "spark.ui.enabled=false", "--conf", "spark.ui.showConsoleProgress=false"],
        env=env, stdout=open(log, "wb"), stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 120
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            if STARTED in log.read_text(errors="replace"):
                break
            raise ConnectionRefusedError  # something listens there, not yet (or never) the gRPC service
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                _stop(proc)
                pytest.fail(f"the Spark Connect server did not start:\n{log.read_text(errors='replace')[-3000:]}")
            time.sleep(0.2)
    yield ConnectServer(f"sc://127.0.0.1:{port}", log, proc.pid)
    _stop(proc)


def _stop(proc: subprocess.Popen) -> None:
    """The server and every process it started (its JVM, its Python workers): they share its process group."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    except ProcessLookupError:
        pass
