"""OpenLineage names of a run's datasets, after OpenLineage's naming conventions.

A run reads a dataset of its source and publishes one per dataset it commits:

- files: namespace ``file`` (local disk) or ``<scheme>://<authority>`` (``s3://bucket``, ``hdfs://nn:8020``),
  name the path: the source's data folder as input, each published folder as output;
- Kafka topics: namespace ``kafka://<first bootstrap server>``, name the topic (the dataset's URN); the
  partitions a run read, with their offsets from → to, go in the input's ``gpy_kafka_offsets`` facet;
- SQL tables: namespace ``<postgres|mysql|sqlite>://<host:port or file>``, name ``[<database>.][<schema>.]<table>``;
  the JDBC publisher's table as output;
- tables a table publisher committed to: a Delta table by its storage location (as files), an Iceberg table as
  namespace ``iceberg://<catalog name>``, name ``<namespace>.<table>``; each with the snapshot or version the run
  committed as the dataset's version.

Which kind a job's source and writer are comes from their classes' names and Gobblin's standard keys.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from gobblin_py.sdk.watermarks import by_partition


@dataclass
class DatasetName:
    """One OpenLineage dataset: namespace and name, and where it is a topic the partitions read."""

    namespace: str
    name: str
    partitions: list[dict[str, Any]] = field(default_factory=list)
    version: str | None = None  # a table's snapshot or version made by the run


def path_name(path: str) -> tuple[str, str]:
    """``(namespace, name)`` of a file or folder path or URL."""
    if "://" not in path:
        return "file", path
    parts = urlsplit(path)
    if parts.scheme == "file":
        return "file", parts.path
    return f"{parts.scheme}://{parts.netloc}", parts.path.lstrip("/") if parts.scheme in ("s3", "s3a", "gs") \
        else parts.path


_SCHEMES = {"postgresql": "postgres", "postgres": "postgres", "mysql": "mysql", "mariadb": "mysql", "sqlite": "sqlite"}


def _sql_namespace(props: Mapping[str, str], prefix: str, url_key: str, driver: str = "") -> tuple[str, str | None]:
    """``(namespace, database)`` of an SQL connection given by a (JDBC) URL or by driver, host, port and
    database keys: ``postgres://host:port``, ``mysql://host:port``, ``sqlite:///<file>``."""
    url = props.get(url_key, "")
    if url.startswith("jdbc:"):
        url = url[len("jdbc:"):]
    if url.startswith("sqlite:"):
        path = url[len("sqlite:"):].lstrip("/")
        return f"sqlite:///{path}", None
    if "://" in url:
        parts = urlsplit(url)
        scheme = _SCHEMES.get(parts.scheme, parts.scheme)
        return f"{scheme}://{parts.hostname}:{parts.port}" if parts.port else f"{scheme}://{parts.hostname}", \
            parts.path.strip("/") or None
    scheme = _SCHEMES.get((props.get(f"{prefix}.driver") or driver).lower(), "sql")
    database = props.get(f"{prefix}.database")
    if scheme == "sqlite":
        return f"sqlite://{os.path.abspath(database or '')}", None
    host, port = props.get(f"{prefix}.host", "localhost"), props.get(f"{prefix}.port")
    return f"{scheme}://{host}" + (f":{port}" if port else ""), database


def _kafka_partitions(result: Any) -> list[dict[str, Any]]:
    """``[{partition, from, to}]``: the offsets each partition of the topic was read from and up to."""
    rows: dict[int, dict[str, Any]] = {}
    for parts, low, high in zip(result.partitions, result.low_watermarks, result.high_watermarks, strict=False):
        for partition, start, end in by_partition(list(parts), low, high) or ():
            row = rows.setdefault(int(partition), {"partition": int(partition), "from": start, "to": end})
            row["from"], row["to"] = min(row["from"], start), max(row["to"], end)
    return [rows[p] for p in sorted(rows)]


def input_name(props: Mapping[str, str], result: Any) -> DatasetName:
    """The source dataset ``result`` (a DatasetResult) was read from."""
    source = props.get("source.class", "")
    if "Kafka" in source:
        server = props.get("kafka.brokers", "").split(",")[0].strip()
        return DatasetName(f"kafka://{server}", result.urn or props.get("topic.name", ""), _kafka_partitions(result))
    if "Sql" in source or "QueryBased" in source or "Jdbc" in source or props.get("source.conn.url"):
        driver = next((d for d in ("sqlite", "postgresql", "mysql") if d in source.lower()), "")
        namespace, database = _sql_namespace(props, "source.conn", "source.conn.url", driver)
        schema = props.get("source.querybased.schema")
        table = result.urn or props.get("source.entity", "")
        return DatasetName(namespace, ".".join(p for p in (database, schema, table) if p))
    folder = props.get("source.filebased.data.directory") or props.get("gobblin.dataset.pattern")
    if folder:
        namespace, name = path_name(folder)
        return DatasetName(namespace, name)
    return DatasetName("gpy", result.urn or props.get("job.name", ""))


def output_names(props: Mapping[str, str], result: Any) -> list[DatasetName]:
    """Where ``result``'s records went: its published folders, the JDBC publisher's table or the Kafka topic."""
    writer = props.get("writer.builder.class", "")
    if "Jdbc" in writer:
        namespace, database = _sql_namespace(props, "jdbc.publisher", "jdbc.publisher.url")
        database = props.get("jdbc.publisher.database_name") or database
        return [DatasetName(namespace, ".".join(p for p in (database, props.get("jdbc.publisher.table_name")) if p))]
    if "Kafka" in writer and props.get("writer.kafka.topic"):
        server = props.get("writer.kafka.producerConfig.bootstrap.servers") or props.get("kafka.brokers", "")
        return [DatasetName(f"kafka://{server.split(',')[0].strip()}", props["writer.kafka.topic"])]
    versions = dict(_committed_version(made) for made in result.commits)
    names = []
    for place in dict.fromkeys(result.published):
        if place.startswith(ICEBERG_PLACE):
            catalog, _, table = place.removeprefix(ICEBERG_PLACE).partition("/")
            namespace, name = ICEBERG_PLACE + catalog, table
        else:
            namespace, name = path_name(place.removeprefix(DELTA_PLACE))
        names.append(DatasetName(namespace, name, version=versions.get(place)))
    return names


ICEBERG_PLACE, DELTA_PLACE = "iceberg://", "delta:"  # how the table publishers name a table they published to


def _committed_version(made: str) -> tuple[str, str | None]:
    """``(table, version)`` of a commit as a run reports it: ``<table> snapshot <id>`` or ``<table> version <n>``."""
    place, _, version = made.rpartition(" ")
    for word in (" snapshot", " version"):
        if place.endswith(word):
            return place.removesuffix(word), version
    return made, None
