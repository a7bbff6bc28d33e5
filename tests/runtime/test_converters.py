"""Vectorised converters and the per-record adapter."""

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest
from hypothesis import given, strategies as st

from gobblin_py.transforms.converters.cast import TypeCastConverter
from gobblin_py.formats.types import parse_type
from gobblin_py.transforms.converters.projection import FieldProjectionConverter
from gobblin_py.runtime.execute.record_adapter import RecordConverterAdapter
from gobblin_py.sdk.errors import DataError, UsageError
from gobblin_py.sdk.states import WorkUnit, WorkUnitState
from tests.runtime.sample_plugins import DuplicateAndTag, UpperCaseNames

BATCH = pa.RecordBatch.from_pydict({
    "id": pa.array([1, 2, 3], pa.int64()),
    "name": ["a", "b", None],
    "amount": ["1.50", "2.25", "10"],
    "at": ["2026-11-01T10:00:00Z", "2026-11-02T11:30:00Z", None],
})


def state(**props):
    return WorkUnitState(WorkUnit(), props)


def run(converter, batch, wus):
    converter.init(wus)
    schema = converter.convert_schema(batch.schema, wus)
    out = converter.convert_batch(batch, wus)
    out = [out] if isinstance(out, pa.RecordBatch) else list(out)
    assert all(b.schema == schema for b in out)
    return schema, out


def test_projection_keeps_orders_and_renames():
    schema, [out] = run(FieldProjectionConverter(), BATCH, state(**{"converter.projection.fields": "amount, id:order_id"}))
    assert schema.names == ["amount", "order_id"]
    assert out.column("order_id").to_pylist() == [1, 2, 3]


def test_projection_errors_name_the_key_and_field():
    with pytest.raises(UsageError, match="converter.projection.fields: no field nope"):
        run(FieldProjectionConverter(), BATCH, state(**{"converter.projection.fields": "id,nope"}))
    with pytest.raises(UsageError, match="key 'converter.projection.fields': is not set"):
        FieldProjectionConverter().init(state())
    with pytest.raises(UsageError, match="two fields get the name x"):
        FieldProjectionConverter().init(state(**{"converter.projection.fields": "id:x,name:x"}))


def test_branch_suffixed_key_wins_inside_a_fork():
    wus = state(**{"converter.projection.fields": "id", "converter.projection.fields.1": "name", "fork.branch.id": "1"})
    schema, _ = run(FieldProjectionConverter(), BATCH, wus)
    assert schema.names == ["name"]


def test_cast_to_decimal_timestamp_and_int():
    spec = "amount:decimal128(10, 2),at:timestamp[ms, UTC],id:int32"
    schema, [out] = run(TypeCastConverter(), BATCH, state(**{"converter.cast.fields": spec}))
    assert schema.field("amount").type == pa.decimal128(10, 2)
    assert schema.field("at").type == pa.timestamp("ms", tz="UTC")
    assert out.column("amount").to_pylist() == [Decimal("1.50"), Decimal("2.25"), Decimal("10.00")]
    assert out.column("at").to_pylist()[0] == dt.datetime(2026, 11, 1, 10, tzinfo=dt.timezone.utc)
    assert out.column("id").type == pa.int32() and out.column("name") == BATCH.column("name")


def test_unsafe_cast_fails_naming_the_field_unless_allowed():
    batch = pa.RecordBatch.from_pydict({"v": pa.array([1, 300], pa.int64())})
    with pytest.raises(DataError, match="column 'v': 300 does not cast from int64 to int8"):
        run(TypeCastConverter(), batch, state(**{"converter.cast.fields": "v:int8"}))
    _, [out] = run(TypeCastConverter(), batch, state(**{"converter.cast.fields": "v:int8", "converter.cast.safe": "false"}))
    assert out.column("v").type == pa.int8()


@pytest.mark.parametrize("text, expected", [
    ("int64", pa.int64()), ("double", pa.float64()), ("string", pa.string()), ("bool", pa.bool_()),
    ("date", pa.date32()), ("timestamp[us]", pa.timestamp("us")), ("decimal(38, 9)", pa.decimal128(38, 9)),
    ("timestamp[ms, Europe/Paris]", pa.timestamp("ms", tz="Europe/Paris")),
])
def test_parse_type(text, expected):
    assert parse_type(text) == expected


def test_parse_type_rejects_unknown_names():
    with pytest.raises(UsageError, match="unknown type 'varchar'"):
        parse_type("varchar")


@given(st.lists(st.integers(-(2**31), 2**31 - 1), max_size=50))
def test_cast_int_to_string_and_back_is_identity(values):
    batch = pa.RecordBatch.from_pydict({"v": pa.array(values, pa.int64())})
    _, [as_text] = run(TypeCastConverter(), batch, state(**{"converter.cast.fields": "v:string"}))
    _, [back] = run(TypeCastConverter(), as_text, state(**{"converter.cast.fields": "v:int64"}))
    assert back.column("v").to_pylist() == values


def test_record_adapter_two_argument_form():
    batch = pa.RecordBatch.from_pydict({"currency": ["EUR", "USD"], "n": [1, 2]})
    adapter = RecordConverterAdapter(UpperCaseNames())
    schema, [out] = run(adapter, batch, state())
    assert out.column("currency").to_pylist() == ["eur", "usd"] and schema == batch.schema


def test_record_adapter_with_schema_and_state_can_emit_many_records():
    batch = pa.RecordBatch.from_pydict({"n": pa.array([7, 8], pa.int64())})
    schema, [out] = run(RecordConverterAdapter(DuplicateAndTag()), batch, state())
    assert schema.names == ["n", "copy"]
    assert out.to_pylist() == [{"n": 7, "copy": 0}, {"n": 7, "copy": 1}, {"n": 8, "copy": 0}, {"n": 8, "copy": 1}]
