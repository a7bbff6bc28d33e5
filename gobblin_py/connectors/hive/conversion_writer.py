"""Gobblin's Avro-to-ORC conversion, its converting half: ``HiveAvroToOrcConverter`` says where a unit's ORC data
goes, and ``HiveQueryWriterBuilder``'s writer runs the conversion through Spark SQL with Spark's Hive catalog on
the metastore (Gobblin runs the same queries through HiveServer2).

The names and folders are Gobblin's (``StageableTableMetadata``, ``HiveConverterUtils``): the ORC table
``hive.conversion.avro.flattenedOrc.destination.tableName`` in ``….dbName`` (``$DB`` and ``$TABLE`` stand for the
source's names), its data below ``….dataPath`` in ``final/`` (``final/<partition name>`` for a partition); a task
writes into a staging table ``<orc table>_staging_<ms><0-99>`` at ``<dataPath>/<staging table>[/<partition
name>]``, and the publisher (:mod:`.conversion_publisher`) moves that folder into place. The ORC table is
flattened as Gobblin's ``HiveAvroToFlattenedOrcConverter`` flattens it: a field of a record column becomes a
column ``<column>__<field>``; arrays and maps stay as they are.

On ``--engine local`` the queries run in a Spark session of the gpy process (``hive.conversion.spark.master``,
``local[2]`` unless set), started by the first task that needs it; on the Spark engines ``HiveSource`` has the
run's own session run them from the driver (:meth:`.conversion_source.HiveSource.run_on_cluster`).
"""

from __future__ import annotations

import json
import posixpath
import random
import threading
import time
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from gobblin_py.connectors.hive.client import connect
from gobblin_py.connectors.hive.datasets import HiveDatasetSettings, qualified, storage_path
from gobblin_py.io import fs as fsutil
from gobblin_py.sdk.contracts import Converter, CountingDataWriter, DataWriter, DataWriterBuilder
from gobblin_py.sdk.errors import GobblinPyError
from gobblin_py.sdk.settings import Settings, same_as, setting
from gobblin_py.sdk.states import TaskState, WorkUnitState

PREFIX = "hive.conversion.avro.flattenedOrc."
UNIT_KEY = "gpy.hive.unit"  # a work unit's table, partition and update time (JSON)
UNIT_SCHEMA = pa.schema([("database", pa.string()), ("table", pa.string()), ("partition", pa.string()),
                         ("partition_values", pa.string()), ("location", pa.string()),
                         ("table_location", pa.string())])
PUBLISH_KEY = "gpy.hive.publish"  # what the publisher swaps in, per converted unit (a JSON list)
SEPARATOR = "__"  # Gobblin's flattened column names: <column>__<field>
TARGET_SCHEMA = pa.schema([*UNIT_SCHEMA, ("orc_database", pa.string()), ("orc_table", pa.string()),
                           ("data_path", pa.string())])


@dataclass(frozen=True)
class OrcTargetSettings(Settings):
    """Where Gobblin's Avro-to-flattened-ORC conversion puts a table (``$DB``, ``$TABLE``: the source's names)."""

    database: str = setting(PREFIX + "destination.dbName", default="$DB", doc="the ORC table's database")
    table: str = setting(PREFIX + "destination.tableName", default="$TABLE_orc", doc="the ORC table's name")
    data_path: str | None = setting(PREFIX + "destination.dataPath",
                                    default_doc="the source table's folder with _orc appended",
                                    doc="the ORC table's folder: its data in final/, staging folders beside it")


def resolve(pattern: str, database: str, table: str) -> str:
    return pattern.replace("$DB", database).replace("$TABLE", table)


class HiveAvroToOrcConverter(Converter):
    """Gobblin's HiveAvroToOrcConverter (flattened ORC): adds to each conversion entity its ORC table and folder."""

    settings_class = OrcTargetSettings

    def init(self, state: WorkUnitState) -> None:
        self.settings = OrcTargetSettings.load(state)

    def convert_schema(self, schema: pa.Schema, state: WorkUnitState) -> pa.Schema:
        return TARGET_SCHEMA

    def convert_batch(self, batch: pa.RecordBatch, state: WorkUnitState) -> pa.RecordBatch:
        return pa.RecordBatch.from_pylist([with_target(row, self.settings) for row in batch.to_pylist()],
                                          schema=TARGET_SCHEMA)


