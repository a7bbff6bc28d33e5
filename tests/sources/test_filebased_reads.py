"""The file source reads each file once: the first file's reader, opened for the schema, goes on to the records."""

from __future__ import annotations

import uuid

import fsspec
import pytest
from fsspec.implementations.memory import MemoryFileSystem

from gobblin_py.connectors.files.filebased import FileBasedSource
from gobblin_py.sdk.run_states import SourceState
from gobblin_py.sdk.states import WorkUnitState


@pytest.fixture
def folder():
    fs = fsspec.filesystem("memory")
    root = f"/gpy-reads-{uuid.uuid4().hex}"
    for k in range(3):
        rows = "".join(f"{k * 1000 + i},name {i}\n" for i in range(500))
        fs.pipe(f"{root}/data/part{k}.csv", ("id,name\n" + rows).encode())
    yield fs, root
    fs.rm(root, recursive=True)


def test_each_file_is_opened_once_and_every_record_read(folder, monkeypatch):
    fs, root = folder
    opened: list[str] = []
    real_open = MemoryFileSystem._open

    def counting_open(self, path, mode="rb", **kwargs):
        if "r" in mode:
            opened.append(path)
        return real_open(self, path, mode, **kwargs)

    props = {"source.filebased.data.directory": f"memory://{root}/data", "extract.namespace": "shop",
             "extract.table.name": "people", "source.max.number.of.partitions": "1"}
    units = FileBasedSource().get_workunits(SourceState(props))
    monkeypatch.setattr(MemoryFileSystem, "_open", counting_open)
    ids = []
    for unit in units:
        extractor = FileBasedSource().get_extractor(WorkUnitState(unit, props))
        schema = extractor.get_schema()
        assert schema.names == ["id", "name"]
        for batch in extractor.read_batches():
            ids += batch.column("id").to_pylist()
        extractor.close()
    assert sorted(ids) == sorted(k * 1000 + i for k in range(3) for i in range(500))
    assert sorted(opened) == sorted(set(opened)) and len(opened) == 3  # no file opened twice
