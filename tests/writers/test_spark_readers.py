"""Spark reads what the writers wrote: Parquet, ORC and JSON through Spark's own readers, and Avro through
the Java Apache Avro library on Spark's JVM (the spark-avro data source is a separate package, not available
offline; ``org.apache.avro`` itself ships with Spark). CSV is read by pyarrow (test_formats): Spark's CSV
reader cannot tell an empty string from a null without options that change other values."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from tests.support.writers import ROWS, UTC, all_types_batch, orc_safe_batch, orc_safe_rows, task_state, write_all

pytestmark = pytest.mark.spark

DDL = ("id BIGINT, i8 TINYINT, i32 INT, i64 BIGINT, f32 FLOAT, f64 DOUBLE, dec DECIMAL(18,4), s STRING, "
       "flag BOOLEAN, ts_utc TIMESTAMP, ts_ny TIMESTAMP, ts_naive TIMESTAMP_NTZ, d DATE, bin STRING")


def spark_rows(df) -> list[dict]:
    return sorted(df.toArrow().to_pylist(), key=lambda r: r["id"])


def test_spark_reads_parquet(spark, tmp_path):
    write_all(task_state(tmp_path, writer__output__format="PARQUET"), all_types_batch())
    df = spark.read.parquet(str(tmp_path / "output/out"))
    assert df.schema.simpleString() == ("struct<id:bigint,i8:tinyint,i32:int,i64:bigint,f32:float,f64:double,"
                                        "dec:decimal(18,4),s:string,flag:boolean,ts_utc:timestamp,ts_ny:timestamp,"
                                        "ts_naive:timestamp_ntz,d:date,bin:binary>")
    assert spark_rows(df) == ROWS


def test_spark_reads_orc(spark, tmp_path):
    write_all(task_state(tmp_path, writer__output__format="ORC", writer__codec__type="zstd"), orc_safe_batch())
    rows = spark_rows(spark.read.orc(str(tmp_path / "output/out")))
    for row in rows:  # ORC has one timestamp type: Spark reads the naive column as an instant in UTC
        if row["ts_naive"] is not None:
            row["ts_naive"] = row["ts_naive"].astimezone(UTC).replace(tzinfo=None)
    assert rows == orc_safe_rows()


def test_spark_reads_json_lines(spark, tmp_path):
    write_all(task_state(tmp_path, writer__output__format="JSON"), all_types_batch())
    df = spark.read.schema(DDL).json(str(tmp_path / "output/out"))
    df = df.selectExpr(*[c if c != "bin" else "unbase64(bin) AS bin" for c in df.columns])
    assert spark_rows(df) == ROWS


def test_spark_reads_gzipped_json_lines(spark, tmp_path):
    write_all(task_state(tmp_path, writer__output__format="JSON", writer__codec__type="gzip"), all_types_batch())
    df = spark.read.schema(DDL).json(str(tmp_path / "output/out"))
    assert sorted(r["id"] for r in df.collect()) == [1, 2, 3, 4]


def test_spark_reads_hive_partition_folders(spark, tmp_path):
    write_all(task_state(tmp_path, writer__partitioner__class="gobblin_py.connectors.files.partitioners.ColumnValueWriterPartitioner",
                         writer__partition__columns="d", writer__include__partition__in__file__names="true"),
              all_types_batch().select(["id", "s", "d"]))
    df = spark.read.option("basePath", str(tmp_path / "output/out")).parquet(str(tmp_path / "output/out"))
    got = {r["id"]: r["d"] for r in df.collect()}
    assert got == {1: dt.date(2024, 1, 2), 2: dt.date(1969, 12, 31), 3: None, 4: dt.date(9999, 12, 31)}


def _java_value(jvm, value):
    if value is None or type(value).__name__ != "JavaObject":
        return value
    name = value.getClass().getName()
    if name.endswith("ByteBuffer"):
        return bytes(jvm.java.util.Arrays.copyOfRange(value.array(), value.arrayOffset() + value.position(),
                                                      value.arrayOffset() + value.limit()))
    if name == "java.time.Instant":
        return dt.datetime.fromisoformat(value.toString().replace("Z", "+00:00"))
    if name == "java.time.LocalDateTime":
        return dt.datetime.fromisoformat(value.toString())
    if name == "java.time.LocalDate":
        return dt.date.fromisoformat(value.toString())
    return value.toString()


def test_java_avro_reads_avro(spark, tmp_path):
    _, outputs = write_all(task_state(tmp_path, writer__output__format="AVRO"), all_types_batch())
    jvm = spark._jvm
    data = jvm.org.apache.avro.generic.GenericData()
    conversions, times = jvm.org.apache.avro.Conversions, jvm.org.apache.avro.data.TimeConversions
    for conversion in (conversions.DecimalConversion(), times.DateConversion(), times.TimestampMicrosConversion(),
                       times.TimestampMillisConversion(), times.LocalTimestampMicrosConversion(),
                       times.LocalTimestampMillisConversion()):
        data.addLogicalTypeConversion(conversion)
    reader = jvm.org.apache.avro.file.DataFileReader(jvm.java.io.File(outputs[0]),
                                                     jvm.org.apache.avro.generic.GenericDatumReader(None, None, data))
    try:
        assert reader.getMetaString("avro.codec") == "deflate"
        fields = [f.name() for f in reader.getSchema().getFields()]
        rows = []
        while reader.hasNext():
            record = reader.next()
            rows.append({name: _java_value(jvm, record.get(name)) for name in fields})
    finally:
        reader.close()
    expected = [dict(r) for r in ROWS]
    for row in expected:  # Java's Float is widened exactly to a Python float; decimals compare by value
        row["dec"] = None if row["dec"] is None else Decimal(row["dec"])
    assert rows == expected
