"""The keys of a snapshot + deltas compaction: Gobblin's Hive compactor's ``snapshot.*``, ``delta.<i>.*`` and
``output.*`` (read by its ``CompactionRunner``), and the work folder and memory bound gpy's compaction shares."""

from __future__ import annotations

import re
from dataclasses import dataclass

from gobblin_py.connectors.compaction.settings import CompactionSettings
from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.settings import Kind, Settings, same_as, setting

# what may follow delta.<i>. (Gobblin's job template spells the extension key ``dataformat``: read as the same)
_DELTA_KEY = re.compile(r"^(\d+)\.(name|pkey|datalocation|schemalocation|copydata|dataformat\.extension\.name|"
                        r"dataformat)$")
_DELTA_FIELDS = "name, pkey, datalocation, schemalocation, copydata, dataformat.extension.name"


@dataclass(frozen=True)
class Table:
    """One input of the merge: the snapshot (``role`` ``snapshot``, ``rank`` 0) or delta ``i`` (``delta.<i>``,
    rank ``i``); of the records of one primary key, the one of the highest rank survives."""

    role: str
    rank: int
    location: str
    pkey: tuple[str, ...]
    name: str = ""
    schema_location: str = ""
    extension: str = ""  # only the files ending so are read (Gobblin's copydata with an extension name)

    def key(self, suffix: str) -> str:
        """The job key of this table's ``suffix`` (``pkey``, ``datalocation`` …)."""
        return f"{self.role}.{suffix}"


def _hive_only(key: str, example: str) -> str | None:
    """A key of Gobblin's Hive compactor that tunes Hive: accepted, and without effect (gpy runs no Hive)."""
    return setting(key, kind=Kind.STR, example=example, doc="tunes Gobblin's Hive session; gpy runs no Hive: "
                                                            "accepted, no effect")


def _split(text: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in text.split(",") if item.strip())


def _flag(text: str) -> bool | None:
    word = text.strip().lower()
    return True if word == "true" else False if word in ("false", "") else None


