"""A file-based job of event files, for the startpoint tests."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pyarrow.parquet as pq

from tests.support.cli import run_gpy_here

FIRST_RUN = [k * 100 + i for k in range(3) for i in range(10)]  # the ids of the job fixture's three files


class EventJob:
    """A file job whose file k holds rows k*100 .. k*100+9 with event times on day k (hour = row)."""

    def __init__(self, root: Path, **extra: str) -> None:
        self.root = root
        self.data = root / "data"
        self.final = root / "published"
        self.state = root / "state"
        self.file = root / "events.pull"
        self.data.mkdir(parents=True, exist_ok=True)
        self.files = 0
        props = {
            "job.name": "Events",
            "source.class": "FileBasedSource",
            "source.filebased.data.directory": str(self.data),
            "source.event.time.column": "at",
            "converter.classes": "TypeCastConverter",
            "converter.cast.fields": "at:timestamp[ms, UTC]",
            "writer.file.pathType": "TABLENAME",
            "extract.table.name": "events",
            "task.data.root.dir": str(root / "work"),
            "data.publisher.final.dir": str(self.final),
            "state.store.dir": str(self.state),
            "task.maxretries": "0",
            "taskexecutor.threadpool.size": "1",
            **{k.replace("__", "."): v for k, v in extra.items()},
        }
        self.file.write_text("".join(f"{k}={v}\n" for k, v in props.items() if v is not None))

    def add(self, count: int = 1) -> None:
        for _ in range(count):
            k = self.files
            rows = "\n".join(f"{k * 100 + i},2024-01-{k + 1:02d}T{i:02d}:00:00Z" for i in range(10))
            path = self.data / f"f{k:03d}.csv"
            path.write_text(f"id,at\n{rows}\n")
            os.utime(path, (1_700_000_000 + k * 100, 1_700_000_000 + k * 100))
            self.files += 1

    def run(self, *args: str, expect: int = 0, env: dict | None = None) -> subprocess.CompletedProcess:
        result = run_gpy_here("run", str(self.file), "--engine", "local", *args, env=env)
        assert result.returncode == expect, result.stdout + result.stderr[-3000:]
        return result

    def startpoint(self, *args: str) -> None:
        done = run_gpy_here("state", "startpoint", "set", str(self.file), "--dataset", "", *args)
        assert done.returncode == 0, done.stderr

    def pending_startpoints(self) -> dict:
        listed = run_gpy_here("state", "startpoint", "list", str(self.file), "--json")
        assert listed.returncode == 0, listed.stderr
        return json.loads(listed.stdout)

    def ids(self) -> list[int]:
        return sorted(i for f in self.final.rglob("*.parquet") for i in pq.read_table(f).column("id").to_pylist())
