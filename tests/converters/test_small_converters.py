"""SamplingConverter, AnyToStringConverter and AvroRecordToAvroWritableConverter on Arrow batches."""

from __future__ import annotations

import pyarrow as pa
import pytest

from gobblin_py.transforms.converters.any_to_string import AnyToStringConverter
from gobblin_py.transforms.converters.identity import AvroRecordToAvroWritableConverter
from gobblin_py.transforms.converters.sampling import SamplingConverter, sample_ratio
from gobblin_py.sdk.schema_meta import with_meta
from gobblin_py.sdk.states import WorkUnitState


def convert(converter, batch, props=None):
    state = WorkUnitState(properties=props or {})
    if hasattr(converter, "init"):
        converter.init(state)
    converter.convert_schema(batch.schema, state)
    return converter.convert_batch(batch, state)


@pytest.mark.parametrize("ratio", [0.1, 0.5, 0.9])
def test_sampling_keeps_about_the_ratio_of_records(ratio):
    # Gobblin's SamplingConverterTest: 10,000 records, the kept count within 2% of ratio × N
    batch = pa.record_batch({"id": list(range(10000))})
    kept = convert(SamplingConverter(), batch, {"converter.sample.ratio": str(ratio)})
    assert abs(kept.num_rows - ratio * 10000) <= 0.02 * 10000
    ids = kept.column("id").to_pylist()
    assert ids == sorted(set(ids))  # each kept record once, in order, unchanged


def test_sampling_ratio_one_keeps_everything_and_bad_ratios_fall_back_to_one_percent():
    batch = pa.record_batch({"id": list(range(100))})
    assert convert(SamplingConverter(), batch, {"converter.sample.ratio": "1.0"}).num_rows == 100
    assert sample_ratio("1.5") == sample_ratio("-0.1") == sample_ratio("lots") == sample_ratio(None) == 0.01
    assert sample_ratio("0.10") == 0.1


def test_sampling_inside_a_fork_branch_reads_its_suffixed_ratio():
    batch = pa.record_batch({"id": list(range(50))})
    props = {"fork.branch.id": "1", "converter.sample.ratio.1": "1.0", "converter.sample.ratio": "0"}
    assert convert(SamplingConverter(), batch, props).num_rows == 50


def test_any_to_string_prints_records_as_avro_does():
    batch = pa.record_batch({"name": ['Al"yssa', None], "n": pa.array([256, None], pa.int32()), "f": [2.0, 0.5],
                             "ok": [True, False]})
    out = convert(AnyToStringConverter(), batch)
    assert out.schema.names == ["value"]
    assert out.column(0).to_pylist() == ['{"name": "Al\\"yssa", "n": 256, "f": 2.0, "ok": true}',
                                         '{"name": null, "n": null, "f": 0.5, "ok": false}']


def test_any_to_string_prints_nested_values_and_java_objects():
    batch = pa.record_batch({"tags": pa.array([{"a": 1}], pa.map_(pa.string(), pa.int64())), "xs": [[1, 2]]})
    assert convert(AnyToStringConverter(), batch).column(0).to_pylist() == ['{"tags": {"a": 1}, "xs": [1, 2]}']
    pojo = batch.select(["xs"]).cast(with_meta(batch.select(["xs"]).schema, record_style="lombok:Thing"))
    assert convert(AnyToStringConverter(), pojo).column(0).to_pylist() == ["Thing(xs=[1, 2])"]


def test_avro_writable_conversion_passes_rows_through():
    batch = pa.record_batch({"a": [1, 2]})
    assert convert(AvroRecordToAvroWritableConverter(), batch) is batch
