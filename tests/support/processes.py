"""The live processes of a pid or a session, read from /proc."""

from __future__ import annotations

from pathlib import Path


def live_where(field: int, value: int) -> set[int]:
    """Live (not zombie) processes whose ``/proc/<pid>/stat`` field ``field`` (counted after the state) is ``value``."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[field]) == value and fields[0] != "Z":
                found.add(int(entry.name))
    return found


def in_session(sid: int) -> set[int]:
    """Live (not zombie) processes of session ``sid``."""
    return live_where(3, sid)
