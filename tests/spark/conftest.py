"""A real Spark standalone cluster on loopback, once per test session, whose workers have nothing of gpy."""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.environment import missing
from tests.support.net import free_port


@dataclass(frozen=True)
class Standalone:
    """A running master (``url``) and the bare Python its workers run (no gobblin_py, no pyarrow)."""

    url: str
    python: Path
    ui: str  # the master's web UI, whose /json/ lists the applications it ran

    def env(self) -> dict[str, str]:
        """The environment of a ``gpy run`` against it: executors get the bare Python unless gpy ships its own."""
        return {"PYSPARK_PYTHON": str(self.python)}

    def applications(self) -> list[str]:
        """The names of the applications the cluster runs or ran, oldest first."""
        status = json.load(urllib.request.urlopen(f"{self.ui}/json/", timeout=10))
        return [app["name"] for app in status.get("completedapps", []) + status.get("activeapps", [])]


@pytest.fixture(scope="session")
def standalone(tmp_path_factory, bare_python) -> Iterator[Standalone]:
    """A Spark standalone master and two one-core workers on loopback, started with pyspark's spark-class; the
    workers' Python is a bare virtual environment, so a job runs there only with the environment gpy ships."""
    import pyspark

    from gobblin_py.runtime.engines.java import ensure_java

    spark_home = Path(pyspark.__file__).parent
    spark_class = spark_home / "bin" / "spark-class"
    if not spark_class.exists():
        missing(f"pyspark's spark-class launcher is not at {spark_class}")
    ensure_java()
    work = tmp_path_factory.mktemp("spark-standalone")
    python = bare_python
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env.update({"SPARK_HOME": str(spark_home), "SPARK_LOCAL_IP": "127.0.0.1",
                "SPARK_LOG_DIR": str(work / "logs"), "SPARK_WORKER_DIR": str(work / "workers"),
                "PYSPARK_PYTHON": str(python), "PATH": f"{python.parent}{os.pathsep}{env.get('PATH', '')}"})
    port, ui = free_port(), free_port()
    procs = [subprocess.Popen([str(spark_class), "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                               "--port", str(port), "--webui-port", str(ui)], env=env,
                              stdout=open(work / "master.log", "wb"), stderr=subprocess.STDOUT)]
    master = f"spark://127.0.0.1:{port}"
    for n in range(2):
        procs.append(subprocess.Popen(
            [str(spark_class), "org.apache.spark.deploy.worker.Worker", master, "--cores", "1", "--memory", "1g",
             "--host", "127.0.0.1", "--webui-port", str(free_port()), "--work-dir", str(work / f"worker{n}")],
            env=env, stdout=open(work / f"worker{n}.log", "wb"), stderr=subprocess.STDOUT))
    deadline = time.time() + 120
    alive = 0
    while time.time() < deadline:
        try:
            status = json.load(urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=2))
            alive = sum(1 for w in status.get("workers", []) if w.get("state") == "ALIVE")
            if alive == 2:
                break
        except (OSError, ValueError):  # not up yet, or up before its JSON page is attached (HTML, not JSON)
            pass
        time.sleep(0.25)
    if alive != 2:
        for proc in procs:
            proc.kill()
        logs = "\n".join((work / name).read_text(errors="replace")[-1500:] for name in ("master.log", "worker0.log"))
        pytest.fail(f"the standalone cluster did not come up with two workers:\n{logs}")
    yield Standalone(master, python, f"http://127.0.0.1:{ui}")
    for proc in reversed(procs):
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
