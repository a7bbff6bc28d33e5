"""Gobblin's ``DatePartitionedAvroFileSource``: Avro files in date-partitioned folders, pulled partition by partition.

Folders are ``<source.filebased.data.directory>/<prefix>/<date>/<suffix>`` with ``<date>`` formatted by
``date.partitioned.source.partition.pattern`` (a Joda pattern; else by ``…partition.granularity``, default
HOUR) in ``source.timezone`` (default America/Los_Angeles, Gobblin's). A run starts one step after its low
watermark — the later of ``…min.watermark.value`` and the newest partition a previous run committed — and
visits each partition up to now minus the lead time, one step (the pattern's smallest unit) at a time,
taking every ``.avro`` file directly in the folder, until ``…max.files.per.job`` files are taken (a partition is
always taken whole). So, as in Gobblin: the min watermark's own partition is never read, and files that land
in an already committed partition are not picked up. ``…lookback.time`` (``5d``, ``10h``, ``30m``) starts at now
minus the lookback instead.

One work unit per file (Gobblin's legacy watermark keys ``workunit.low/high.water.mark`` and
``workunit.source.date.partition`` hold the partition's time in epoch milliseconds; files of a partition share an
extract named after the data folder); more work units than ``…max.workunits.per.job`` are packed into that many
by file size. ``DatePartitionedDailyAvroSource`` is the same with the pattern ``yyyy/MM/dd``.
"""

from __future__ import annotations

import datetime as dt
import posixpath
import re
import time
from dataclasses import dataclass
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from gobblin_py.connectors.files.avro_files import TABLE_TYPES
from gobblin_py.connectors.files.file_extractor import FileExtractor
from gobblin_py.connectors.files.file_settings import FILES_TO_PULL_KEY, FORMAT_KEY
from gobblin_py.io import fs as fsutil
from gobblin_py.sdk import joda
from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.contracts import Extractor, Source
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.retry import workunits_to_retry
from gobblin_py.sdk.run_states import SourceState
from gobblin_py.sdk.settings import Settings, setting
from gobblin_py.sdk.states import Extract, MultiWorkUnit, WorkingState, WorkUnit, WorkUnitState
from gobblin_py.sdk.watermarks import LongWatermark, WatermarkInterval

log = get_logger(__name__)

P = "date.partitioned.source."
GRANULARITY_PATTERNS = {"YEAR": "yyyy", "MONTH": "yyyy/MM", "DAY": "yyyy/MM/dd", "HOUR": "yyyy/MM/dd/HH",
                        "MINUTE": "yyyy/MM/dd/HH/mm"}
# Joda's average durations, Gobblin's lead-time units
LEAD_UNIT_MS = {"MINUTE": 60_000, "HOUR": 3_600_000, "DAY": 86_400_000, "MONTH": 2_629_746_000,
                "YEAR": 31_556_952_000}
LOW_KEY, HIGH_KEY = "workunit.low.water.mark", "workunit.high.water.mark"
PARTITION_KEY, PARTITION_NAME_KEY = "workunit.source.date.partition", "workunit.source.date.partitionName"
_LOOKBACK = re.compile(r"^(-?\d+)([a-zA-Z])$")
_LOOKBACK_UNITS = {"s": "SECOND", "m": "MINUTE", "h": "HOUR", "H": "HOUR", "K": "HOUR", "d": "DAY", "w": "WEEK",
                   "M": "MONTH", "y": "YEAR", "Y": "YEAR"}


