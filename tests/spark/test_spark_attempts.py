"""Spark task attempts on a real standalone cluster (tests/spark/conftest.py: its workers have nothing of gpy,
which ships itself): an executor killed mid-task loses and duplicates nothing."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.conftest import run_gpy

pytestmark = pytest.mark.spark


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
    result = run_gpy("run", str(job), "--master", standalone.url, cwd=Path(__file__).resolve().parents[2],
                     env=standalone.env())
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
