"""OpenLineage names of a run's datasets, after OpenLineage's naming conventions (spec/Naming.md).

A run reads a dataset of its source and publishes one per dataset it commits:

- files: namespace ``file`` for local disk and name the absolute path (a relative folder resolved from the working
  folder, as gpy reads it), ``file://<host>`` for a ``file://host/...`` URL, else ``<scheme>://<authority>``
  (``s3://bucket`` with the object key as name, ``hdfs://nn:8020`` with the path); a bare path on a job's
  ``fs.uri`` (``source.filebased.fs.uri``, ``data.publisher.fs.uri``) is named on that filesystem. A folder is
  named without a trailing ``/``; ``s3a``/``s3n`` are ``s3`` and ``gcs`` is ``gs``;
- Kafka topics: namespace ``kafka://<first bootstrap server host>:<port>`` (9092 when not given), name the topic
  (the dataset's URN); the partitions a run read, with their offsets from → to, go in the input's
  ``gpy_kafka_offsets`` facet;
- SQL tables: namespace ``postgres://<host>:<port>`` (5432) with name ``<database>.<schema>.<table>`` (schema
  ``public`` when not given), ``mysql://<host>:<port>`` (3306) with ``<database>.<table>``, ``sqlite://<absolute
  file>`` with ``<table>``; the JDBC publisher's table as output;
- REST endpoints: namespace ``<scheme>://<host>[:<port>]`` of ``rest.url``, name its path (no query);
- tables a table publisher committed to: a Delta table by its storage location (as files), an Iceberg table as
  namespace ``iceberg://<catalog name>``, name ``<namespace>.<table>``; each with the snapshot or version the run
  committed as the dataset's version.

Which kind a job's source and writer are comes from their classes' names and Gobblin's standard keys.
"""

from __future__ import annotations

import os
import re
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


_SCHEME_ALIASES = {"s3a": "s3", "s3n": "s3", "gcs": "gs", "local": "file"}
_OBJECT_STORES = ("s3", "gs")  # named by the object key, without a leading "/"
_GLOB = re.compile(r"[*?\[]")


def path_name(path: str, fs_uri: str | None = None) -> tuple[str, str]:
    """``(namespace, name)`` of a file or folder path or URL; a bare path is taken on ``fs_uri`` (a relative one on
    local disk from the working folder), as gpy opens it."""
    if "://" not in path and fs_uri and not fs_uri.startswith(("file:", "local:")):
        path = (fs_uri if fs_uri.endswith("://") else fs_uri.rstrip("/") + "/") + path.lstrip("/")
    if "://" not in path:
        return "file", os.path.abspath(path)
    parts = urlsplit(path)
    scheme = _SCHEME_ALIASES.get(parts.scheme.lower(), parts.scheme.lower())
    folder = parts.path.rstrip("/") or "/"
    if scheme == "file":
        host = "" if parts.netloc in ("", "localhost") else parts.netloc
        return (f"file://{host}" if host else "file"), folder
    if scheme in _OBJECT_STORES:
        return f"{scheme}://{parts.netloc}", folder.lstrip("/")
    return f"{scheme}://{parts.netloc}", folder


def _host_port(server: str, default_port: int) -> str:
    """``host:port`` of a server given as ``host[:port]`` or ``PROTOCOL://host[:port]``."""
    parts = urlsplit("//" + server.strip().rpartition("://")[2])
    host = parts.hostname or ""
    return f"[{host}]:{parts.port or default_port}" if ":" in host else f"{host}:{parts.port or default_port}"


def _sql_scheme(name: str) -> str:
    """``postgres``, ``mysql`` or ``sqlite`` for a driver, URL scheme or JDBC driver class name."""
    name = name.lower()
    return next((scheme for word, scheme in _SCHEMES.items() if word in name), name or "sql")


_SCHEMES = {"postgres": "postgres", "mysql": "mysql", "mariadb": "mysql", "sqlite": "sqlite"}
_DEFAULT_PORTS = {"postgres": 5432, "mysql": 3306}


