"""Bad data names its place: a value that fails its column's cast names the file, the line (the record in formats
without lines) and the column, in the run's error and in its history, and exits 65 (a data error a scheduler does
not retry); a job can route such rows to the error file instead. A missing input folder is a configuration error
(exit 2 naming the key), not a failed run."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa

from gobblin_py.connectors.files.file_settings import FileSourceSettings
from gobblin_py.connectors.files.record_lines import csv_line, record_place
from gobblin_py.formats.bad_values import bad_rows, first_bad_row
from gobblin_py.io.fs import open_fs
from gobblin_py.sdk.states import State
from tests.support.cli import run_gpy_here

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


CAST = """converter.classes=gobblin_py.transforms.converters.cast.TypeCastConverter
converter.cast.fields=amount:double
"""


def orders(folder: Path) -> None:
    (folder / "in").mkdir()
    # a quoted value over two lines: the bad record starts on line 4
    (folder / "in" / "orders.csv").write_text('id,amount,note\n1,10.5,"two\nlines"\n2,abc,x\n3,7.25,y\n')


def test_a_value_that_fails_its_cast_names_file_line_and_column_and_exits_65(tmp_path):
    orders(tmp_path)
    result = run(tmp_path, CAST)
    assert result.returncode == 65, result.stdout + result.stderr
    place = f"{tmp_path}/in/orders.csv line 4: column 'amount': 'abc' does not cast from string to double"
    assert "gpy: error: task_" in result.stderr and place in result.stderr
    assert "— not retried" in result.stdout
    listed = json.loads(run_gpy_here("history", "job.pull", "--json", cwd=tmp_path).stdout)["runs"][0]
    shown = run_gpy_here("history", "job.pull", listed["run_id"], cwd=tmp_path).stdout
    assert "FAILED (exit 65)" in shown and place in shown
    assert not (tmp_path / "published").exists() or not list((tmp_path / "published").rglob("*.csv"))


def test_rows_that_fail_a_cast_can_go_to_the_error_file(tmp_path):
    orders(tmp_path)
    result = run(tmp_path, CAST + "converter.cast.failure.policy=ERR_FILE\nqualitychecker.row.err.file=errors\n")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "row policy TypeCastConverter (ERR_FILE): 1 row(s) failed" in result.stdout
    (published,) = (tmp_path / "published").rglob("*.csv")
    assert published.read_text() == '"id","amount","note"\n1,10.5,"two\nlines"\n3,7.25,"y"\n'
    (error_file,) = (tmp_path / "errors").glob("TypeCastConverter-task_*.err")
    assert [json.loads(line) for line in error_file.read_text().splitlines()] == [
        {"id": 2, "amount": "abc", "note": "x"}]


def test_bad_rows_finds_every_value_that_does_not_cast_and_only_those():
    values = pa.array(["1", "x", "2.5", None, "y", "3"] * 1000 + ["z"])
    found = bad_rows(values, pa.float64())
    assert found == sorted([i for i in range(6000) if i % 6 in (1, 4)] + [6000])
    assert first_bad_row(values, pa.float64()) == 1 and bad_rows(pa.array(["1", None]), pa.float64()) == []


def test_a_csv_records_line_counts_quoted_line_breaks_blank_lines_and_the_header(tmp_path):
    (tmp_path / "f.csv").write_text('a,b\n1,"x\ny"\n\n2,z\n3,w\n')
    settings = FileSourceSettings.load(State({"source.filebased.data.directory": str(tmp_path)}))
    fs, _ = open_fs(str(tmp_path), None)
    assert [csv_line(fs, str(tmp_path / "f.csv"), settings, r) for r in range(4)] == [2, 5, 6, None]
    assert record_place(fs, str(tmp_path / "f.parquet"), settings, 6) == f"{tmp_path}/f.parquet record 7"
