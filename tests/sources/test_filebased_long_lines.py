"""Long JSON lines and CSV rows: read when they fit the block size, else an error naming the file and the key."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest

from gobblin_py.sdk.errors import UsageError
from tests.support.cli import run_gpy
from tests.support.filebased import read_all

JSON_KEY = "source.filebased.json.block.size"
CSV_KEY = "source.filebased.csv.block.size"


def json_lines(folder: Path, long_at: int, length: int, name: str = "events.jsonl") -> Path:
    folder.mkdir(exist_ok=True)
    lines = [json.dumps({"id": i, "text": "x" * (length if i == long_at else 10)}) for i in range(4)]
    path = folder / name
    path.write_text("\n".join(lines) + "\n")
    return path


def test_json_lines_of_several_megabytes_read_with_the_default(tmp_path):
    json_lines(tmp_path / "in", long_at=2, length=3 << 20)  # Arrow's own default block (1 MB) fails on it
    rows = read_all(tmp_path / "in")
    assert [r["id"] for r in rows] == [0, 1, 2, 3]
    assert len(rows[2]["text"]) == 3 << 20


@pytest.mark.parametrize("long_at", [0, 2], ids=["first-line", "third-line"])
def test_a_json_line_longer_than_the_block_names_the_file_the_format_and_the_key(tmp_path, long_at):
    path = json_lines(tmp_path / "in", long_at=long_at, length=2 << 20)
    with pytest.raises(UsageError) as err:
        read_all(tmp_path / "in", **{JSON_KEY: "1MB"})
    message = str(err.value)
    assert str(path) in message and "JSON" in message and JSON_KEY in message
    assert "CSV" not in message and CSV_KEY not in message


def test_raising_the_json_block_size_reads_the_long_line(tmp_path):
    json_lines(tmp_path / "in", long_at=2, length=2 << 20)
    assert [r["id"] for r in read_all(tmp_path / "in", **{JSON_KEY: "4MB"})] == [0, 1, 2, 3]


def test_the_json_block_size_is_bounded(tmp_path):
    json_lines(tmp_path / "in", long_at=2, length=10)
    with pytest.raises(UsageError, match=JSON_KEY):
        read_all(tmp_path / "in", **{JSON_KEY: "1k"})


@pytest.mark.parametrize("long_at", [0, 2], ids=["first-row", "third-row"])
def test_a_csv_row_longer_than_the_block_names_the_csv_key(tmp_path, long_at):
    (tmp_path / "in").mkdir()
    rows = [f"{i},{'y' * ((2 << 20) if i == long_at else 3)}" for i in range(4)]
    path = tmp_path / "in" / "rows.csv"
    path.write_text("id,text\n" + "\n".join(rows) + "\n")
    with pytest.raises(UsageError) as err:
        read_all(tmp_path / "in", **{CSV_KEY: "1MB"})
    assert str(path) in str(err.value) and "CSV" in str(err.value) and CSV_KEY in str(err.value)


@pytest.mark.parametrize("key", [CSV_KEY, JSON_KEY])
def test_a_block_size_a_task_cannot_hold_is_refused_before_the_run(tmp_path, key):
    """A gigabyte block let a gigabyte row through the reader, to fail for memory minutes later naming no file."""
    (tmp_path / "in").mkdir()
    job = tmp_path / "job.pull"
    job.write_text(f"job.name=Long\nsource.class=FileBasedSource\nsource.filebased.data.directory={tmp_path / 'in'}\n"
                   f"extract.table.name=t\n{key}=1GB\n")
    result = run_gpy("validate", str(job))
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"key '{key}'" in result.stdout and "at most 268435456" in result.stdout, result.stdout


def test_a_long_csv_row_past_the_first_block_is_named_by_the_record_before_it(tmp_path):
    (tmp_path / "in").mkdir()
    rows = [f"{i},{'y' * ((200 << 10) if i == 2000 else 30)}" for i in range(3000)]
    path = tmp_path / "in" / "rows.csv"
    path.write_text("id,text\n" + "\n".join(rows) + "\n")
    with pytest.raises(UsageError) as err:
        read_all(tmp_path / "in", **{CSV_KEY: "64KB"})
    message = str(err.value)
    assert f"{path}: a CSV row (the row after its record " in message and CSV_KEY in message
    assert "is longer than" in message and "(at most 256MB)" in message


def test_running_out_of_memory_on_a_block_names_the_file_and_the_key(tmp_path):
    """What Arrow raises when a block and what is parsed from it do not fit in memory (as a 1 GB row does)."""
    from gobblin_py.connectors.files.file_readers import raise_for
    from gobblin_py.connectors.files.file_settings import FileSourceSettings
    from gobblin_py.sdk.errors import GobblinPyError

    settings = FileSourceSettings.load({"source.filebased.data.directory": str(tmp_path), CSV_KEY: "128MB"})
    with pytest.raises(GobblinPyError) as err:
        raise_for(pa.ArrowMemoryError("malloc of size 314572864 failed"), None, "/in/rows.csv", settings, None, "",
                  rows=1999)
    assert str(err.value).startswith(f"/in/rows.csv: out of memory reading it 134217728 bytes at a time ({CSV_KEY}), "
                                     "after its record 1999: malloc of size 314572864 failed; lower")
