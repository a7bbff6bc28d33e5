"""gpy ships itself to a Spark cluster: on the standalone cluster of tests/spark/conftest.py, whose workers' Python
has neither gobblin_py nor pyarrow, a forked incremental job with its own plugin modules runs twice exactly once,
an executor killed mid-task in its first run losing and duplicating nothing; the second run is the docs'
spark-submit recipe, typed as it is written, with the archive of `gpy pack`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.support.cli import run_gpy
from tests.support.readme_recipes import recipe

pytestmark = pytest.mark.spark
ROOT = Path(__file__).resolve().parents[2]


def write_part(folder: Path, k: int, rows: int = 500) -> list[int]:
    ids = list(range(k * 10_000, k * 10_000 + rows))
    pq.write_table(pa.table({"order_id": pa.array(ids, pa.int64()), "v": pa.array([k] * rows)}),
                   folder / f"part{k}.parquet")
    return ids


def published_ids(folder: Path) -> list[int]:
    return sorted(i for f in folder.rglob("*.parquet") for i in pq.read_table(f).column("order_id").to_pylist())


def spark_submit(recipe: str, job: Path, master: str, folder: Path) -> subprocess.CompletedProcess:
    """The recipe in bash, in ``folder``, as a user with gpy's virtual environment activated runs it."""
    venv = Path(sys.executable).parent
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "SPARK_HOME")}
    env.update({"PATH": f"{venv}{os.pathsep}{env.get('PATH', '')}", "MASTER": master, "JOB": str(job),
                "PYTHONPATH": str(ROOT)})  # the job's plugin modules: tests.runtime.sample_plugins
    return subprocess.run(["bash", "-eo", "pipefail", "-c", recipe], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=600)


def records_read(stderr: str) -> int:
    events = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
    return sum(e["records_read"] for e in events if e.get("event") == "dataset_summary")


def test_a_forked_incremental_job_runs_twice_exactly_once_on_executors_without_gpy(tmp_path, standalone):
    data, marker = tmp_path / "data", tmp_path / "marker"
    data.mkdir()
    marker.mkdir()
    first = write_part(data, 0) + write_part(data, 1)
    job = tmp_path / "forked.pull"
    job.write_text("\n".join([
        "job.name=Shipped",
        "source.class=gobblin_py.connectors.files.filebased.FileBasedSource",
        f"source.filebased.data.directory={data}",
        "source.filebased.batch.size=200",
        "extract.namespace=spark", "extract.table.name=shipped",
        # plugin modules of the job's own, outside site-packages: executors get them from the shipped archive;
        # the converter SIGKILLs the executor running the first task to reach its second batch, once
        "converter.classes=tests.runtime.sample_plugins.KillExecutorOnce", f"test.kill.marker.dir={marker}",
        "fork.operator.class=tests.runtime.sample_plugins.RouteByParity", "fork.branches=2",
        f"writer.staging.dir={tmp_path}/staging", f"writer.output.dir={tmp_path}/output",
        f"data.publisher.final.dir={tmp_path}/published", f"state.store.dir={tmp_path}/state",
        "task.maxretries=0",
        "spark.executor.memory=512m", "spark.task.maxFailures=4", "spark.cores.max=2",
        "",
    ]))
    result = run_gpy("run", str(job), "--master", standalone.url, cwd=ROOT, env=standalone.env())
    assert result.returncode == 0, result.stdout + result.stderr[-4000:]
    assert records_read(result.stderr) == len(first)
    shipped = [json.loads(line) for line in result.stderr.splitlines() if '"pack_' in line]
    assert shipped and shipped[0]["path"].endswith(".tar.gz"), result.stderr[-2000:]
    assert (marker / "killed").exists(), "no executor was killed: the test proved nothing"
    published = sorted((tmp_path / "published").rglob("*.parquet"))
    assert len(published) == 4  # one file per task and branch: the killed attempt's partial files are not there
    assert not any("_attempts" in str(p.relative_to(tmp_path / "published")) for p in published)
    leftovers = [p for p in (tmp_path / "staging").rglob("*") if p.is_file()] + \
                [p for p in (tmp_path / "output").rglob("*") if p.is_file()]
    assert leftovers == [], leftovers
    assert published_ids(tmp_path / "published") == sorted(first)

    # the second run through spark-submit with the archive of `gpy pack`: the same job, its state, its archive
    second = write_part(data, 2)
    # one task is left: one executor does (its key fills in what spark-submit does not set)
    job.write_text(job.read_text().replace("spark.cores.max=2", "spark.cores.max=1"))
    submitted = tmp_path / "submit"
    submitted.mkdir()
    again = spark_submit(recipe("spark-submit"), job, standalone.url, submitted)
    assert again.returncode == 0, again.stdout + again.stderr[-4000:]
    # spark-submit hands on the driver's stdout and stderr as its stdout
    assert records_read(again.stdout) == len(second)  # only the new file is pulled
    assert '"pack_cached"' in again.stderr  # the environment did not change: `gpy pack` packed nothing again
    assert '"pack_' not in again.stdout  # the run ships the archive given to --archives, no archive of its own
    for _ in range(20):  # the master lists an application once it has registered it
        if standalone.applications().count("Shipped") == 2:
            break
        time.sleep(0.5)
    # it ran on the cluster, named after the job (not after spark-submit's script)
    assert standalone.applications().count("Shipped") == 2, standalone.applications()

    everything = first + second
    branches = sorted(p.name for p in (tmp_path / "published").iterdir())
    assert len(branches) == 2, branches
    even, odd = (published_ids(tmp_path / "published" / b) for b in branches)
    assert even == sorted(i for i in everything if i % 2 == 0)
    assert odd == sorted(i for i in everything if i % 2 == 1)
