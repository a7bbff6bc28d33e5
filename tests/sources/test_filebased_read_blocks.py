"""CSV and JSON-lines files read to a dataset's known schema are parsed a megabyte at a time (memory stays small),
while ``source.filebased.json.block.size`` / ``csv.block.size`` still bound the longest row: a longer row, anywhere
in a file, is read with the configured block and every record arrives exactly once, in order."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import fsspec
import pyarrow.parquet as pq
import pytest

from gobblin_py.connectors.files import file_readers
from gobblin_py.connectors.files.file_readers import open_file
from gobblin_py.connectors.files.file_settings import FileSourceSettings
from gobblin_py.connectors.files.filebased import FileBasedSource
from gobblin_py.io.paced_input import AHEAD, held_reads
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.run_states import SourceState
from gobblin_py.sdk.states import WorkUnitState
from tests.support.cli import run_gpy
from tests.support.waiting import wait_until

JSON_KEY = "source.filebased.json.block.size"
CSV_KEY = "source.filebased.csv.block.size"
SHORT = 30_000  # short lines (about 1.4 MB of them) on either side of a long one


def write_lines(path: Path, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".csv":
        path.write_text(",".join(records[0]) + "\n" + "".join(",".join(map(str, r.values())) + "\n" for r in records))
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def records(start: int, count: int, long_at: int | None = None, length: int = 0, **more: object) -> list[dict]:
    return [{"id": i, "text": "x" * length if i == long_at else f"t{i}", **more} for i in range(start, start + count)]


def batches_by_file(folder: Path, **extra: str) -> dict[str, list]:
    """The batches the file source reads, per file (every file of the folder is one dataset: a known schema)."""
    props = {"source.filebased.data.directory": str(folder), "extract.table.name": "t", **extra}
    out: dict[str, list] = {}
    for unit in FileBasedSource().get_workunits(SourceState(props)):
        extractor = FileBasedSource().get_extractor(WorkUnitState(unit, props))
        try:
            extractor.get_schema()
            (path,) = extractor.paths
            out[Path(path).name] = list(extractor.read_batches())
        finally:
            extractor.close()
    return out


@pytest.mark.parametrize("ext", ["jsonl", "csv"])
def test_files_read_to_the_dataset_schema_arrive_a_megabyte_at_a_time(tmp_path, ext):
    write_lines(tmp_path / "in" / f"a.{ext}", records(0, 10, pad="p"))
    write_lines(tmp_path / "in" / f"b.{ext}", records(10, 40_000, pad="p" * 100))  # about 5 MB
    read = batches_by_file(tmp_path / "in")
    sizes = [b.nbytes for b in read[f"b.{ext}"]]
    assert sum(b.num_rows for b in read[f"b.{ext}"]) == 40_000
    assert len(sizes) >= 4 and max(sizes) < 4 << 20, sizes  # not one 16 MB block of the configured size


@pytest.mark.parametrize("ext", ["jsonl", "csv"])
def test_a_local_file_within_the_read_ahead_is_read_by_arrow_alone(tmp_path, ext, monkeypatch):
    # pacing such a file bounds nothing (Arrow may read it all anyway) and costs a Python stream each read: a job
    # of many small files pays for it on every one
    block = 64 << 10
    small = write_lines(tmp_path / f"small.{ext}", records(0, 2_000))  # under AHEAD blocks
    large = write_lines(tmp_path / f"large.{ext}", records(0, 40_000, pad="p" * 60))
    assert small.stat().st_size <= AHEAD * block < large.stat().st_size
    settings = FileSourceSettings.load({"source.filebased.data.directory": str(tmp_path)})
    paced_streams: list = []

    class Counted(file_readers.PacedInput):
        def __init__(self, raw, *args, **kwargs) -> None:
            paced_streams.append(raw)
            super().__init__(raw, *args, **kwargs)

    monkeypatch.setattr(file_readers, "PacedInput", Counted)
    for path, paced in ((small, False), (large, True)):
        paced_streams.clear()
        opened = open_file(fsspec.filesystem("file"), str(path), settings, block_size=block)
        try:
            assert len(paced_streams) == paced, path.name
            rows = [i for b in opened.batches for i in b.column("id").to_pylist()]
            assert rows == list(range(2_000 if path is small else 40_000))
        finally:
            opened.stream.close()


@pytest.mark.parametrize("ext", ["jsonl", "csv"])
@pytest.mark.parametrize("long_at", [0, SHORT], ids=["first-line", "mid-file"])
def test_a_row_longer_than_the_read_block_is_read_with_the_configured_block_exactly_once(tmp_path, long_at, ext):
    write_lines(tmp_path / "in" / f"a.{ext}", records(0, 10))
    write_lines(tmp_path / "in" / f"b.{ext}", records(10, 2 * SHORT, long_at=10 + long_at, length=3 << 20))
    read = batches_by_file(tmp_path / "in")
    rows = [r for b in read[f"b.{ext}"] for r in b.to_pylist()]
    assert [r["id"] for r in rows] == list(range(10, 10 + 2 * SHORT))
    assert len(rows[long_at]["text"]) == 3 << 20
    assert all(len(r["text"]) < 10 for i, r in enumerate(rows) if i != long_at)


@pytest.mark.parametrize(("ext", "key"), [("jsonl", JSON_KEY), ("csv", CSV_KEY)])
def test_a_row_longer_than_the_configured_block_past_the_first_megabyte_names_the_key(tmp_path, ext, key):
    write_lines(tmp_path / "in" / f"a.{ext}", records(0, 10))
    path = write_lines(tmp_path / "in" / f"b.{ext}", records(10, 2 * SHORT, long_at=10 + SHORT, length=5 << 20))
    with pytest.raises(UsageError) as err:
        batches_by_file(tmp_path / "in", **{key: "2MB"})
    assert str(path) in str(err.value) and key in str(err.value)


def test_a_field_null_in_the_first_megabyte_keeps_its_type_learnt_from_the_configured_block(tmp_path):
    # the dataset's schema does not type 'x' (null in the first file): it is learnt from each file's first block
    write_lines(tmp_path / "in" / "a.jsonl", records(0, 10, x=None))
    late = records(10, 2 * SHORT, x=None)
    late[SHORT]["x"] = "typed at last"
    write_lines(tmp_path / "in" / "b.jsonl", late)
    rows = [r for b in batches_by_file(tmp_path / "in")["b.jsonl"] for r in b.to_pylist()]
    assert [r["id"] for r in rows] == list(range(10, 10 + 2 * SHORT))
    assert rows[SHORT]["x"] == "typed at last"


def test_a_run_publishes_each_record_once_around_a_long_line(tmp_path):
    write_lines(tmp_path / "data" / "a.jsonl", records(0, 10))
    write_lines(tmp_path / "data" / "b.jsonl", records(10, 2 * SHORT, long_at=10 + SHORT, length=3 << 20))
    (tmp_path / "job.pull").write_text(
        "job.name=Lines\nsource.class=gobblin_py.connectors.files.filebased.FileBasedSource\n"
        "source.filebased.data.directory=data\nextract.namespace=shop\nextract.table.name=lines\n"
        "writer.output.format=PARQUET\ntask.data.root.dir=work\ndata.publisher.final.dir=published\n"
        "state.store.dir=state\ntask.maxretries=0\n")
    result = run_gpy("run", "job.pull", "--engine", "local", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    ids = sorted(i for p in (tmp_path / "published").rglob("*.parquet") for i in pq.read_table(p)["id"].to_pylist())
    assert ids == list(range(10 + 2 * SHORT))


@pytest.mark.parametrize("ext", ["jsonl", "csv"])
def test_a_file_smaller_than_its_block_is_read_in_one_block_of_its_size(tmp_path, ext, monkeypatch):
    # thousands of one-row datasets: none has a block of megabytes allocated for it; the types still come from the
    # whole file, as with the configured block (a CSV id that is text only past the first 64 KB makes it text)
    from gobblin_py.connectors.files import file_readers

    blocks: list[int] = []
    for module, name in ((file_readers.pa_csv, "open_csv"), (file_readers.pa_json, "open_json")):
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, real=real, **k: blocks.append(k["read_options"].block_size)
                            or real(*a, **k))
    write_lines(tmp_path / "one" / f"one.{ext}", records(0, 1))
    rows = records(0, 3000, pad="p" * 20)
    if ext == "csv":
        rows[-1]["id"] = "late"
    big = write_lines(tmp_path / "big" / f"big.{ext}", rows)
    assert 64 << 10 < big.stat().st_size < 1 << 20
    assert sum(b.num_rows for b in batches_by_file(tmp_path / "one")[f"one.{ext}"]) == 1
    read = batches_by_file(tmp_path / "big")[f"big.{ext}"]
    assert sum(b.num_rows for b in read) == 3000 and len(read) == 1
    assert str(read[0].schema.field("id").type) == ("string" if ext == "csv" else "int64")
    assert blocks == [64 << 10, big.stat().st_size + 1]


@pytest.mark.parametrize("ext", ["jsonl", "csv"])
def test_a_file_is_read_a_few_blocks_ahead_of_the_batches_taken(tmp_path, ext):
    """Arrow's own read-ahead is 32 blocks a file, held while the task writes a row group; gpy's is AHEAD."""
    block = 64 << 10
    path = write_lines(tmp_path / f"a.{ext}", records(0, 40_000, pad="p" * 60))  # about 3.5 MB: 50 blocks
    settings = FileSourceSettings.load({"source.filebased.data.directory": str(tmp_path)})
    opened = open_file(fsspec.filesystem("file"), str(path), settings, block_size=block)
    try:
        taken = [next(opened.batches) for _ in range(2)]
        # the task busy elsewhere: Arrow's reader runs ahead until its next read is held (without pacing it would
        # read 32 blocks ahead and never be held: the wait fails, naming it)
        wait_until(lambda: held_reads() > 0, "Arrow's read-ahead held AHEAD blocks beyond the batches taken")
        assert opened.stream.tell() <= (len(taken) + AHEAD + 4) * block
        taken += list(opened.batches)
        assert [i for b in taken for i in b.column("id").to_pylist()] == list(range(40_000))
    finally:
        opened.stream.close()


@pytest.mark.parametrize("ext", ["jsonl", "csv"])
@pytest.mark.parametrize("long_at", [0, SHORT], ids=["first-line", "mid-file"])
def test_a_row_longer_than_the_read_ahead_never_holds_the_read(tmp_path, long_at, ext):
    # the row spans more blocks than are read ahead: Arrow reads them (while it opens, for a first row) before it
    # finds the row too long for its block, and the file is read again with the configured block
    write_lines(tmp_path / "in" / f"a.{ext}", records(0, 10))
    write_lines(tmp_path / "in" / f"b.{ext}", records(10, 2 * SHORT, long_at=10 + long_at, length=(AHEAD + 2) << 20))
    read: list = []
    reading = threading.Thread(target=lambda: read.append(batches_by_file(tmp_path / "in")), daemon=True)
    reading.start()
    reading.join(60)  # milliseconds when reads pass; a read held for a consumer waiting on it is held for ever
    assert not reading.is_alive(), "the file's reader waits on a read held for it"
    rows = [r for b in read[0][f"b.{ext}"] for r in b.to_pylist()]
    assert [r["id"] for r in rows] == list(range(10, 10 + 2 * SHORT))
    assert len(rows[long_at]["text"]) == (AHEAD + 2) << 20



def quoted_lines(path: Path, rows: list[tuple[int, str]]) -> Path:
    """RFC 4180 CSV: every value quoted, line breaks inside them."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("id,text\n" + "".join(f'{i},"{text}"\n' for i, text in rows))
    return path