@dataclass(frozen=True)
class DatePartitionSettings(Settings):
    """The keys of :class:`DatePartitionedAvroFileSource` (Gobblin's names and defaults)."""

    directory: str = setting("source.filebased.data.directory", required=True, doc="the dataset's base folder")
    fs_uri: str | None = setting("source.filebased.fs.uri", default_doc="file:///", doc="its filesystem")
    table_type: str = setting("extract.table.type", required=True, choices=TABLE_TYPES, doc="the extract's table type")
    pattern: str | None = setting(P + "partition.pattern", doc="Joda pattern of the partition folders, yyyy/MM/dd")
    granularity: str = setting(P + "partition.granularity", default="HOUR", choices=tuple(GRANULARITY_PATTERNS),
                               doc="without a pattern: YEAR yyyy … MINUTE yyyy/MM/dd/HH/mm")
    prefix: str = setting(P + "partition.prefix", default="", doc="folders before the date")
    suffix: str = setting(P + "partition.suffix", default="", doc="folders after the date")
    min_watermark: str = setting(P + "min.watermark.value", default="0",
                                 doc="a date in the pattern; reading starts one step after it")
    lead_size: int = setting(P + "partition.lead_time.size", default=0, minimum=0,
                             doc="partitions newer than now minus this many units are left for later")
    lead_unit: str = setting(P + "partition.lead_time.granularity", default="HOUR", choices=tuple(LEAD_UNIT_MS),
                             doc="unit of the lead time")
    max_files: int = setting(P + "max.files.per.job", default=2000, minimum=1,
                             doc="files per run (a partition is taken whole, so a run may take more)")
    max_units: int = setting(P + "max.workunits.per.job", default=500, minimum=1,
                             doc="more work units than this are packed into this many, by file size")
    lookback: str | None = setting(P + "lookback.time", aliases=("copy.lookbackTime",),
                                   doc="5d, 10h, 30m: start at now minus this, whatever the state says")
    timezone: str = setting("source.timezone", default="America/Los_Angeles",
                            doc="zone of the partition dates (Gobblin's default)")
    namespace: str | None = setting("extract.namespace", doc="the extract namespace")

    @property
    def partition_pattern(self) -> str:
        return self.pattern or GRANULARITY_PATTERNS[self.granularity]

    @property
    def unit(self) -> str:
        return (joda.lowest_unit(self.pattern) or "DAY") if self.pattern else self.granularity

    def check(self) -> list[ConfigError]:
        problems = []
        try:
            fmt = joda.to_strftime(self.partition_pattern)
        except ValueError as exc:
            return [ConfigError(f"Invalid source partition pattern: {exc}", key=P + "partition.pattern")]
        try:
            ZoneInfo(self.timezone)
        except (ZoneInfoNotFoundError, ValueError):
            problems.append(ConfigError("not a time zone", key="source.timezone", hint="use an IANA id, e.g. UTC"))
            return problems
        try:
            dt.datetime.strptime(self.min_watermark, fmt)
        except ValueError:
            problems.append(ConfigError(f"{self.min_watermark!r} does not match the partition pattern "
                                        f"{self.partition_pattern}", key=P + "min.watermark.value",
                                        hint="give a date in the pattern (Gobblin's default 0 only suits yyyy)"))
        return problems


def add_unit(moment: dt.datetime, unit: str, count: int = 1) -> dt.datetime:
    """Joda's ``withFieldAdded``: durations for time units, calendar fields (wall clock) for dates."""
    zone = moment.tzinfo
    if unit in ("SECOND", "MINUTE", "HOUR"):
        seconds = {"SECOND": 1, "MINUTE": 60, "HOUR": 3600}[unit] * count
        return (moment.astimezone(dt.timezone.utc) + dt.timedelta(seconds=seconds)).astimezone(zone)
    naive = moment.replace(tzinfo=None)
    if unit in ("DAY", "WEEK"):
        naive += dt.timedelta(days=count * (7 if unit == "WEEK" else 1))
    else:
        months = count * (12 if unit == "YEAR" else 1)
        year, month = divmod(naive.month - 1 + months, 12)
        year += naive.year
        day = min(naive.day, [31, 29 if year % 4 == 0 and (year % 100 or year % 400 == 0) else 28, 31, 30, 31, 30,
                              31, 31, 30, 31, 30, 31][month])
        naive = naive.replace(year=year, month=month + 1, day=day)
    return naive.replace(tzinfo=zone)


def millis(moment: dt.datetime) -> int:
    return int(moment.timestamp() * 1000)


