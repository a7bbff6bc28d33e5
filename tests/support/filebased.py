"""Reading a folder of files through the file-based source, for the source tests."""

from __future__ import annotations

from pathlib import Path

from gobblin_py.connectors.files.filebased import FileBasedSource
from gobblin_py.sdk.run_states import SourceState
from gobblin_py.sdk.states import WorkUnitState


def read_all(folder: Path, **extra: str) -> list[dict]:
    props = {"source.filebased.data.directory": str(folder), "extract.table.name": "t", **extra}
    rows: list[dict] = []
    for unit in FileBasedSource().get_workunits(SourceState(props)):
        extractor = FileBasedSource().get_extractor(WorkUnitState(unit, props))
        try:
            extractor.get_schema()
            for batch in extractor.read_batches():
                rows += batch.to_pylist()
        finally:
            extractor.close()
    return rows
