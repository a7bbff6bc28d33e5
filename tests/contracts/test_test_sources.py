"""SourceContract over Gobblin's test and example sources, where they fit: SequentialTestSource (a generator: each
run makes new records), TestSource and SimpleJsonSource (snapshots: each run reads its files again)."""

from __future__ import annotations

import json
from pathlib import Path

import fastavro

from gobblin_py.connectors.testdata.test_sources import USER_SCHEMA
from gobblin_py.testing import ContractJob, SourceContract

PARALLELISM, PER_EXTRACT = 2, 3


class TestSequentialTestSource(SourceContract):
    """Each run continues every work unit; the first run's records are all add_data can announce."""

    source_class = "org.apache.gobblin.test.SequentialTestSource"
    key_columns = ("partition", "sequence")
    engines = ("local",)
    supports_nothing_new = False
    announces_all_data = False

    def make_job(self, workdir: Path) -> dict[str, str]:
        return {"source.numParallelism": str(PARALLELISM), "source.numRecordsPerExtract": str(PER_EXTRACT),
                "source.sleepTimePerRecordMillis": "0"}

    def add_data(self, job: ContractJob, batch: int) -> list[tuple[int, int]]:
        if batch:
            return []  # the generator makes its records itself; the first run's are known in advance
        return [(p, p * PER_EXTRACT + i) for p in range(PARALLELISM) for i in range(1, PER_EXTRACT + 1)]


def users(batch: int) -> list[dict]:
    return [{"name": f"user-{batch}-{i}", "favorite_number": batch * 10 + i, "favorite_color": "red"} for i in range(3)]


class SnapshotSuite(SourceContract):
    """A source that reads every file it is given again on each run, records as text parsed by TestConverter."""

    key_columns = ("name",)
    engines = ("local",)
    supports_nothing_new = False
    incremental = False
    supports_retry = False


class TestGobblinTestSource(SnapshotSuite):
    """TestSource: the Avro files of ``source.files`` (its expected count is always Gobblin's 1000)."""

    source_class = "org.apache.gobblin.test.TestSource"
    exact_expected_count = False

    def make_job(self, workdir: Path) -> dict[str, str]:
        return {"converter.classes": "org.apache.gobblin.test.TestConverter", "extract.namespace": "contract"}

    def add_data(self, job: ContractJob, batch: int) -> list[str]:
        path = job.data / f"users-{batch}.avro"
        rows = users(batch)
        with open(path, "wb") as out:
            fastavro.writer(out, json.loads(USER_SCHEMA), rows)
        files = [f for f in (job.props.get("source.files") or "").split(",") if f]
        job.set(**{"source.files": ",".join([*files, str(path)])})
        return [r["name"] for r in rows]


class TestSimpleJsonSource(SnapshotSuite):
    """SimpleJsonSource with SimpleJsonConverter: lines of JSON from ``source.filebased.files.to.pull``."""

    source_class = "org.apache.gobblin.example.simplejson.SimpleJsonSource"

    def make_job(self, workdir: Path) -> dict[str, str]:
        return {"converter.classes": "org.apache.gobblin.example.simplejson.SimpleJsonConverter",
                "source.schema": USER_SCHEMA}

    def add_data(self, job: ContractJob, batch: int) -> list[str]:
        path = job.data / f"users-{batch}.json"
        rows = users(batch)
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        files = [f for f in (job.props.get("source.filebased.files.to.pull") or "").split(",") if f]
        job.set(**{"source.filebased.files.to.pull": ",".join([*files, f"file://{path}"])})
        return [r["name"] for r in rows]