class DatePartitionedAvroFileSource(Source):
    """Avro files of date-partitioned folders, one work unit per file."""

    settings_class: type[DatePartitionSettings] = DatePartitionSettings

    def _settings(self, state) -> DatePartitionSettings:
        return self.settings_class.load(state)

    def low_watermark_ms(self, settings: DatePartitionSettings, previous: list[WorkUnitState], now_ms: int) -> int:
        zone = ZoneInfo(settings.timezone)
        if settings.lookback:
            match = _LOOKBACK.match(settings.lookback.strip())
            unit = _LOOKBACK_UNITS.get(match.group(2)) if match else None
            if match is None or unit is None:
                log.warning("lookback_unparsable", value=settings.lookback, note="Gobblin then starts at 1970")
                return 0
            start = dt.datetime.fromtimestamp(now_ms / 1000, zone)
            return millis(add_unit(start, unit, -int(match.group(1))))
        fmt = joda.to_strftime(settings.partition_pattern)
        base = millis(dt.datetime.strptime(settings.min_watermark, fmt).replace(tzinfo=zone))
        committed = [high for w in previous
                     if w.working_state is WorkingState.COMMITTED and (high := w.get_prop_as_int(HIGH_KEY)) is not None]
        base = max([base, *committed])
        epoch = dt.datetime.fromtimestamp(0, zone)
        return base + millis(add_unit(epoch, settings.unit)) - millis(epoch)  # Gobblin's fixed one-unit increment

    def get_workunits(self, state: SourceState) -> list[WorkUnit]:
        settings = self._settings(state)
        previous = [w for states in state.previous_workunit_states_by_urn().values() for w in states]
        retries = workunits_to_retry(state, previous)
        now_ms = int(time.time() * 1000)
        low = self.low_watermark_ms(settings, previous, now_ms)
        files = self._files(settings, low, now_ms - settings.lead_size * LEAD_UNIT_MS[settings.lead_unit],
                            settings.max_files - len(retries))
        name = posixpath.basename(settings.directory.rstrip("/"))
        extracts: dict[int, Extract] = {}
        units: list[tuple[int, WorkUnit]] = [(0, self._retry(old)) for old in retries]
        for path, size, mark, partition in files:
            extract = extracts.setdefault(mark, Extract.create(settings.table_type, settings.namespace or "", name))
            unit = WorkUnit.create(extract, WatermarkInterval.of(LongWatermark(mark), LongWatermark(mark)))
            for key, value in ((LOW_KEY, mark), (HIGH_KEY, mark), (PARTITION_KEY, mark), (PARTITION_NAME_KEY, partition),
                               ("source.entity", name), (FILES_TO_PULL_KEY, path), (FORMAT_KEY, "avro")):
                unit.set_prop(key, value)
            units.append((size, unit))
        log.info("date_partitions_planned", files=len(files), retried=len(retries), low_watermark=low)
        return self._pack(units, settings.max_units)

    @staticmethod
    def _retry(old: WorkUnitState) -> WorkUnit:
        unit = WorkUnit(dict(old.workunit.properties), old.workunit.extract)
        return unit

    def _files(self, settings: DatePartitionSettings, low_ms: int, until_ms: int, budget: int) -> list:
        fs, root = fsutil.open_fs(settings.directory, settings.fs_uri)
        fmt = joda.to_strftime(settings.partition_pattern)
        date = dt.datetime.fromtimestamp(low_ms / 1000, ZoneInfo(settings.timezone))
        found: list[tuple[str, int, int, str]] = []
        while millis(date) <= until_ms and len(found) < budget:
            partition = "/".join(p for p in (settings.prefix, date.strftime(fmt), settings.suffix) if p)
            folder = posixpath.join(root, partition)
            if fs.isdir(folder):
                for info in fs.ls(folder, detail=True):
                    path = info["name"]
                    if info.get("type") == "file" and path.endswith(".avro"):
                        found.append((path, int(info.get("size") or 0), millis(date), partition))
            date = add_unit(date, settings.unit)
        return sorted(found, key=lambda f: (f[2], f[0], f[3]))

    @staticmethod
    def _pack(units: list[tuple[int, WorkUnit]], bins: int) -> list[WorkUnit]:
        if len(units) <= bins:
            return [unit for _, unit in units]
        packed: list[tuple[int, list[WorkUnit]]] = [(0, []) for _ in range(bins)]
        for size, unit in units:  # the lightest bin takes the next work unit
            index = min(range(bins), key=lambda i: packed[i][0])
            weight, members = packed[index]
            packed[index] = (weight + size, members + [unit])
        return [MultiWorkUnit(members) for _, members in packed if members]

    def get_extractor(self, state: WorkUnitState) -> Extractor:
        return FileExtractor(state)


@dataclass(frozen=True)
class DailySettings(DatePartitionSettings):
    """The keys of :class:`DatePartitionedDailyAvroSource`: the pattern is always ``yyyy/MM/dd``."""

    @property
    def partition_pattern(self) -> str:
        return "yyyy/MM/dd"

    @property
    def unit(self) -> str:
        return "DAY"


class DatePartitionedDailyAvroSource(DatePartitionedAvroFileSource):
    """Daily partitions: the pattern is always ``yyyy/MM/dd``."""

    settings_class = DailySettings
