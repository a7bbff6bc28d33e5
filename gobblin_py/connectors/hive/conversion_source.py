"""Gobblin's Avro-to-ORC conversion, its planning half: ``HiveSource`` and its extractor.

One work unit per partition of each selected table (``hive.dataset.*``, :mod:`.datasets`), or per table for an
unpartitioned one (or with ``hive.source.createWorkunitsForPartitions=false``). A unit is made only when the
partition's update time — its data folder's modification time, Gobblin's default ``HdfsBasedUpdateProvider`` —
is later than its watermark, the update time converted last (Gobblin's ``PartitionLevelWatermarker``: one
watermark per partition), and not older than ``hive.source.maximum.lookbackDays``; a partition created before
that window is not looked at. The watermarks of a table's partitions not converted this run ride on its first
unit (``gpy.hive.watermarks``), so the table's committed state always holds every partition's.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from gobblin_py.connectors.hive.client import connect
from gobblin_py.connectors.hive.conversion_writer import (
    PUBLISH_KEY,
    UNIT_KEY,
    UNIT_SCHEMA,
    OrcTargetSettings,
    SparkSqlSettings,
    convert,
    drop_staging,
    has_hive_catalog,
    staging_of,
    unit_row,
    with_target,
)
from gobblin_py.connectors.hive.datasets import HiveDatasetSettings, find_tables, partition_name, storage_path
from gobblin_py.io import fs as fsutil
from gobblin_py.sdk.cluster_tasks import CLUSTER_TASK_COUNTERS
from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.contracts import Extractor, Source
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.plugins import resolve_class
from gobblin_py.sdk.run_states import SourceState
from gobblin_py.sdk.settings import problem_at, setting
from gobblin_py.sdk.states import Extract, TaskState, WorkingState, WorkUnit, WorkUnitState
from gobblin_py.sdk.watermarks import LongWatermark, WatermarkInterval

log = get_logger(__name__)

NAMESPACE = "hive.conversion"
WATERMARKS_KEY = "gpy.hive.watermarks"  # {partition name: update time ms} of the partitions not converted now
TABLE_UNIT = ""  # the partition name a whole (unpartitioned) table's unit has
DAY_MS = 86_400_000


@dataclass(frozen=True)
class HiveSourceSettings(HiveDatasetSettings):
    """The keys of Gobblin's HiveSource: the tables (hive.dataset.*) and which of their partitions to convert."""

    lookback_days: int = setting("hive.source.maximum.lookbackDays", default=3, minimum=0, maximum=36500,
                                 doc="partitions created, or last updated, more than this many days ago are not "
                                     "converted")
    per_partition: bool = setting("hive.source.createWorkunitsForPartitions", default=True,
                                  doc="one work unit per partition of a partitioned table (false: the whole table "
                                      "is one)")


def previous_watermarks(states: list[WorkUnitState]) -> dict[str, int]:
    """``{partition name: update time ms}`` a table's committed state holds."""
    marks: dict[str, int] = {}
    for state in states:
        carried = state.get_prop(WATERMARKS_KEY)
        if carried:
            marks.update({k: int(v) for k, v in json.loads(carried).items()})
    for state in states:
        unit = state.get_prop(UNIT_KEY)
        if unit and state.working_state is WorkingState.COMMITTED:
            data = json.loads(unit)
            marks[data["partition"]] = int(data["update_time"])
    return marks


def update_time(location: str) -> int | None:
    """The data folder's modification time in ms (None when the folder is missing)."""
    fs, path = fsutil.open_fs(storage_path(location))
    try:
        info = fs.info(path)
    except FileNotFoundError:
        return None
    mtime = info.get("mtime") or info.get("LastModified") or info.get("created")
    if hasattr(mtime, "timestamp"):
        return int(mtime.timestamp() * 1000)
    return int(float(mtime or 0) * 1000)


