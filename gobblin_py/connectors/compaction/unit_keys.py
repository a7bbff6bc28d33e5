"""What a compaction work unit carries (its ``gpy.compaction.*`` keys), shared by its source, writer, publisher
and cluster task."""

from __future__ import annotations

import json

from gobblin_py.connectors.compaction.finder import InputFile

PREFIX = "gpy.compaction."
MODE_KEY, FILES_KEY, FORMAT_KEY = PREFIX + "mode", PREFIX + "files", PREFIX + "format"
DEST_KEY, NEW_KEY, OLD_KEY = PREFIX + "dest", PREFIX + "new", PREFIX + "old"
MARKER_KEY, LATE_TARGET_KEY, CONSUME_KEY = PREFIX + "marker.ms", PREFIX + "late.target", PREFIX + "consume"
MARK_COMPLETE_KEY = PREFIX + "mark.complete"
INIT_KEY = "compaction.init.time"


def encode_files(files: list[InputFile]) -> str:
    """The files of a work unit as compact JSON (path, size, modification time)."""
    return json.dumps([[f.path, f.size, f.mtime_ms] for f in files], separators=(",", ":"))


def decode_files(text: str | None) -> list[InputFile]:
    """The files :func:`encode_files` encoded."""
    return [InputFile(p, int(s), int(m)) for p, s, m in json.loads(text or "[]")]