@dataclass(frozen=True)
class HiveCompactionSettings(Settings):
    """The keys of Gobblin's Hive compactor (snapshot + deltas merged by primary key), run without Hive."""

    snapshot_pkey: tuple[str, ...] = setting("snapshot.pkey", required=True, kind=Kind.LIST, example="id",
                                             doc="comma list of the primary key's fields (nested ones dotted); "
                                                 "every delta.N.pkey must name the same, in the same order")
    snapshot_location: str = setting("snapshot.datalocation", required=True, example="/data/members/snapshot",
                                     doc="folder of the snapshot's files (Avro, Parquet or ORC; read recursively, "
                                         "hidden files left out)")
    snapshot_name: str = setting("snapshot.name", default="", default_doc="—",
                                 doc="the snapshot's table name in Gobblin's Hive; gpy names it in its logs")
    snapshot_schema: str = setting("snapshot.schemalocation", default="", default_doc="—",
                                   doc="an Avro schema file the snapshot's Avro files are read with; unset: the "
                                       "newest file's own schema")
    snapshot_copydata: bool = setting("snapshot.copydata", default=False,
                                      doc="Gobblin copies the data aside first; gpy reads it in place (never "
                                          "writing it) and, when true, reads only files ending in "
                                          "snapshot.dataformat.extension.name")
    snapshot_extension: str = setting("snapshot.dataformat.extension.name", default="", default_doc="—",
                                      aliases=("snapshot.dataformat",),
                                      doc="with snapshot.copydata=true: read only the files with this extension")
    deltas: dict[str, str] | None = setting("delta.*", kind=Kind.PREFIX, example="delta.1.datalocation=/data/d1",
                                            doc="delta.N.pkey (required), .datalocation (required), .name, "
                                                ".schemalocation, .copydata, .dataformat.extension.name for N = 1, "
                                                "2, … (numbered without gaps; at least one): of a key in several, "
                                                "the record of the highest N wins, any delta's beats the snapshot's")
    output_location: str = setting("output.datalocation", required=True, example="/data/members/merged",
                                   doc="folder the merge replaces, at once, written in the input's format with the "
                                       "last delta's schema")
    output_name: str = setting("output.name", default="", default_doc="—",
                               doc="the output's table name in Gobblin's Hive; gpy names the dataset so")
    hive_db: str | None = _hive_only("hive.db.name", "default")
    hive_queue: str | None = _hive_only("hive.queue.name", "default")
    hive_mapjoin: str | None = _hive_only("hive.use.mapjoin", "false")
    hive_mapjoin_size: str | None = _hive_only("hive.mapjoin.smalltable.filesize", "25000000")
    hive_split_size: str | None = _hive_only("hive.input.split.size", "268435456")
    hive_reducers: str | None = _hive_only("mapreduce.job.num.reducers", "10")
    hive_schema_dir: str | None = _hive_only("hive.tmpschema.dir", "/tmp/schemas")
    hive_data_dir: str | None = _hive_only("hive.tmpdata.dir", "/tmp/data")
    config_dir: str | None = setting("compaction.config.dir",
                                     doc="Gobblin's folder of compaction job configs, one compaction per file (not "
                                         "built yet: refused; one job file is one compaction, its keys in it)")
    tmp_dest_dir: str = same_as(CompactionSettings, "tmp_dest_dir")
    partition_bytes: int = same_as(CompactionSettings, "partition_bytes")

    def snapshot(self) -> Table:
        return Table("snapshot", 0, self.snapshot_location, self.snapshot_pkey, self.snapshot_name,
                     self.snapshot_schema, self.snapshot_extension if self.snapshot_copydata else "")

    def delta_tables(self) -> tuple[list[Table], list[ConfigError]]:
        """The deltas in order, and the problems of their keys (see :meth:`check`)."""
        found: dict[int, dict[str, str]] = {}
        problems = []
        for rest, value in sorted((self.deltas or {}).items()):
            match = _DELTA_KEY.match(rest)
            if not match:
                problems.append(ConfigError("not a key of a delta", key=f"delta.{rest}",
                                            hint=f"delta.N.<key>, N = 1, 2, …, key one of {_DELTA_FIELDS}"))
                continue
            field = "dataformat.extension.name" if match.group(2) == "dataformat" else match.group(2)
            if value.strip():
                found.setdefault(int(match.group(1)), {})[field] = value.strip()
            else:
                found.setdefault(int(match.group(1)), {})
        tables: list[Table] = []
        for i in sorted(found):
            keys = found[i]
            role = f"delta.{i}"
            if i != len(tables) + 1:
                problems.append(ConfigError(f"delta.{len(tables) + 1}.datalocation is not set, and delta {i} "
                                            f"follows it", key=f"{role}.datalocation",
                                            hint="number the deltas 1, 2, … in the order they were pulled, no gaps"))
                break
            for required in ("datalocation", "pkey"):
                if required not in keys:
                    problems.append(ConfigError("is not set", key=f"{role}.{required}",
                                                hint="each delta needs its pkey and datalocation"))
            copy = _flag(keys.get("copydata", ""))
            if copy is None:
                problems.append(ConfigError(f"{keys['copydata']!r}: not a boolean", key=f"{role}.copydata"))
            tables.append(Table(role, i, keys.get("datalocation", ""), _split(keys.get("pkey", "")),
                                keys.get("name", ""), keys.get("schemalocation", ""),
                                keys.get("dataformat.extension.name", "") if copy else ""))
        if not tables and not problems:
            problems.append(ConfigError("is not set: a merge needs at least one delta", key="delta.1.datalocation",
                                        hint="delta.1.pkey and delta.1.datalocation name the first delta"))
        return tables, problems

    def tables(self) -> list[Table]:
        """The snapshot then the deltas, in rank order (the keys checked: see :meth:`check`)."""
        return [self.snapshot(), *self.delta_tables()[0]]

    def check(self) -> list[ConfigError]:
        deltas, problems = self.delta_tables()
        if self.config_dir:
            problems.append(ConfigError("a folder of compaction configs is not built yet", key="compaction.config.dir",
                                        hint="write each compaction as a job file with its snapshot.*, delta.N.* "
                                             "and output.* keys"))
        for key, value in (("snapshot.datalocation", self.snapshot_location),
                           ("output.datalocation", self.output_location)):
            if not value.strip():
                problems.append(ConfigError("is empty", key=key, hint="name a folder"))
        for delta in deltas:
            if delta.pkey and delta.pkey != self.snapshot_pkey:
                problems.append(ConfigError(f"{','.join(delta.pkey)} is not the snapshot's primary key "
                                            f"({','.join(self.snapshot_pkey)})", key=delta.key("pkey"),
                                            hint="the snapshot and every delta share one primary key"))
        output = self.output_location.rstrip("/") + "/"
        for table in (self.snapshot(), *deltas):
            location = table.location.rstrip("/") + "/"
            if table.location and location != output and (output.startswith(location) or
                                                          location.startswith(output)):
                problems.append(ConfigError(f"{self.output_location} and {table.location} ({table.key('datalocation')})"
                                            " are inside one another", key="output.datalocation",
                                            hint="the output may be an input's folder itself, or beside it"))
        return problems
