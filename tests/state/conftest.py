"""Fixtures of the state tests."""

from __future__ import annotations

import pytest

from tests.support.cli import run_gpy_here
from tests.support.retention import write_orders


@pytest.fixture
def job(tmp_path):
    """A file job that has run once (3 orders published), and the path of its job file."""
    data = tmp_path / "incoming"
    data.mkdir()
    write_orders(data, "orders-1.csv", 1, 3)
    job_file = tmp_path / "orders.pull"
    job_file.write_text("\n".join([
        "job.name=Orders",
        "source.class=FileBasedSource",
        f"source.filebased.data.directory={data}",
        "source.filebased.file.pattern=orders-*.csv",
        "extract.namespace=shop",
        "extract.table.name=orders",
        "writer.output.format=JSON",
        "writer.file.pathType=TABLENAME",
        f"task.data.root.dir={tmp_path / 'task-data'}",
        f"data.publisher.final.dir={tmp_path / 'published'}",
        f"state.store.dir={tmp_path / 'state'}",
    ]) + "\n")
    result = run_gpy_here("run", str(job_file), "--engine", "local")
    assert result.returncode == 0, result.stderr
    return job_file