def unit_row(unit: dict[str, Any]) -> dict[str, Any]:
    """A work unit's conversion entity (what the extractor reads)."""
    return {"database": unit["database"], "table": unit["table"], "partition": unit["partition"],
            "partition_values": json.dumps(unit["values"]), "location": unit["location"],
            "table_location": unit["table_location"]}


def with_target(row: dict[str, Any], settings: OrcTargetSettings) -> dict[str, Any]:
    """The entity with its ORC table and folder."""
    db, table = row["database"], row["table"]
    path = resolve(settings.data_path, db, table) if settings.data_path else row["table_location"].rstrip("/") + "_orc"
    return {**row, "orc_database": resolve(settings.database, db, table),
            "orc_table": resolve(settings.table, db, table).lower(), "data_path": path}


@dataclass(frozen=True)
class SparkSqlSettings(Settings):
    """The keys of HiveQueryWriterBuilder: the Spark session that runs the conversion's queries."""

    master: str = setting("hive.conversion.spark.master", default="local[2]",
                          doc="the Spark master of the session that runs the conversion's queries")
    metastore_uris: tuple[str, ...] = same_as(HiveDatasetSettings, "metastore_uris")
    timeout_s: int = same_as(HiveDatasetSettings, "timeout_s")


def has_hive_catalog(session: Any) -> bool:
    """Whether the Spark session's catalog is Hive's (Spark Connect may not say: then it is taken as not)."""
    try:
        return str(session.conf.get("spark.sql.catalogImplementation")) == "hive"
    except Exception:  # noqa: BLE001 - a session that cannot say
        return False


_session_lock = threading.Lock()
_sessions: dict[str, Any] = {}


def spark_session(settings: SparkSqlSettings) -> Any:
    """This process's Spark session on the metastore, made by the first task that asks (one per process: every
    task thread shares it); refused when the process already runs Spark without the Hive catalog."""
    from pyspark.sql import SparkSession

    with _session_lock:
        if "session" not in _sessions:
            running = SparkSession.getActiveSession()
            if running is not None and not has_hive_catalog(running):
                raise GobblinPyError("a Spark session without Spark's Hive catalog runs in this process: the Hive "
                                     "conversion needs its own (run the job with --engine local)")
            _sessions["session"] = running or (
                SparkSession.builder.master(settings.master).appName("gpy-hive-conversion")
                .config("spark.sql.catalogImplementation", "hive")
                .config("spark.hadoop.hive.metastore.uris", ",".join(settings.metastore_uris))
                .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
                .config("spark.sql.shuffle.partitions", "2")
                .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
                .getOrCreate())
        return _sessions["session"]


def flattened(schema: Any, partition_keys: set[str], prefix: tuple[str, ...] = ()) -> list[str]:
    """The select list of the flattened ORC table: record fields as ``<column>__<field>`` columns."""
    from pyspark.sql.types import StructType

    out = []
    for field in schema.fields:
        path = (*prefix, field.name)
        if not prefix and field.name.lower() in partition_keys:
            continue
        if isinstance(field.dataType, StructType):
            out += flattened(field.dataType, partition_keys, path)
        else:
            out.append(".".join(f"`{p}`" for p in path) + f" AS `{SEPARATOR.join(path)}`")
    return out