def test_quoted_values_with_line_breaks_are_read_across_every_block_boundary(tmp_path):
    # read to the dataset's schema (learnt from a.csv), b.csv is parsed a megabyte at a time: short multi-line
    # values fall across block boundaries, and one of 2 MB holding a million line breaks spans two blocks
    quoted_lines(tmp_path / "in" / "a.csv", [(0, "a\nb")])
    rows = [(i, f"street {i}\ncity {i}") for i in range(1, 60_000)]
    rows[30_000] = (30_001, "y\n" * 1_000_000)
    quoted_lines(tmp_path / "in" / "b.csv", rows)
    read = [r for b in batches_by_file(tmp_path / "in")["b.csv"] for r in b.to_pylist()]
    assert [r["id"] for r in read] == [i for i, _ in rows]
    assert read[30_000]["text"] == "y\n" * 1_000_000 and read[5]["text"] == "street 6\ncity 6"


def test_a_quoted_value_longer_than_the_configured_block_names_the_file_and_the_key(tmp_path):
    quoted_lines(tmp_path / "in" / "a.csv", [(0, "a")])
    path = quoted_lines(tmp_path / "in" / "b.csv", [(1, "y\n" * 2_000_000), (2, "z")])  # 4 MB
    with pytest.raises(UsageError) as err:
        batches_by_file(tmp_path / "in", **{CSV_KEY: "1MB"})
    assert str(path) in str(err.value) and CSV_KEY in str(err.value) and "quote" in str(err.value)
