"""A lake the way gpy's Kafka → files job writes it: a gpy ingestion run (the file source standing in for Kafka:
the writer side is the same) partitions events by their time with ``TimeBasedWriterPartitioner`` into
``<lake>/<namespace>/<table>/<prefix>/YYYY/MM/dd/HH[/mm]/part….<ext>``; duplicates are events delivered twice
(ingested again in a later file), late files are what a later ingestion adds to an hour already compacted.

Events carry a unique ``event_id``; a re-delivery repeats the id and every field, an update repeats the id with a
greater ``version``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from tests.support.cli import run_gpy_here

SCHEMA = pa.schema([("event_id", pa.int64()), ("version", pa.int64()), ("user", pa.string()),
                    ("at", pa.timestamp("ms", "UTC"))])
START = datetime(2017, 4, 3, 10, 0, tzinfo=timezone.utc)
GOBBLIN_TEST_JOBS = Path(__file__).resolve().parents[2] / "jobs" / "compaction"
PLACEHOLDER = "/data/compaction"  # the base path the job files under jobs/compaction name


def event(event_id: int, minute: int, version: int = 0) -> dict:
    """Event ``event_id`` at ``minute`` minutes past 2017-04-03 10:00 UTC."""
    return {"event_id": event_id, "version": version, "user": f"u{event_id % 7}", "at": START + timedelta(minutes=minute)}


class Lake:
    """Ingests events into ``<root>/lake`` with gpy (``fmt`` AVRO or PARQUET, ``prefix`` and time ``pattern`` of
    the folders), and runs compaction jobs over it."""

    def __init__(self, root: Path, fmt: str = "AVRO", prefix: str = "minutely", pattern: str = "YYYY/MM/dd/HH/mm",
                 path_type: str = "NAMESPACE_TABLE") -> None:
        self.root, self.lake, self.incoming = root, root / "lake", root / "incoming"
        self.dataset = self.lake / ("Identity/MemberAccount" if path_type == "NAMESPACE_TABLE" else "MemberAccount")
        self.incoming.mkdir(parents=True, exist_ok=True)
        self.files = 0
        self.ext = fmt.lower()
        self.ingest_job = root / "ingest.pull"
        self.ingest_job.write_text("\n".join([
            "job.name=Ingest",
            "source.class=gobblin_py.connectors.files.filebased.FileBasedSource",
            f"source.filebased.data.directory={self.incoming}",
            "extract.namespace=Identity", "extract.table.name=MemberAccount",
            f"writer.output.format={fmt}", f"writer.file.pathType={path_type}",
            "writer.partitioner.class=TimeBasedWriterPartitioner", "writer.partition.columns=at",
            f"writer.partition.pattern={pattern}", f"writer.partition.prefix={prefix}",
            "writer.partition.timezone=UTC",
            f"task.data.root.dir={root / 'ingest-work'}", f"data.publisher.final.dir={self.lake}",
            f"state.store.dir={root / 'ingest-state'}", "task.maxretries=0",
        ]) + "\n")

    def ingest(self, events: Iterable[dict]) -> None:
        """One more file of events, pulled by one ingestion run (its files get fresh modification times)."""
        rows = list(events)
        pq.write_table(pa.Table.from_pylist(rows, schema=SCHEMA), self.incoming / f"events-{self.files:04d}.parquet")
        self.files += 1
        result = run_gpy_here("run", str(self.ingest_job), "--engine", "local")
        assert result.returncode == 0, result.output if hasattr(result, "output") else result.stdout

    def gobblin_job(self, name: str, **extra: str) -> Path:
        """A job file of ``jobs/compaction`` with its base path moved into this lake (nothing else changed), plus
        ``extra`` keys."""
        text = (GOBBLIN_TEST_JOBS / name).read_text().replace(PLACEHOLDER, str(self.lake))
        text = text.replace("/tmp/compaction/", f"{self.root}/tmp/")
        path = self.root / name
        path.write_text(text + "".join(f"{k.replace('__', '.')}={v}\n" for k, v in extra.items()))
        return path

    def run(self, job: Path, code: int = 0, engine: str = "local") -> str:
        spark = ("--master", "local[2]") if engine == "spark" else ()  # the test run's one SparkSession
        result = run_gpy_here("run", str(job), "--engine", engine, *spark)
        assert result.returncode == code, result.stdout + result.stderr
        return result.stdout + result.stderr

    def records(self, folder: str) -> list[dict]:
        """Every record in the data files below ``<dataset>/<folder>`` (hidden ones skipped)."""
        from gobblin_py.connectors.compaction.finder import list_files
        from gobblin_py.connectors.compaction.inputs import dataset_schema, format_of, read_files
        from gobblin_py.io import fs as fsutil

        fs, root = fsutil.open_fs(str(self.dataset / folder))
        files = list_files(fs, root)
        if not files:
            return []
        fmt = format_of(files)
        rows = []
        for batch in read_files(fs, files, fmt, dataset_schema(fs, files, fmt)):
            rows.extend(batch.to_pylist())
        return rows

    def data_files(self, folder: str) -> list[str]:
        base = self.dataset / folder
        return sorted(str(p.relative_to(base)) for p in base.rglob("*") if p.is_file())


def ids(rows: list[dict]) -> list[tuple[int, int]]:
    """``(event_id, version)`` of each row, sorted (duplicates kept, to be seen)."""
    return sorted((r["event_id"], r["version"]) for r in rows)


def age(path: Path, seconds: float) -> None:
    """Make every file below ``path`` ``seconds`` older (a file written before a marker)."""
    for p in path.rglob("*"):
        if p.is_file():
            st = p.stat()
            os.utime(p, (st.st_atime - seconds, st.st_mtime - seconds))