def _sql_namespace(props: Mapping[str, str], prefix: str, url_key: str, driver: str = "") -> tuple[str, str, str | None]:
    """``(scheme, namespace, database)`` of an SQL connection given by a (JDBC) URL or by driver, host, port and
    database keys: ``postgres://host:port``, ``mysql://host:port``, ``sqlite://<absolute file>``."""
    url = props.get(url_key, "")
    if url.startswith("jdbc:"):
        url = url[len("jdbc:"):]
    if url.startswith("sqlite:"):
        path = url[len("sqlite:"):]
        path = path[2:] if path.startswith("//") else path  # sqlite://<file> as well as sqlite:<file>
        return "sqlite", f"sqlite://{os.path.abspath(path)}", None
    if "://" in url:
        parts = urlsplit(url)
        scheme = _sql_scheme(parts.scheme)
        url_port = parts.port or _DEFAULT_PORTS.get(scheme)
        return scheme, f"{scheme}://{parts.hostname}" + (f":{url_port}" if url_port else ""), \
            parts.path.strip("/") or None
    scheme = _sql_scheme(props.get(f"{prefix}.driver") or driver)
    database = props.get(f"{prefix}.database")
    if scheme == "sqlite":
        return scheme, f"sqlite://{os.path.abspath(database or '')}", None
    host, given = props.get(f"{prefix}.host", "localhost"), props.get(f"{prefix}.port")
    port = given or _DEFAULT_PORTS.get(scheme)
    return scheme, f"{scheme}://{host}" + (f":{port}" if port else ""), database


def _table_name(scheme: str, database: str | None, schema: str | None, table: str) -> str:
    """``<database>.<schema>.<table>`` for Postgres (schema ``public`` by default), ``<database>.<table>`` for
    MySQL (whose schema is its database), the table alone for SQLite."""
    if scheme == "postgres":
        return ".".join(p for p in (database, schema or "public", table) if p)
    if scheme == "mysql":
        return ".".join(p for p in (database or schema, table) if p)
    if scheme == "sqlite":
        return table
    return ".".join(p for p in (database, schema, table) if p)


def _kafka_namespace(servers: str) -> str:
    return f"kafka://{_host_port(servers.split(',')[0], 9092)}"


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
        topic = result.urn or props.get("topic.name", "")
        return DatasetName(_kafka_namespace(props.get("kafka.brokers", "")), topic, _kafka_partitions(result))
    if "sql" in source.lower() or "QueryBased" in source or "Jdbc" in source or props.get("source.conn.url"):
        driver = next((d for d in ("sqlite", "postgres", "mysql") if d in source.lower()), "sqlite")
        scheme, namespace, database = _sql_namespace(props, "source.conn", "source.conn.url", driver)
        table = result.urn or props.get("source.entity", "")
        return DatasetName(namespace, _table_name(scheme, database, props.get("source.querybased.schema"), table))
    if props.get("rest.url") and "Rest" in source:
        parts = urlsplit(props["rest.url"])
        return DatasetName(f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}", parts.path or "/")
    if props.get("wikipedia.api.rooturl") and "Wikipedia" in source:
        parts = urlsplit(props["wikipedia.api.rooturl"])
        return DatasetName(f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}", result.urn or parts.path)
    fs_uri = props.get("source.filebased.fs.uri")
    folder = props.get("source.filebased.data.directory")
    if not folder and props.get("gobblin.dataset.pattern"):
        folder = _copy_dataset_folder(props["gobblin.dataset.pattern"], result.urn)
    if folder:
        return DatasetName(*path_name(folder, fs_uri))
    return DatasetName("gpy", result.urn or props.get("job.name", ""))


def _copy_dataset_folder(pattern: str, urn: str) -> str:
    """The folder of a copy job's dataset: the pattern itself, or for a glob its deepest folder without wildcards
    joined with the dataset's URN (its folder below that one)."""
    wildcard = _GLOB.search(pattern)
    if wildcard is None:
        return pattern
    plain = pattern[:wildcard.start()].rpartition("/")[0]
    return f"{plain}/{urn}" if urn else plain or "/"


def output_names(props: Mapping[str, str], result: Any) -> list[DatasetName]:
    """Where ``result``'s records went: its published folders, the JDBC publisher's table or the Kafka topic."""
    writer = props.get("writer.builder.class", "")
    if "Jdbc" in writer:
        scheme, namespace, database = _sql_namespace(props, "jdbc.publisher", "jdbc.publisher.url")
        database = props.get("jdbc.publisher.database_name") or database
        table = props.get("jdbc.publisher.table_name", "")
        return [DatasetName(namespace, _table_name(scheme, database, None, table))]
    if "Kafka" in writer and props.get("writer.kafka.topic"):
        server = props.get("writer.kafka.producerConfig.bootstrap.servers") or props.get("kafka.brokers", "")
        return [DatasetName(_kafka_namespace(server), props["writer.kafka.topic"])]
    versions = dict(_committed_version(made) for made in result.commits)
    fs_uri = props.get("data.publisher.fs.uri") or props.get("writer.fs.uri")
    names = []
    for place in dict.fromkeys(result.published):
        if place.startswith(ICEBERG_PLACE):
            catalog, _, table = place.removeprefix(ICEBERG_PLACE).partition("/")
            namespace, name = ICEBERG_PLACE + catalog, table
        else:
            namespace, name = path_name(place.removeprefix(DELTA_PLACE), fs_uri)
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
