"""What every contract suite shares: capability flags, parametrisation by engine and format, Spark, a kit source.

A suite is a pytest class: its ``test_*`` methods are the contract, its class attributes the capability flags
and its methods the hooks a plugin's own test class fills in. A flag that says the plugin lacks an ability
skips the tests of that ability, with a reason naming the flag.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gobblin_py.testing.harness import SPARK_MASTER, ContractJob
from gobblin_py.testing.outputs import keys_of, rows

FILE_SOURCE = "gobblin_py.connectors.files.filebased.FileBasedSource"


class Contract:
    """The base of the contract suites (not collected itself: its name does not start with ``Test``)."""

    #: engines the job-level tests run on: ``local`` (a thread pool) and ``spark`` (the process's SparkSession)
    engines: ClassVar[Sequence[str]] = ("local", "spark")
    #: a session fixture giving a SparkSession (this repository's ``spark``); one is started when there is none
    spark_fixture: ClassVar[str] = "spark"

    #: what the suite's ``contract_env`` fixture gave (a database, a broker), for the hooks to use
    env: Any = None

    @pytest.fixture
    def contract_env(self) -> Any:
        """Override with a fixture of your own to give the hooks a resource (``self.env``): a database, a broker."""
        return None

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        """Parametrise ``engine`` by :attr:`engines` and ``fmt`` by the suite's ``formats``."""
        if "engine" in metafunc.fixturenames:
            metafunc.parametrize("engine", list(self.engines))
        if "fmt" in metafunc.fixturenames:
            metafunc.parametrize("fmt", list(getattr(self, "formats", ())))

    @staticmethod
    def require(flag: bool, name: str, reason: str) -> None:
        """Skip the test unless ``flag``; the reason names the capability flag."""
        if not flag:
            pytest.skip(f"{reason} ({name} is false)")

    def start_engine(self, request: pytest.FixtureRequest, engine: str) -> None:
        """Make sure a SparkSession runs before an in-process Spark job (the shared one when there is one)."""
        if engine != "spark":
            return
        try:
            request.getfixturevalue(self.spark_fixture)
        except pytest.FixtureLookupError:
            from gobblin_py.runtime.engines.spark_session import get_spark_session

            get_spark_session(SPARK_MASTER, app_name="gpy-contracts")


def default_batches() -> list[pa.RecordBatch]:
    """Two small batches of common types, keyed by ``id`` (text with a comma, a quote and a newline; nulls)."""
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("name", pa.string()), ("amount", pa.float64()),
                        ("paid", pa.bool_())])
    first = pa.RecordBatch.from_pylist([
        {"id": 1, "name": "plain", "amount": 1.5, "paid": True},
        {"id": 2, "name": 'comma, "quote"\nand a new line', "amount": -0.25, "paid": False},
        {"id": 3, "name": None, "amount": None, "paid": None},
    ], schema=schema)
    second = pa.RecordBatch.from_pylist([
        {"id": 4, "name": "héllo wörld 日本", "amount": 1e10, "paid": True},
        {"id": 5, "name": "", "amount": 0.0, "paid": False},
    ], schema=schema)
    return [first, second]


def file_source_job(root: Path, batches: Sequence[pa.RecordBatch], key_columns: Sequence[str] = ("id",),
                    **props: str | None) -> ContractJob:
    """A job whose source reads ``batches`` back from Parquet files (one per batch) under ``root/data``."""
    job = ContractJob(root, {"source.class": FILE_SOURCE, "source.filebased.data.directory": str(Path(root) / "data"),
                             "source.filebased.file.pattern": "*.parquet", "extract.namespace": "contract",
                             "extract.table.name": "records", **props}, key_columns=key_columns)
    for batch in batches:
        add_parquet(job, batch)
    return job


def add_parquet(job: ContractJob, batch: pa.RecordBatch | pa.Table) -> Path:
    """One more input file for a :func:`file_source_job`; its keys join ``job.expected``."""
    table = batch if isinstance(batch, pa.Table) else pa.Table.from_batches([batch])
    path = job.data / f"part-{job.batches:04d}.parquet"
    pq.write_table(table, path)
    job.batches += 1
    if all(c in table.column_names for c in job.key_columns):
        job.expected.extend(keys_of(table, job.key_columns))
    return path


def same_rows(got: pa.Table, want: pa.Table | Sequence[pa.RecordBatch], order_by: Sequence[str] = ()) -> None:
    """Assert two tables hold the same rows (in any order)."""
    if not isinstance(want, pa.Table):
        want = pa.Table.from_batches(list(want)) if want else pa.table({})
    got_rows, want_rows = rows(got, order_by), rows(want, order_by)
    assert len(got_rows) == len(want_rows), f"{len(got_rows)} rows where {len(want_rows)} were expected"
    for index, (a, b) in enumerate(zip(got_rows, want_rows, strict=True)):
        assert _same(a, b), f"row {index} differs:\n  got      {a}\n  expected {b}"


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (a != a and b != b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b
