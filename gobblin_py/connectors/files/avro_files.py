"""Gobblin's ``AvroFileSource``: every file under a folder read as Avro, each file pulled once.

It is the file source (:class:`~gobblin_py.connectors.files.filebased.FileBasedSource`) with Gobblin's rules for this
class: every file is Avro whatever its name, ``extract.table.type`` must be set, and the snapshot of pulled
files holds each file's qualified path without a modification time (``file:/data/x.avro``), as Gobblin's
does — so a state Gobblin wrote carries over, and a file rewritten under the same name is not pulled again.
Each record keeps the file's Avro schema (``source.schema`` overrides it as the reader schema).
"""

from __future__ import annotations

from dataclasses import dataclass

from gobblin_py.connectors.files.file_settings import FORMAT_KEY, FileSourceSettings
from gobblin_py.connectors.files.filebased import FileBasedSource
from gobblin_py.io import fs as fsutil
from gobblin_py.sdk.settings import Settings, setting
from gobblin_py.sdk.states import WorkUnit

TABLE_TYPES = ("SNAPSHOT_ONLY", "APPEND_ONLY", "SNAPSHOT_APPEND")


@dataclass(frozen=True)
class AvroFileSourceSettings(Settings):
    """Keys :class:`AvroFileSource` reads beyond the file source's."""

    table_type: str = setting("extract.table.type", required=True, choices=TABLE_TYPES,
                              doc="the extract's table type (Gobblin requires it for this source)")


@dataclass(frozen=True)
class _Settings(FileSourceSettings, AvroFileSourceSettings):
    """The file source's keys and the table type."""


class AvroFileSource(FileBasedSource):
    """Avro files under ``source.filebased.data.directory``, one work unit per new file (or group of files)."""

    settings_class = _Settings

    def get_workunits(self, state):
        AvroFileSourceSettings.load(state)
        return super().get_workunits(state)

    def snapshot_entry(self, path: str, mtime_ms: int) -> str:
        fs = getattr(self, "_fs", None)
        if fs is None or fsutil.is_local(fs):
            return f"file:{path}"
        return fs.unstrip_protocol(path)

    def configure_unit(self, unit: WorkUnit) -> None:
        unit.set_prop(FORMAT_KEY, "avro")
