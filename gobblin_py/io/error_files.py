"""Error files: the rows a policy took out of a task's stream, one JSON object a line, as Gobblin's row-level
``ERR_FILE`` policy writes them.

Each sits in the folder ``qualitychecker.row.err.file`` names (on ``writer.fs.uri``), one per policy and task:
``<policy>-<task id>[.<branch>][-<millis>].err``. With the time stamp (the default) every task attempt writes a
file of its own; without it a local file is appended to.
"""

from __future__ import annotations

import json
import posixpath
import re
import time
from collections.abc import Iterable
from typing import Any

from gobblin_py.io import fs as fsutil


class ErrorFile:
    """One task's error file of one policy, created when the first row is written."""

    def __init__(self, directory: str, fs_uri: str | None, policy: str, task_id: str, branch: int = -1,
                 stamped: bool = True) -> None:
        self.directory = directory
        self.fs_uri = fs_uri
        safe = re.sub(r"[^A-Za-z0-9._-]", "-", policy)
        suffix = f".{branch}" if branch >= 0 else ""
        self.stamped = stamped
        self.name = f"{safe}-{task_id}{suffix}" + (f"-{int(time.time() * 1000)}" if stamped else "") + ".err"
        self.path: str | None = None
        self._handle: Any = None

    def write(self, records: Iterable[dict]) -> None:
        """Append ``records``, one JSON object a line (values JSON has no form for as text)."""
        if self._handle is None:
            fs, root = fsutil.open_fs(self.directory, self.fs_uri)
            fsutil.makedirs(fs, root)
            self.path = posixpath.join(root, self.name)
            self._handle = fs.open(self.path, "ab" if not self.stamped and fsutil.is_local(fs) else "wb")
        self._handle.write("".join(json.dumps(r, default=str, ensure_ascii=False) + "\n"
                                   for r in records).encode("utf-8"))

    def close(self) -> None:
        if self._handle is not None:
            handle, self._handle = self._handle, None
            handle.close()
