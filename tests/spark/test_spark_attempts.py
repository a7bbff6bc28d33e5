"""Spark task attempts on a real standalone cluster: an executor killed mid-task loses and duplicates nothing."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gobblin_py.runtime.engines.java import ensure_java
from tests.environment import missing
from tests.conftest import run_gpy

pytestmark = pytest.mark.spark


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def standalone(tmp_path_factory):
    """A Spark standalone master and two one-core workers on loopback, started with pyspark's spark-class."""
    import pyspark

    spark_home = Path(pyspark.__file__).parent
    spark_class = spark_home / "bin" / "spark-class"
    if not spark_class.exists():
        missing(f"pyspark's spark-class launcher is not at {spark_class}")
    ensure_java()
    work = tmp_path_factory.mktemp("spark-standalone")
    env = {**os.environ, "SPARK_HOME": str(spark_home), "SPARK_LOCAL_IP": "127.0.0.1",
           "SPARK_LOG_DIR": str(work / "logs"), "SPARK_WORKER_DIR": str(work / "workers"),
           "PYSPARK_PYTHON": sys.executable,
           # executors import the test's plugins as a user's would be: from an installed package or PYTHONPATH
           "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
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
        except OSError:
            pass
        time.sleep(1)
    if alive != 2:
        for proc in procs:
            proc.kill()
        logs = "\n".join((work / name).read_text(errors="replace")[-1500:] for name in ("master.log", "worker0.log"))
        pytest.fail(f"the standalone cluster did not come up with two workers:\n{logs}")
    yield master
    for proc in reversed(procs):
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_executor_killed_mid_task_publishes_every_row_exactly_once(tmp_path, standalone):
    data, marker = tmp_path / "data", tmp_path / "marker"
    data.mkdir()
    marker.mkdir()
    for k in range(4):
        ids = pa.array(range(k * 10_000, k * 10_000 + 2_000), pa.int64())
        pq.write_table(pa.table({"order_id": ids, "v": pa.array([k] * 2_000)}), data / f"part{k}.parquet")
    job = tmp_path / "attempts.pull"
    job.write_text("\n".join([
        "job.name=Attempts",
        "source.class=gobblin_py.connectors.files.filebased.FileBasedSource",
        f"source.filebased.data.directory={data}",
        "source.filebased.batch.size=200",
        "extract.namespace=spark", "extract.table.name=attempts",
        "converter.classes=tests.runtime.sample_plugins.KillExecutorOnce",
        f"test.kill.marker.dir={marker}",
        f"writer.staging.dir={tmp_path}/staging", f"writer.output.dir={tmp_path}/output",
        f"data.publisher.final.dir={tmp_path}/published", f"state.store.dir={tmp_path}/state",
        "task.maxretries=0",
        "spark.executor.memory=512m", "spark.task.maxFailures=4", "spark.cores.max=2",
        "",
    ]))
    result = run_gpy("run", str(job), "--master", standalone, cwd=Path(__file__).resolve().parents[2])
    assert result.returncode == 0, result.stdout + result.stderr[-4000:]
    assert (marker / "killed").exists(), "no executor was killed: the test proved nothing"
    published = sorted(tmp_path.joinpath("published").rglob("*.parquet"))
    ids = sorted(i for f in published for i in pq.read_table(f).column("order_id").to_pylist())
    expected = sorted(k * 10_000 + i for k in range(4) for i in range(2_000))
    assert len(ids) == len(set(ids)), "rows published twice"
    assert ids == expected
    assert len(published) == 4  # one file per task: the killed attempt's partial file is not among them
    assert not any("_attempts" in str(p.relative_to(tmp_path / "published")) for p in published)
    leftovers = [p for p in (tmp_path / "staging").rglob("*") if p.is_file()] + \
                [p for p in (tmp_path / "output").rglob("*") if p.is_file()]
    assert leftovers == [], leftovers
