"""Delta tables that ask their writers for more than adding files (column mapping, constraints, generated
columns, …): refused before anything of the run moves, naming the table and what it asks; NOT NULL columns are
honoured by checking the run's rows."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from gobblin_py.connectors.delta.protocol import protocol_problem
from tests.support.table_jobs import delta_job as job
from tests.support.table_jobs import run, write_csv
from tests.tables.delta_reads import commits, duckdb_rows


def make_table(path: Path, schema: pa.Schema, **configuration: str) -> None:
    from deltalake import write_deltalake

    write_deltalake(str(path), pa.table({"id": [1], "v": ["a"]}, schema=schema), configuration=configuration or None)


def parquet_files(table: Path) -> list[Path]:
    return [p for p in table.rglob("*.parquet") if "_delta_log" not in p.parts]


PLAIN = pa.schema([("id", pa.int64()), ("v", pa.string())])


def test_a_table_with_column_mapping_is_refused_before_anything_moves(tmp_path):
    table = tmp_path / "lake" / "shop" / "orders"
    make_table(table, PLAIN, **{"delta.columnMapping.mode": "name"})  # as Spark sets it to rename a column
    write_csv(tmp_path / "data" / "a.csv", "id,v", ["2,b"])
    refused = run(job(tmp_path), expect=2)
    assert f"Delta table {table}: gpy cannot publish into it" in refused.stderr
    assert "delta.columnMapping.mode=name" in refused.stderr
    assert len(commits(table)) == 1 and len(parquet_files(table)) == 1
    assert duckdb_rows(table).to_pylist() == [{"id": 1, "v": "a"}]


def test_a_check_constraint_is_refused_and_a_not_null_column_is_checked_on_the_run_rows(tmp_path):
    from deltalake import DeltaTable

    table = tmp_path / "lake" / "shop" / "orders"
    make_table(table, pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())]))
    DeltaTable(str(table)).alter.add_constraint({"id_positive": "id > 0"})
    write_csv(tmp_path / "data" / "a.csv", "id,v", ["-5,neg", ",nullid", "7,ok"])
    path = job(tmp_path)
    refused = run(path, expect=2)
    assert "CHECK constraint(s) id_positive (id > 0)" in refused.stderr
    DeltaTable(str(table)).alter.drop_constraint("id_positive")
    refused = run(path, expect=2)  # the null id: named with its row, nothing moved
    assert "column id is NOT NULL in the table and null in row 2 of " in refused.stderr
    assert len(parquet_files(table)) == 1
    write_csv(tmp_path / "data" / "a.csv", "id,v", ["-5,neg", "6,nullid", "7,ok"])  # fixed at the source
    run(path)
    assert sorted(duckdb_rows(table, "id").column("id").to_pylist()) == [-5, 1, 6, 7]
    assert not DeltaTable(str(table)).schema().fields[0].nullable  # never relaxed
    write_csv(tmp_path / "data" / "b.csv", "v", ["no id at all"])  # a file without the column: every row null
    assert "(the file has no column id)" in run(path, expect=2).stderr


@dataclass
class _Field:
    name: str
    metadata: dict[str, Any] = field(default_factory=dict)
    type: Any = None


@dataclass
class _Table:
    """What protocol_problem reads of a DeltaTable."""

    writer_features: list[str] | None = None
    writer: int = 2
    configuration: dict[str, str] = field(default_factory=dict)
    fields: list[_Field] = field(default_factory=lambda: [_Field("id")])

    def protocol(self) -> Any:
        from types import SimpleNamespace

        return SimpleNamespace(min_reader_version=1, min_writer_version=self.writer,
                               writer_features=self.writer_features, reader_features=None)

    def metadata(self) -> Any:
        from types import SimpleNamespace

        return SimpleNamespace(configuration=self.configuration)

    def schema(self) -> Any:
        from types import SimpleNamespace

        return SimpleNamespace(fields=self.fields)


@pytest.mark.parametrize(("table", "merge", "named"), [
    (_Table(), False, None),
    (_Table(["appendOnly", "deletionVectors", "changeDataFeed", "timestampNtz"], 7), False, None),
    (_Table(["rowTracking", "appendOnly"], 7), False, "writer feature(s) rowTracking"),
    (_Table(["domainMetadata", "typeWidening"], 7), False, "writer feature(s) domainMetadata, typeWidening"),
    (_Table(writer=6), False, "writer version 6) asks its writers for identity columns"),
    (_Table(configuration={"delta.columnMapping.mode": "id"}), False, "delta.columnMapping.mode=id"),
    (_Table(fields=[_Field("s", type=type("S", (), {"fields": [_Field("g", {"delta.generationExpression": "1"})]}))]),
     False, "column s.g is a generated column"),
    (_Table(fields=[_Field("n", {"delta.identity.start": 1})]), False, "column n is an identity column"),
    (_Table(fields=[_Field("n", {"delta.invariants": "{}"})]), False, "column invariant"),
    (_Table(configuration={"delta.appendOnly": "true"}), False, None),
    (_Table(configuration={"delta.appendOnly": "true"}), True, "append-only"),
], ids=["plain", "harmless-features", "row-tracking", "refused-by-delta-rs", "identity-v6", "column-mapping", "generated", "identity", "invariant",
        "append-only-append", "append-only-upsert"])
def test_what_a_table_asks_of_its_writers(table, merge, named):
    problem = protocol_problem(table, merge)
    assert problem is None if named is None else named in (problem or ""), problem
