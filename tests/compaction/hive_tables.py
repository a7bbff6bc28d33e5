"""Snapshot and delta tables of members, as a Hive compactor's inputs: Avro files (written with fastavro, their
Avro schemas as a Hive table would carry them) or Parquet files; and the job file of jobs/compaction that merges
them, moved into a test's folder."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from tests.compaction.lake import GOBBLIN_TEST_JOBS, PLACEHOLDER
from tests.support.cli import run_gpy_here

BASE = [{"name": "member_id", "type": "long"}, {"name": "name", "type": "string"},
        {"name": "pulled", "type": "string"}]
WITH_EMAIL = [*BASE, {"name": "email", "type": ["null", "string"], "default": None}]


def member(member_id: int, pulled: str, email: bool = False) -> dict:
    row = {"member_id": member_id, "name": f"m{member_id}-{pulled}", "pulled": pulled}
    if email:
        row["email"] = f"{member_id}@{pulled}"
    return row


def write_table(folder: Path, rows: list[dict], fmt: str, fields: list[dict] | None = None, part: int = 0) -> Path:
    """One file of ``rows`` in ``folder`` (``fmt`` avro or parquet)."""
    import fastavro

    fields = fields or (WITH_EMAIL if any("email" in r for r in rows) else BASE)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"part-{part:04d}.{fmt}"
    if fmt == "avro":
        schema = fastavro.parse_schema({"type": "record", "name": "Member", "namespace": "test", "fields": fields})
        with path.open("wb") as out:
            fastavro.writer(out, schema, [{f["name"]: r.get(f["name"]) for f in fields} for r in rows])
    else:
        types = {"long": pa.int64(), "string": pa.string()}
        schema = pa.schema([(f["name"], types.get(f["type"], pa.string()) if isinstance(f["type"], str)
                             else pa.string()) for f in fields])
        pq.write_table(pa.Table.from_pylist([{f["name"]: r.get(f["name"]) for f in fields} for r in rows],
                                            schema=schema), path)
    return path


def read_rows(folder: Path) -> list[dict]:
    """Every record of the data files below ``folder`` (hidden files left out)."""
    from gobblin_py.connectors.compaction.finder import list_files
    from gobblin_py.connectors.compaction.inputs import dataset_schema, format_of, read_files
    from gobblin_py.io import fs as fsutil

    fs, root = fsutil.open_fs(str(folder))
    files = list_files(fs, root)
    fmt = format_of(files)
    return [row for batch in read_files(fs, files, fmt, dataset_schema(fs, files, fmt)) for row in batch.to_pylist()]


class Members:
    """A snapshot and two deltas of members below ``<root>/lake/members``, merged by the job of jobs/compaction."""

    def __init__(self, root: Path, fmt: str = "avro") -> None:
        self.root, self.fmt = root, fmt
        self.base = root / "lake" / "members"
        self.output = self.base / "merged"

    def job(self, **extra: str) -> Path:
        text = (GOBBLIN_TEST_JOBS / "hive_snapshot_delta.pull").read_text().replace(PLACEHOLDER, str(self.root / "lake"))
        text = text.replace("/tmp/compaction/", f"{self.root}/tmp/")
        lines = [line for line in text.splitlines() if line.split("=", 1)[0] not in extra]
        path = self.root / "hive_snapshot_delta.pull"
        path.write_text("\n".join(lines + [f"{k}={v}" for k, v in extra.items() if v is not None]) + "\n")
        return path

    def run(self, job: Path, code: int = 0, engine: str = "local") -> str:
        spark = ("--master", "local[2]") if engine == "spark" else ()
        result = run_gpy_here("run", str(job), "--engine", engine, *spark)
        assert result.returncode == code, result.stdout + result.stderr
        return result.stdout + result.stderr

    def merged(self) -> dict[int, dict]:
        """The output's records by member id (asserting each id is there once)."""
        rows = read_rows(self.output)
        by_id = {r["member_id"]: r for r in rows}
        assert len(by_id) == len(rows), "a key twice in the output"
        return by_id