class HiveQueryWriter(CountingDataWriter):
    """Runs each unit's conversion into its staging table and records what the publisher swaps in."""

    def __init__(self, state: WorkUnitState) -> None:
        # what the publisher reads goes on the task's state (a branch's state is the writer's own)
        self.state = state.job_state if isinstance(state.job_state, TaskState) else state
        self.settings = SparkSqlSettings.load(state)
        self.published: list[dict[str, Any]] = []
        self.staged: list[tuple[str, str, str]] = []  # database, staging table, its folder

    def write(self, batch: pa.RecordBatch) -> None:
        for row in batch.to_pylist():
            self.published.append(self._convert(row))
            self._records += 1
        self.state.set_prop(PUBLISH_KEY, json.dumps(self.published))

    def _convert(self, row: dict[str, Any]) -> dict[str, Any]:
        staging, root = staging_of(row)
        self.staged.append((row["orc_database"], staging, root))
        return convert(spark_session(self.settings), self.settings, row, staging, root)

    def commit(self) -> list[str]:
        self.staged = []  # the publisher's now: it moves them into place
        return []

    def cleanup(self) -> None:
        """A failed attempt leaves no staging table or folder behind (after a commit there is nothing to drop)."""
        drop_staging(self.settings, self.staged)


def staging_of(row: dict[str, Any]) -> tuple[str, str]:
    """A new staging table's name and folder for the entity (Gobblin's ``<table>_staging_<ms><0-99>``)."""
    staging = f"{row['orc_table']}_staging_{int(time.time() * 1000)}{random.randrange(100)}"
    return staging, posixpath.join(row["data_path"], staging)


def convert(spark: Any, settings: SparkSqlSettings, row: dict[str, Any], staging: str, staging_root: str) -> dict:
    """Convert one entity into the staging table with ``spark``; what the publisher swaps in."""
    values = json.loads(row["partition_values"])
    source = spark.table(f"`{row['database']}`.`{row['table']}`")
    keys = [c for c in spark.catalog.listColumns(f"`{row['database']}`.`{row['table']}`") if c.isPartition]
    folder = posixpath.join(staging_root, row["partition"]) if row["partition"] else staging_root
    where = " AND ".join(f"`{k.name}` = '{_quoted(v)}'" for k, v in zip(keys, values, strict=True))
    select = ", ".join(flattened(source.schema, {k.name.lower() for k in keys}))
    spark.sql(f"CREATE DATABASE IF NOT EXISTS `{row['orc_database']}`")
    spark.sql(f"CREATE TABLE `{row['orc_database']}`.`{staging}` STORED AS ORC LOCATION "
              f"'{_quoted(qualified(folder))}' AS SELECT {select} FROM `{row['database']}`.`{row['table']}`"
              + (f" WHERE {where}" if where else ""))
    with connect(settings.metastore_uris, settings.timeout_s) as hms:
        made = hms.table(row["orc_database"], staging)
    if made is None:
        raise GobblinPyError(f"the staging table {row['orc_database']}.{staging} is missing after Spark made it")
    final = posixpath.join(row["data_path"], "final", row["partition"])
    return {"database": row["orc_database"], "table": row["orc_table"], "staging_table": staging,
            "staging_root": staging_root, "staging_folder": folder, "final_folder": final.rstrip("/"),
            "table_folder": posixpath.join(row["data_path"], "final"),
            "columns": [[c.name, c.type] for c in made.sd.cols], "partition_keys": [k.name for k in keys],
            "values": values, "source": f"{row['database']}.{row['table']}"}


def drop_staging(settings: SparkSqlSettings, staged: list[tuple[str, str, str]]) -> None:
    """Drop staging tables (external: their files stay) and remove their folders."""
    if not staged:
        return
    with connect(settings.metastore_uris, settings.timeout_s) as hms:
        for database, table, root in staged:
            hms.drop_table(database, table)
            fs, path = fsutil.open_fs(storage_path(root))
            if fs.exists(path):
                fs.rm(path, recursive=True)


def _quoted(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "\\'")


class HiveQueryWriterBuilder(DataWriterBuilder):
    """Gobblin's HiveQueryWriterBuilder: a writer that runs the conversion's queries (through Spark SQL here)."""

    settings_class = SparkSqlSettings

    def build(self, state: WorkUnitState, schema: pa.Schema, branches: int, branch: int, writer_id: str) -> DataWriter:
        return HiveQueryWriter(state)
