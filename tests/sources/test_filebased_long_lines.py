"""Long JSON lines and CSV rows: read when they fit the block size, else an error naming the file and the key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gobblin_py.sdk.errors import UsageError
from tests.sources.test_filebased_schema import read_all

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
