"""SourceContract over the file sources: FileBasedSource per format (CSV, JSON lines, Parquet, Avro) and with a dataset
per sub-folder, AvroFileSource, DatePartitionedAvroFileSource."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq

from gobblin_py.testing import ContractJob, SourceContract

ROWS = 4
AVRO_SCHEMA = {"type": "record", "name": "Order", "namespace": "contract",
               "fields": [{"name": "id", "type": "long"}, {"name": "note", "type": ["null", "string"]}]}


def modified_at(batch: int) -> int:
    """The modification time (epoch seconds) of the file of ``batch``: later batches, later files."""
    return 1_700_000_000 + batch * 100


def records(batch: int) -> list[dict]:
    """``ROWS`` records with ids ``batch*100+1 …`` (a null note now and then)."""
    return [{"id": batch * 100 + i, "note": None if i % 3 == 0 else f"note, {i}"} for i in range(1, ROWS + 1)]


class FileSourceSuite(SourceContract):
    """The file source on one format: ``add_data`` writes one new file per batch (one work unit each)."""

    source_class = "FileBasedSource"
    supports_startpoints = True
    extension = ""

    def make_job(self, workdir: Path) -> dict[str, str]:
        return {"source.filebased.data.directory": str(workdir / "data"), "extract.namespace": "contract",
                "extract.table.name": "orders"}

    def add_data(self, job: ContractJob, batch: int) -> list[int]:
        rows = records(batch)
        self.write_at(job.data / f"orders-{batch:03d}.{self.extension}", rows, batch)
        return [r["id"] for r in rows]

    def write_at(self, path: Path, rows: list[dict], batch: int) -> None:
        """Write the file of ``batch`` and give it its modification time."""
        self.write(path, rows)
        os.utime(path, (modified_at(batch), modified_at(batch)))

    def startpoint_value(self, job: ContractJob, keys: list) -> tuple[str, str | None]:
        return str(modified_at(keys[0] // 100) * 1000), None  # the modification time of the first key's file

    def write(self, path: Path, rows: list[dict]) -> None:
        raise NotImplementedError


class TestCsvFileSource(FileSourceSuite):
    extension = "csv"
    engines = ("local", "spark")

    def write(self, path: Path, rows: list[dict]) -> None:
        lines = ["id,note"] + [f'{r["id"]},"{r["note"]}"' if r["note"] else f'{r["id"]},' for r in rows]
        path.write_text("\n".join(lines) + "\n")


class TestJsonFileSource(FileSourceSuite):
    extension = "jsonl"
    engines = ("local",)

    def write(self, path: Path, rows: list[dict]) -> None:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))


class TestParquetFileSource(FileSourceSuite):
    extension = "parquet"
    engines = ("local",)

    def write(self, path: Path, rows: list[dict]) -> None:
        pq.write_table(pa.Table.from_pylist(rows, schema=pa.schema([("id", pa.int64()), ("note", pa.string())])), path)


def write_avro(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as out:
        fastavro.writer(out, AVRO_SCHEMA, rows)


class TestAvroFileSource(FileSourceSuite):
    """The file source reads ``.avro`` by extension."""

    extension = "avro"
    engines = ("local",)

    def write(self, path: Path, rows: list[dict]) -> None:
        write_avro(path, rows)


class TestGobblinAvroFileSource(FileSourceSuite):
    """Gobblin's AvroFileSource: every file is Avro whatever its name; snapshots keep qualified paths."""

    source_class = "org.apache.gobblin.source.extractor.hadoop.AvroFileSource"
    extension = "data"
    engines = ("local",)

    def make_job(self, workdir: Path) -> dict[str, str]:
        return {**super().make_job(workdir), "extract.table.type": "APPEND_ONLY"}

    def write(self, path: Path, rows: list[dict]) -> None:
        write_avro(path, rows)


class TestDatePartitionedAvroSource(SourceContract):
    """Avro files in daily folders: each batch is the next day's folder, the first ten days before today."""

    source_class = "org.apache.gobblin.source.DatePartitionedAvroFileSource"
    engines = ("local",)

    @staticmethod
    def first_day() -> dt.date:
        return dt.datetime.now(dt.timezone.utc).date() - dt.timedelta(days=10)

    def make_job(self, workdir: Path) -> dict[str, str]:
        start = self.first_day() - dt.timedelta(days=1)
        return {"source.filebased.data.directory": str(workdir / "data" / "orders"),
                "extract.table.type": "APPEND_ONLY", "extract.namespace": "contract",
                "date.partitioned.source.partition.pattern": "yyyy/MM/dd",
                "date.partitioned.source.min.watermark.value": start.strftime("%Y/%m/%d"), "source.timezone": "UTC"}

    def add_data(self, job: ContractJob, batch: int) -> list[int]:
        day = self.first_day() + dt.timedelta(days=batch)
        rows = records(batch)
        write_avro(job.data / "orders" / day.strftime("%Y/%m/%d") / "orders.avro", rows)
        return [r["id"] for r in rows]


class TestCsvFileSourcePerSubfolder(TestCsvFileSource):
    """One dataset per sub-folder (``source.filebased.dataset.urn.level=subdirectory``): batches alternate between
    ``us`` and ``eu``, so a failure under full fails one dataset while the other commits."""

    engines = ("local",)
    seed_batches = 3

    def make_job(self, workdir: Path) -> dict[str, str]:
        return {**super().make_job(workdir), "source.filebased.dataset.urn.level": "subdirectory"}

    def startpoint_datasets(self, job: ContractJob) -> list[str]:
        return ["eu", "us"]

    def add_data(self, job: ContractJob, batch: int) -> list[int]:
        rows = records(batch)
        folder = job.data / ("eu" if batch % 2 else "us")
        folder.mkdir(exist_ok=True)
        self.write_at(folder / f"orders-{batch:03d}.csv", rows, batch)
        return [r["id"] for r in rows]
