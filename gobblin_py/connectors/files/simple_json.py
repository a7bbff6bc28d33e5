"""Gobblin's example ``SimpleJsonSource``: each file of ``source.filebased.files.to.pull`` read as lines of JSON.

One work unit per file (a URL or path on any fsspec filesystem), in one ``SNAPSHOT_ONLY`` extract
(``extract.namespace``, default ``ExampleNamespace``; table ``ExampleTable``). Each line is one text record
whose schema is ``source.schema`` (an Avro schema); ``SimpleJsonConverter`` makes Avro rows of them. With no
file listed the job has nothing to do, as in Gobblin. It keeps no state: every run reads the files again.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from gobblin_py.io import fs as fsutil
from gobblin_py.sdk.contracts import EmptyPlan, Extractor, Source
from gobblin_py.sdk.errors import GobblinPyError
from gobblin_py.sdk.run_states import SourceState
from gobblin_py.sdk.schema_meta import text_schema
from gobblin_py.sdk.settings import Settings, setting
from gobblin_py.sdk.states import Extract, WorkUnit, WorkUnitState

LINES_PER_BATCH = 65536


@dataclass(frozen=True)
class SimpleJsonSettings(Settings):
    """The keys of :class:`SimpleJsonSource`."""

    files: tuple[str, ...] = setting("source.filebased.files.to.pull", default=(),
                                     doc="files (paths or URLs) to read, one work unit each; none: nothing to do")
    namespace: str = setting("extract.namespace", default="ExampleNamespace", doc="the extract namespace")
    schema: str | None = setting("source.schema", doc="the Avro schema (JSON) of the records")
    use_auth: str | None = setting("source.conn.use.authentication", default_doc="false",
                                   doc="accepted for compatibility; credentials go in the URL or the filesystem's "
                                       "own configuration (fsspec)")


class SimpleJsonSource(Source):
    """One work unit per listed file; each line a JSON record as text."""

    settings_class = SimpleJsonSettings

    def get_workunits(self, state: SourceState) -> list[WorkUnit]:
        settings = SimpleJsonSettings.load(state)
        extract = Extract.create("SNAPSHOT_ONLY", settings.namespace, "ExampleTable")
        units = []
        for path in settings.files:
            unit = WorkUnit.create(extract)
            unit.set_prop("source.file", path)
            units.append(unit)
        return units

    def explain_empty_plan(self) -> EmptyPlan:
        """It plans nothing only when no file is listed."""
        return EmptyPlan("source.filebased.files.to.pull is empty", nothing_found=True)

    def get_extractor(self, state: WorkUnitState) -> Extractor:
        return SimpleJsonExtractor(state)


class SimpleJsonExtractor(Extractor):
    """The lines of ``source.file`` as text records (UTF-8)."""

    def __init__(self, state: WorkUnitState) -> None:
        self.state = state
        self.path = state.get_prop("source.file") or ""

    def get_schema(self) -> pa.Schema:
        return text_schema(self.state.get_prop("source.schema"), "json")

    def read_batches(self) -> Iterator[pa.RecordBatch]:
        schema = self.get_schema()
        fs, path = fsutil.open_fs(self.path, None)
        if not fs.exists(path):
            raise GobblinPyError(f"source.filebased.files.to.pull: {self.path}: no such file")
        with fs.open(path, "rb") as stream:
            lines: list[str] = []
            for raw in stream:
                lines.append(raw.decode("utf-8").rstrip("\r\n"))
                if len(lines) >= LINES_PER_BATCH:
                    yield self._batch(lines, schema)
                    lines = []
            if lines:
                yield self._batch(lines, schema)

    @staticmethod
    def _batch(lines: list[str], schema: pa.Schema) -> pa.RecordBatch:
        column = pa.array(lines, pa.string())
        return pa.RecordBatch.from_arrays([column.filter(pc.not_equal(column, ""))], schema=schema)
