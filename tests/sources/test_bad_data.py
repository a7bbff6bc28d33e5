"""Bad data names its place: a value that fails its column's cast names the file, the line (the record in formats
without lines) and the column, in the run's error and in its history, and exits 65 (a data error a scheduler does
not retry); a job can route such rows to the error file instead. A missing input folder is a configuration error
(exit 2 naming the key), not a failed run."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_gpy_here

JOB = """job.name=Orders
source.class=gobblin_py.connectors.files.filebased.FileBasedSource
source.filebased.data.directory=in
extract.namespace=shop
extract.table.name=orders
writer.output.format=CSV
task.data.root.dir=work
data.publisher.final.dir=published
state.store.dir=state
"""


def job(folder: Path, extra: str = "") -> Path:
    path = folder / "job.pull"
    path.write_text(JOB + extra)
    return path


def run(folder: Path, extra: str = ""):
    return run_gpy_here("run", str(job(folder, extra)), "--engine", "local", cwd=folder)


def test_a_missing_input_folder_is_a_configuration_error_naming_the_key(tmp_path):
    result = run(tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "gpy: error: source.filebased.data.directory=in: no such directory" in result.stderr
