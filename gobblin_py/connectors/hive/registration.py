"""One table's registration (Gobblin's ``HiveSpec`` of ``HiveRegistrationPolicyBase``, and ``HiveRegister``'s
``createDbIfNotExists``, ``createOrAlterTable`` and ``addOrAlterPartition``), made idempotent.

A :class:`TableSpec` is everything a registration needs, so that it can be logged in the commit log and carried
out again by a later run: the external table over a published folder, its SerDe, columns and properties, and the
partitions the run published into. :func:`register` creates the database and the table when missing, adds the
columns the files gained (appended, as Hive's ``ALTER TABLE … ADD COLUMNS`` does) and adds the partitions that do
not exist yet. :func:`conflict` says why an existing table cannot take the folder (another location, other
partition columns, a column of another type), so the publisher refuses before anything is published.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from gobblin_py.connectors.hive.client import Metastore, MetastoreError
from gobblin_py.connectors.hive.policy import TableName
from gobblin_py.connectors.hive.schema import AVRO_LITERAL, SERDES
from gobblin_py.sdk.logs import get_logger

log = get_logger(__name__)
STORAGE_FIELDS = {"location": "location", "input.format": "inputFormat", "output.format": "outputFormat",
                  "compressed": "compressed", "num.buckets": "numBuckets", "bucket.columns": "bucketCols",
                  "stored.as.sub.dirs": "storedAsSubDirectories"}  # Gobblin's HiveConstants for storage fields
SERDE_TYPE = "serde.type"
_ESCAPED = set('"#%\'*/:=?\\{[]^\x7f') | {chr(c) for c in range(1, 32)}  # Hive's FileUtils.escapePathName


@dataclass(frozen=True)
class PartitionSpec:
    """A partition: its values (one per partition column) and its folder."""

    values: tuple[str, ...]
    location: str


@dataclass(frozen=True)
class TableSpec:
    """An external table over a published folder, and the partitions one run published into."""

    name: TableName
    location: str
    row_format: str
    columns: tuple[tuple[str, str], ...]
    partition_keys: tuple[str, ...] = ()
    partitions: tuple[PartitionSpec, ...] = ()
    table_props: dict[str, str] = field(default_factory=dict)
    storage_props: dict[str, str] = field(default_factory=dict)
    serde_props: dict[str, str] = field(default_factory=dict)
    avro_schema: str | None = None
    database_location: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"database": self.name.database, "table": self.name.table, "location": self.location,
                "row_format": self.row_format, "columns": [list(c) for c in self.columns],
                "partition_keys": list(self.partition_keys),
                "partitions": [{"values": list(p.values), "location": p.location} for p in self.partitions],
                "table_props": self.table_props, "storage_props": self.storage_props,
                "serde_props": self.serde_props, "avro_schema": self.avro_schema,
                "database_location": self.database_location}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TableSpec:
        return cls(TableName(str(data["database"]), str(data["table"])), str(data["location"]),
                   str(data["row_format"]), tuple((str(n), str(t)) for n, t in data["columns"]),
                   tuple(map(str, data["partition_keys"])),
                   tuple(PartitionSpec(tuple(map(str, p["values"])), str(p["location"])) for p in data["partitions"]),
                   dict(data["table_props"]), dict(data["storage_props"]), dict(data["serde_props"]),
                   data.get("avro_schema"), data.get("database_location"))

    def partition_name(self, partition: PartitionSpec) -> str:
        """``key=value/…`` as the metastore names the partition (values escaped as Hive escapes them)."""
        return "/".join(f"{_escape(k)}={_escape(v)}" for k, v in zip(self.partition_keys, partition.values,
                                                                         strict=True))


def _escape(text: str) -> str:
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in text)


def same_location(a: str, b: str) -> bool:
    """Whether two folder URIs are one (``file:/x``, ``file:///x`` and ``/x/`` are)."""
    def norm(uri: str) -> str:
        uri = uri.rstrip("/")
        if uri.startswith("file:"):
            uri = "file:///" + uri[len("file:"):].lstrip("/")
        return uri
    return norm(a) == norm(b)


def _storage(spec: TableSpec, location: str, columns: list[Any]) -> Any:
    t = _types()
    serde = SERDES[spec.row_format]
    params = {k: v for k, v in spec.serde_props.items() if k != SERDE_TYPE}
    if spec.avro_schema is not None:
        params.setdefault(AVRO_LITERAL, spec.avro_schema)
    sd = t.StorageDescriptor(cols=columns, location=location, inputFormat=serde.input_format,
                             outputFormat=serde.output_format, compressed=False, numBuckets=-1, bucketCols=[],
                             sortCols=[], parameters={}, storedAsSubDirectories=False,
                             serdeInfo=t.SerDeInfo(name=spec.name.table, parameters=params,
                                                   serializationLib=spec.serde_props.get(SERDE_TYPE, serde.serde)))
    for key, value in spec.storage_props.items():
        attribute = STORAGE_FIELDS.get(key)
        if attribute is None:
            sd.parameters[key] = value
        elif attribute in ("compressed", "storedAsSubDirectories"):
            setattr(sd, attribute, value.lower() == "true")
        elif attribute == "numBuckets":
            sd.numBuckets = int(value)
        elif attribute == "bucketCols":
            sd.bucketCols = [c.strip() for c in value.split(",") if c.strip()]
        else:
            setattr(sd, attribute, value)
    return sd


def _types() -> Any:
    from gobblin_py.connectors.hive.client import ttypes

    return ttypes()


def _table(spec: TableSpec) -> Any:
    t = _types()
    columns = [t.FieldSchema(name, kind, None) for name, kind in spec.columns]
    params = {k: v for k, v in spec.table_props.items() if k != "owner"}
    params["EXTERNAL"] = "TRUE"  # dropping the table never deletes the published files
    return t.Table(tableName=spec.name.table, dbName=spec.name.database, owner=spec.table_props.get("owner"),
                   sd=_storage(spec, spec.location, columns),
                   partitionKeys=[t.FieldSchema(k, "string", None) for k in spec.partition_keys],
                   parameters=params, tableType="EXTERNAL_TABLE")


def conflict(spec: TableSpec, existing: Any) -> str | None:
    """Why the existing table cannot take ``spec``'s folder, or None."""
    name = str(spec.name)
    if existing.tableType == "VIRTUAL_VIEW":
        return f"{name} is a view"
    if not same_location(existing.sd.location or "", spec.location):
        return f"table {name} is over {existing.sd.location}, not {spec.location}"
    keys = tuple(k.name.lower() for k in existing.partitionKeys or [])
    if keys != spec.partition_keys:
        return (f"table {name} is partitioned by {list(keys) or 'nothing'}; the published folders give "
                f"{list(spec.partition_keys) or 'no partition'}")
    serde = SERDES[spec.row_format].serde
    have = existing.sd.serdeInfo.serializationLib if existing.sd.serdeInfo else None
    if SERDE_TYPE not in spec.serde_props and have and have != serde:
        return f"table {name} reads its files with {have}; the published files are {spec.row_format}"
    types = {c.name.lower(): c.type.lower().replace(" ", "") for c in existing.sd.cols or []}
    for column, kind in spec.columns:
        if column in types and types[column] != kind.lower():
            return (f"column {column} of table {name} is {types[column]}, and the published files hold it as "
                    f"{kind}")
    return None


def _added_columns(spec: TableSpec, existing: Any) -> list[tuple[str, str]]:
    have = {c.name.lower() for c in existing.sd.cols or []}
    return [(n, k) for n, k in spec.columns if n not in have]


def _partition(spec: TableSpec, partition: PartitionSpec, table: Any) -> Any:
    t = _types()
    params = {k: v for k, v in spec.table_props.items() if k != "owner"}
    return t.Partition(values=list(partition.values), dbName=spec.name.database, tableName=spec.name.table,
                       sd=_storage(spec, partition.location, copy.deepcopy(table.sd.cols)), parameters=params)


def register(metastore: Metastore, spec: TableSpec) -> None:
    """Register ``spec`` (idempotent): database, table, new columns, new partitions; MetastoreError on a
    conflict with the existing table."""
    name = spec.name
    if metastore.database(name.database) is None:
        metastore.create_database(name.database, spec.database_location)
    existing = metastore.table(name.database, name.table)
    if existing is None:
        created = metastore.create_table(_table(spec))
        existing = metastore.table(name.database, name.table)
        if existing is None:
            raise MetastoreError(f"the Hive metastore {metastore.uri}: table {name} is missing right after it was "
                                 "created")
        log.info("hive_table_created" if created else "hive_table_found", table=str(name), location=spec.location)
    problem = conflict(spec, existing)
    if problem:
        raise MetastoreError(f"cannot register {spec.location} in the Hive metastore {metastore.uri}: {problem}")
    added = _added_columns(spec, existing)
    if added:
        t = _types()
        altered = copy.deepcopy(existing)
        altered.sd.cols = [*(existing.sd.cols or []), *(t.FieldSchema(n, k, None) for n, k in added)]
        if spec.avro_schema is not None and AVRO_LITERAL not in spec.serde_props:
            altered.sd.serdeInfo.parameters[AVRO_LITERAL] = spec.avro_schema
        metastore.alter_table(altered)
        existing = altered
        log.info("hive_columns_added", table=str(name), columns=[n for n, _ in added])
    if spec.partitions:
        new = metastore.add_partitions(name.database, name.table,
                                       [_partition(spec, p, existing) for p in spec.partitions])
        log.info("hive_partitions_added", table=str(name), added=new, published=len(spec.partitions))


def registered(metastore: Metastore, spec: TableSpec) -> bool:
    """Whether ``spec`` has taken effect: the table is there over its folder with every column, and every
    partition exists."""
    existing = metastore.table(spec.name.database, spec.name.table)
    if existing is None or conflict(spec, existing) is not None or _added_columns(spec, existing):
        return False
    if not spec.partitions:
        return True
    names = [spec.partition_name(p) for p in spec.partitions]
    found = metastore.partitions(spec.name.database, spec.name.table, names)
    return len({tuple(p.values) for p in found}) == len({p.values for p in spec.partitions})
