"""The compaction writer deals record groups to two files encoded at once: every record is written once, the files
are named as Gobblin names reducer output, and a failed encoding fails the commit with nothing published."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gobblin_py.connectors.compaction import writer as writer_module
from gobblin_py.connectors.compaction.unit_keys import FORMAT_KEY, INIT_KEY, MODE_KEY, NEW_KEY
from gobblin_py.connectors.compaction.writer import CompactionWriter
from gobblin_py.sdk.states import WorkUnit, WorkUnitState

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string())])


def _writer(folder) -> CompactionWriter:
    unit = WorkUnit.create()
    for key, value in {MODE_KEY: "compact", FORMAT_KEY: "parquet", NEW_KEY: str(folder), INIT_KEY: "17"}.items():
        unit.set_prop(key, value)
    return CompactionWriter(WorkUnitState(unit), SCHEMA, "w0")


def _batch(start: int, rows: int) -> pa.RecordBatch:
    ids = list(range(start, start + rows))
    return pa.record_batch([pa.array(ids, pa.int64()), pa.array([f"n{i}" for i in ids])], schema=SCHEMA)


def test_groups_go_to_two_files_and_every_record_is_written_once(tmp_path, monkeypatch):
    monkeypatch.setattr(writer_module, "GROUP_BYTES", _batch(0, 100).nbytes * 2)
    writer = _writer(tmp_path / "new")
    for start in range(0, 1000, 100):
        writer.write(_batch(start, 100))
    written = writer.commit()
    names = [p.rsplit("/", 1)[1] for p in written]
    assert [n.split(".", 2)[2] for n in names] == ["0.parquet", "1.parquet"]  # part-r-<records>.<stamp>.<n>
    ids = sorted(i for p in written for i in pq.read_table(p).column("id").to_pylist())
    assert ids == list(range(1000))
    assert sum(int(n.split(".")[0].removeprefix("part-r-")) for n in names) == 1000 == writer.records_written
    assert sorted(f.name for f in (tmp_path / "new").iterdir()) == sorted(names)


def test_a_dataset_smaller_than_a_group_is_one_file(tmp_path):
    writer = _writer(tmp_path / "new")
    writer.write(_batch(0, 10))
    assert [p.rsplit("/", 1)[1] for p in writer.commit()] == ["part-r-10.17.0.parquet"]


def test_a_failed_encoding_fails_the_commit_and_cleanup_leaves_no_file(tmp_path, monkeypatch):
    monkeypatch.setattr(writer_module, "GROUP_BYTES", 1)
    real_write = writer_module.PartFile.write

    def write(self, batch):
        if self.n == 1:
            raise OSError("disk full")
        real_write(self, batch)

    monkeypatch.setattr(writer_module.PartFile, "write", write)
    writer = _writer(tmp_path / "new")
    with pytest.raises(OSError, match="disk full"):  # at the next group for that file, or at the commit
        for start in range(0, 40, 10):
            writer.write(_batch(start, 10))
        writer.commit()
    writer.cleanup()
    assert list((tmp_path / "new").iterdir()) == []