class HiveSource(Source):
    """Gobblin's HiveSource: a work unit per Hive partition (or table) updated since it was last converted."""

    settings_class = HiveSourceSettings

    @classmethod
    def validate(cls, props: Mapping[str, str]) -> list[ConfigError]:
        """The job converts, writes and publishes with the conversion's plugins (Gobblin fails otherwise, mid-run)."""
        from gobblin_py.connectors.hive.conversion_publisher import HiveConvertPublisher
        from gobblin_py.connectors.hive.conversion_writer import HiveAvroToOrcConverter, HiveQueryWriterBuilder

        problems = []
        for key, base in (("converter.classes", HiveAvroToOrcConverter),
                          ("writer.builder.class", HiveQueryWriterBuilder),
                          ("data.publisher.type", HiveConvertPublisher)):
            names = [n.strip() for n in (props.get(key) or "").split(",") if n.strip()]
            try:
                found = [resolve_class(n, key) for n in names]
            except UsageError:
                continue  # reported with the job's other plugin names
            if not any(isinstance(c, type) and issubclass(c, base) for c in found):
                problems.append(problem_at(props, key, f"{props.get(key) or 'not set'}: HiveSource's units need "
                                           f"{base.__name__}", f"set {key}={base.__name__}"))
        return problems

    def get_workunits(self, state: SourceState) -> list[WorkUnit]:
        settings = HiveSourceSettings.load(state)
        previous = state.previous_workunit_states_by_urn()
        horizon = int(time.time() * 1000) - settings.lookback_days * DAY_MS
        units: list[WorkUnit] = []
        with connect(settings.metastore_uris, settings.timeout_s) as hms:
            for table in find_tables(hms, settings):
                urn = f"{table.dbName}.{table.tableName}"
                if table.partitionKeys and settings.per_partition:
                    parts = [(partition_name(table, p.values), p.values, p.sd.location, p.createTime)
                             for p in hms.all_partitions(table.dbName, table.tableName)]
                else:
                    parts = [(TABLE_UNIT, [], table.sd.location, table.createTime)]
                units += self._table_units(urn, table, parts, previous_watermarks(previous.get(urn, [])), horizon)
        return units

    @staticmethod
    def _table_units(urn: str, table: Any, parts: list[tuple[str, list[str], str, int]], marks: dict[str, int],
                     horizon: int) -> list[WorkUnit]:
        extract = Extract.create("SNAPSHOT_ONLY", NAMESPACE, urn.replace(".", "_"))
        units, carried = [], dict(marks)
        for name, values, location, created_s in parts:
            if created_s and created_s * 1000 < horizon:
                continue  # created before the lookback window: not looked at (Gobblin's isOlderThanLookback)
            updated = update_time(location)
            low = marks.get(name, 0)
            if updated is None or updated < horizon or updated <= low:
                continue
            unit = WorkUnit.create(extract, WatermarkInterval.of(LongWatermark(low), LongWatermark(updated)))
            unit.set_prop("dataset.urn", urn)
            unit.set_prop(UNIT_KEY, json.dumps({"database": table.dbName, "table": table.tableName,
                                                "partition": name, "values": list(values), "location": location,
                                                "table_location": table.sd.location, "update_time": updated}))
            carried.pop(name, None)
            units.append(unit)
            log.info("hive_conversion_planned", table=urn, partition=name or None, update_time=updated, low=low)
        if units:
            units[0].set_prop(WATERMARKS_KEY, json.dumps(carried, sort_keys=True))
        else:
            log.info("hive_conversion_up_to_date", table=urn)
        return units

    def get_extractor(self, state: WorkUnitState) -> Extractor:
        return HiveConvertExtractor(state)

    def runs_on_cluster(self, unit: WorkUnitState) -> bool:
        """On the Spark engines every unit is converted by the run's own Spark session, from the driver."""
        return True

    def run_on_cluster(self, session: Any, task: TaskState) -> None:
        """Convert the unit with the run's session (which must have Spark's Hive catalog on the metastore), as
        HiveAvroToOrcConverter and HiveQueryWriterBuilder do on the local engine."""
        settings = SparkSqlSettings.load(task)
        if not has_hive_catalog(session):
            raise ConfigError("the run's Spark session has no Hive catalog", key="spark.sql.catalogImplementation",
                              hint="set spark.sql.catalogImplementation=hive and spark.hadoop.hive.metastore.uris="
                                   f"{','.join(settings.metastore_uris)} in the job, or run it with --engine local")
        unit = json.loads(task.get_prop(UNIT_KEY))
        row = with_target(unit_row(unit), OrcTargetSettings.load(task))
        staging, root = staging_of(row)
        try:
            published = convert(session, settings, row, staging, root)
        except BaseException:
            drop_staging(settings, [(row["orc_database"], staging, root)])
            raise
        task.set_prop(PUBLISH_KEY, json.dumps([published]))
        task.set_actual_high_watermark(LongWatermark(int(unit["update_time"])))
        for key, value in zip(CLUSTER_TASK_COUNTERS, (1, 1, 0, ""), strict=True):
            task.set_prop(key, value)


class HiveConvertExtractor(Extractor):
    """The unit's conversion entity: one row naming the table, the partition and its folder (the rows
    themselves are read by Spark SQL, not by gpy)."""

    def __init__(self, state: WorkUnitState) -> None:
        self.state = state
        self.unit: Mapping[str, Any] = json.loads(state.get_prop(UNIT_KEY))

    def get_schema(self) -> pa.Schema:
        return UNIT_SCHEMA

    def read_batches(self):
        yield pa.RecordBatch.from_pylist([unit_row(dict(self.unit))], schema=UNIT_SCHEMA)
        self.state.set_actual_high_watermark(LongWatermark(int(self.unit["update_time"])))

    def get_expected_record_count(self) -> int:
        return 1

