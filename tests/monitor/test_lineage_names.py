"""Dataset namespaces and names after OpenLineage's naming conventions (spec/Naming.md): files by absolute path or
by bucket and key, tables by host, port, database, schema and table, topics by bootstrap server and topic."""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from gobblin_py.runtime.monitor.lineage_names import input_name, output_names, path_name


def _result(urn: str = "", published: tuple[str, ...] = ()) -> SimpleNamespace:
    return SimpleNamespace(urn=urn, partitions=[], low_watermarks=[], high_watermarks=[], published=list(published),
                           commits=[])


@pytest.mark.parametrize("path, fs_uri, expected", [
    ("/data/incoming/", None, ("file", "/data/incoming")),
    ("file:///data/incoming", None, ("file", "/data/incoming")),
    ("file://nas01/data/incoming", None, ("file://nas01", "/data/incoming")),
    ("s3a://lake/raw/orders/", None, ("s3://lake", "raw/orders")),
    ("gs://lake/raw", None, ("gs://lake", "raw")),
    ("hdfs://nn:8020/data/raw", None, ("hdfs://nn:8020", "/data/raw")),
    ("raw/orders", "s3://lake", ("s3://lake", "raw/orders")),
    ("/data/raw", "hdfs://nn:8020", ("hdfs://nn:8020", "/data/raw")),
    ("/data/raw", "file:///", ("file", "/data/raw")),
])
def test_files_and_objects(path, fs_uri, expected):
    assert path_name(path, fs_uri) == expected


def test_a_relative_folder_is_named_from_the_working_folder(tmp_path, monkeypatch):
    names = []
    for place in ("eu", "us"):
        (tmp_path / place).mkdir()
        monkeypatch.chdir(tmp_path / place)
        names.append(path_name("incoming"))
    assert names == [("file", os.path.join(tmp_path, "eu", "incoming")), ("file", os.path.join(tmp_path, "us",
                                                                                                 "incoming"))]


@pytest.mark.parametrize("props, urn, expected", [
    ({"source.class": "PostgresqlSource", "source.conn.url": "jdbc:postgresql://db.example:5433/shop"}, "orders",
     ("postgres://db.example:5433", "shop.public.orders")),
    ({"source.class": "PostgresqlSource", "source.conn.host": "db.example", "source.conn.database": "shop",
      "source.querybased.schema": "sales"}, "orders", ("postgres://db.example:5432", "shop.sales.orders")),
    ({"source.class": "MysqlSource", "source.conn.url": "jdbc:mysql://db.example/shop"}, "orders",
     ("mysql://db.example:3306", "shop.orders")),
    ({"source.class": "MysqlSource", "source.conn.host": "db", "source.querybased.schema": "shop"}, "orders",
     ("mysql://db:3306", "shop.orders")),
    ({"source.class": "KafkaSimpleSource", "kafka.brokers": "SASL_SSL://b1.example:9093,b2.example:9093"},
     "events", ("kafka://b1.example:9093", "events")),
    ({"source.class": "KafkaSimpleSource", "kafka.brokers": "broker"}, "events", ("kafka://broker:9092", "events")),
    ({"source.class": "RestSource", "rest.url": "https://user:pw@api.example/v1/orders?page=1"}, "orders",
     ("https://api.example", "/v1/orders")),
    ({"source.class": "CopySource", "gobblin.dataset.pattern": "/data/*"}, "eu", ("file", "/data/eu")),
    ({"source.class": "CopySource", "gobblin.dataset.pattern": "/data/incoming/"}, "incoming",
     ("file", "/data/incoming")),
    ({"source.class": "FileBasedSource", "source.filebased.data.directory": "raw",
      "source.filebased.fs.uri": "s3a://lake"}, "", ("s3://lake", "raw")),
])
def test_inputs(props, urn, expected):
    name = input_name(props, _result(urn))
    assert (name.namespace, name.name) == expected


def test_a_relative_sqlite_file_is_named_by_its_absolute_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    name = input_name({"source.class": "SqliteSource", "source.conn.url": "jdbc:sqlite:shop.db"}, _result("orders"))
    assert (name.namespace, name.name) == (f"sqlite://{tmp_path}/shop.db", "orders")


@pytest.mark.parametrize("props, expected", [
    ({"writer.builder.class": "JdbcWriterBuilder", "jdbc.publisher.url": "jdbc:postgresql://pg/dw",
      "jdbc.publisher.table_name": "orders"}, ("postgres://pg:5432", "dw.public.orders")),
    ({"writer.builder.class": "KafkaDataWriterBuilder", "writer.kafka.topic": "out",
      "writer.kafka.producerConfig.bootstrap.servers": "k1:9092,k2:9092"}, ("kafka://k1:9092", "out")),
])
def test_outputs(props, expected):
    [name] = output_names(props, _result())
    assert (name.namespace, name.name) == expected
