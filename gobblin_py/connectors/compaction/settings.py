"""The keys of a compaction job: Gobblin's ``compaction.*`` names and defaults (MRCompactor,
TimeBasedSubDirDatasetsFinder, the dedup job runner), and the few gpy adds where Gobblin has none."""

from __future__ import annotations

import re
from dataclasses import dataclass

from gobblin_py.connectors.compaction.names import (
    FormatGenericRunner,
    SimpleDatasetsFinder,
    TimeBasedSubDirDatasetsFinder,
)
from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.errors import UsageError
from gobblin_py.sdk.plugins import resolve_class
from gobblin_py.sdk.settings import Kind, Settings, setting

TIME_BASED_FINDER = "org.apache.gobblin.compaction.dataset.TimeBasedSubDirDatasetsFinder"
FINDER_KEY, RUNNER_KEY = "compaction.datasets.finder", "compaction.job.runner.class"
DEDUP_KEY = "compaction.job.dedup.key"
KEY_FIELDS_KEY = "compaction.dedup.key.fields"
PERIOD = re.compile(r"^(?:(\d+)m(?!in))?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)min)?$")
_PERIOD_DOC = "a period ?m?d?h?min (m = months, min = minutes), e.g. 3d, 1d2h, 30min"
_NOT_BUILT = (
    ("new_folder", "recompaction.write.to.new.folder", "writing each compaction to compaction_<N> is not built yet"),
)
VERIFY = "compaction.completeness.verification."
VERIFY_ENABLED_KEY, VERIFY_JOB_KEY, VERIFY_STORE_KEY = VERIFY + "enabled", VERIFY + "job.name", VERIFY + "state.store.dir"
VERIFY_URN_KEY = VERIFY + "dataset.urn"


@dataclass(frozen=True)
class CompactionSettings(Settings):
    """The keys of a compaction job (Gobblin's CompactionSource and MRCompactor keys)."""

    input_dir: str = setting("compaction.input.dir", required=True, example="/data/kafka_topics",
                             doc="root of the input: the datasets are below it")
    dest_dir: str = setting("compaction.dest.dir", required=True, example="/data/kafka_topics",
                            doc="root of the output: <dest.dir>/<dataset>/<dest.subdir>/<time>")
    input_subdir: str = setting("compaction.input.subdir", default="hourly",
                                doc="folder between a dataset's name and its time folders in the input")
    dest_subdir: str = setting("compaction.dest.subdir", default="daily",
                               doc="folder between a dataset's name and its time folders in the output")
    tmp_dest_dir: str = setting("compaction.tmp.dest.dir", default="/tmp/gobblin-compaction",
                                doc="the job's work folder: task staging and, unless set, the state store")
    dataset_pattern: str | None = setting("gobblin.dataset.pattern", example="/data/*/*/hourly/*/*/*",
                                          doc="CompactionSource: each folder this glob matches is one dataset (a "
                                              "time folder below <input.dir>/<name>/<input.subdir>); unset: "
                                              "compaction.datasets.finder finds them")
    finder: str = setting(FINDER_KEY, default=TIME_BASED_FINDER,
                          default_doc="TimeBasedSubDirDatasetsFinder",
                          doc="without gobblin.dataset.pattern: TimeBasedSubDirDatasetsFinder (one dataset per time "
                              "folder) or SimpleDatasetsFinder (compaction.input.dir is the one dataset)")
    folder_pattern: str = setting("compaction.folder.pattern", default="YYYY/MM/dd",
                                  aliases=("compaction.timebased.folder.pattern",),
                                  doc="TimeBasedSubDirDatasetsFinder: Joda pattern of the time folders (YYYY/MM/dd/HH "
                                      "for hourly datasets)")
    subdir_pattern: str = setting("compaction.timebased.subdir.pattern", default="*",
                                  doc="TimeBasedSubDirDatasetsFinder: glob below compaction.input.dir of the dataset "
                                      "folders")
    timezone: str = setting("compaction.timezone", default="America/Los_Angeles",
                            doc="time zone of the time folders and of 'now' (Gobblin's default)")
    max_time_ago: str = setting("compaction.timebased.max.time.ago", default="3d",
                                doc=f"skip time folders older than now minus this: {_PERIOD_DOC}")
    min_time_ago: str = setting("compaction.timebased.min.time.ago", default="1d",
                                doc=f"skip time folders newer than now minus this: {_PERIOD_DOC}")
    whitelist: tuple[str, ...] = setting("compaction.whitelist", default=(),
                                         doc="regexes (full match) of dataset names to compact; empty: all")
    blacklist: tuple[str, ...] = setting("compaction.blacklist", default=(),
                                         doc="regexes (full match) of dataset names never compacted")
    max_datasets: int = setting("compaction.datasets.max.count", default=1_000_000_000, minimum=1,
                                doc="most datasets compacted in one run (the oldest time folders first)")
    input_deduplicated: bool = setting("compaction.input.deduplicated", default=False,
                                       doc="the input is deduplicated already (e.g. hourly into daily)")
    output_deduplicated: bool = setting("compaction.output.deduplicated", default=True,
                                        doc="the output must be deduplicated; false: late files go straight into "
                                            "the output, not its _late folder")
    should_deduplicate: bool | None = setting("compaction.should.deduplicate",
                                              default_doc="not input.deduplicated and output.deduplicated",
                                              doc="deduplicate the records (true), or only merge the files (false)")
    dedup_key: str = setting(DEDUP_KEY, default="KEY",
                             doc="ALL: a record's every field (but lists and maps) is its key; KEY: the fields whose "
                                 "Avro doc ends in 'primarykey', or compaction.dedup.key.fields (ALL when none); "
                                 "CUSTOM: the fields of compaction.job.avro.key.schema.loc")
    key_schema: str | None = setting("compaction.job.avro.key.schema.loc",
                                     doc="CUSTOM: an Avro schema file whose fields are the key")
    key_fields: tuple[str, ...] = setting(KEY_FIELDS_KEY, default=(), example="id,header.memberId",
                                          doc="gpy: KEY's fields, for input without Avro docs (Parquet, ORC); "
                                              "nested fields dotted")
    latest_fields: tuple[str, ...] = setting(
        "compaction.dedup.latest.fields", default=(),
        aliases=("org.apache.gobblin.compaction.ConfBasedDeltaFieldProvider.deltaFields",),
        doc="gpy: of records with one key, keep the one with the greatest values of these fields (compared in "
            "order; nulls lose); unset: the first read (files by path, rows in file order)")
    from_input: bool = setting("compaction.recompact.from.input.for.late.data", default=False,
                               doc="late files make the dataset compacted again from its input (needs "
                                   "compaction.job.overwrite.output.dir=true), instead of being set aside")
    from_dest: bool = setting("compaction.recompact.from.dest.paths", default=False,
                              doc="compact the output and its _late folder again (the late folder is then "
                                  "consumed), instead of the input")
    overwrite: bool = setting("compaction.job.overwrite.output.dir", default=False,
                              doc="a recompaction may replace existing output")
    runner: str | None = setting(RUNNER_KEY,
                                 aliases=("compaction.jobConfiguratorFactory.class",),
                                 doc="Gobblin's per-format runner or configurator; accepted for Avro and ORC, the "
                                     "format is the input's own (Avro, Parquet or ORC)")
    partition_bytes: int = setting("compaction.local.partition.bytes", default=256 << 20, minimum=1 << 20,
                                   kind=Kind.SIZE, doc="gpy: input bytes deduplicated in memory at once; a larger "
                                                  "dataset is hash-partitioned into spill files by key first")
    rename_source: bool = setting("compaction.rename.source.dir.enabled", default=False,
                                  doc="mark what was compacted in the input instead of writing _COMPACTION_COMPLETE: "
                                      "each input folder's compacted files move to <folder>_COMPLETE")
    new_folder: bool = setting("recompaction.write.to.new.folder", default=False,
                               doc="write each compaction to compaction_<N> (not built yet: refused)")
    completeness: bool = setting(VERIFY_ENABLED_KEY, default=False,
                                 doc="compact a time folder never compacted only once the ingestion job is complete "
                                     "past its end, as its completeness clock says (gpy state watermark --at); "
                                     "one that is not yet is skipped, and the run names it")
    verify_job: str | None = setting(VERIFY_JOB_KEY, example="KafkaToHourly",
                                     doc="gpy: the job.name of the ingestion job whose clock is asked")
    verify_store: str | None = setting(VERIFY_STORE_KEY, example="/data/state/ingestion",
                                       doc="gpy: that ingestion job's state.store.dir (a folder or URL)")
    verify_urn: str = setting(VERIFY_URN_KEY, default="{name}", example="{table}",
                              doc="gpy: the ingestion job's dataset asked for each compaction dataset: {name} is the "
                                  "dataset's name (its folders below compaction.input.dir), {table} their last one "
                                  "(a Kafka topic below a namespace folder); empty: the job's one dataset")
    verify_anyway: bool = setting(VERIFY + "publish.data.if.cannot.verify", default=False,
                                  doc="compact an incomplete time folder all the same (the run says so)")
    verify_whitelist: tuple[str, ...] = setting(VERIFY + "whitelist", default=(),
                                                doc="regexes (full match) of the dataset names verified; empty: all")
    verify_blacklist: tuple[str, ...] = setting(VERIFY + "blacklist", default=(),
                                                doc="regexes (full match) of dataset names compacted unverified")

    @property
    def deduplicate(self) -> bool:
        if self.should_deduplicate is not None:
            return self.should_deduplicate
        return not self.input_deduplicated and self.output_deduplicated

    def check(self) -> list[ConfigError]:
        problems = []
        for key, value in (("compaction.timebased.max.time.ago", self.max_time_ago),
                           ("compaction.timebased.min.time.ago", self.min_time_ago)):
            if not value.strip() or not PERIOD.match(value.strip()):
                problems.append(ConfigError(f"{value!r} is not a period", key=key, hint=_PERIOD_DOC))
        if not problems and period_seconds(self.min_time_ago) > period_seconds(self.max_time_ago):
            problems.append(ConfigError(f"{self.min_time_ago} is longer than compaction.timebased.max.time.ago="
                                        f"{self.max_time_ago}: no time folder is ever compacted",
                                        key="compaction.timebased.min.time.ago",
                                        hint="folders between max.time.ago and min.time.ago ago are compacted: "
                                             "min.time.ago is the shorter"))
        if self.dedup_key.strip().upper() not in ("ALL", "KEY", "CUSTOM"):
            problems.append(ConfigError(f"{self.dedup_key!r} is not ALL, KEY or CUSTOM", key=DEDUP_KEY))
        elif self.dedup_key.strip().upper() == "CUSTOM" and not self.key_schema:
            problems.append(ConfigError("CUSTOM needs compaction.job.avro.key.schema.loc", key=DEDUP_KEY))
        for key, name, wanted in ((FINDER_KEY, self.finder, (TimeBasedSubDirDatasetsFinder, SimpleDatasetsFinder)),
                                  (RUNNER_KEY, self.runner, (FormatGenericRunner,))):
            try:
                found = resolve_class(name, key) if name else None
            except UsageError as exc:
                problems.append(ConfigError(str(exc), key=key))
                continue
            if found is not None and found not in wanted:
                problems.append(ConfigError(f"{name} is not one of {', '.join(w.__name__ for w in wanted)}", key=key))
        for key, patterns in (("compaction.whitelist", self.whitelist), ("compaction.blacklist", self.blacklist),
                              (VERIFY + "whitelist", self.verify_whitelist),
                              (VERIFY + "blacklist", self.verify_blacklist)):
            for pattern in patterns:
                try:
                    re.compile(pattern)
                except re.error as exc:
                    problems.append(ConfigError(f"{pattern!r} is not a regex: {exc}", key=key))
        try:
            from zoneinfo import ZoneInfo

            ZoneInfo(self.timezone)
        except (KeyError, ValueError, OSError):
            problems.append(ConfigError(f"{self.timezone!r} is not a time zone", key="compaction.timezone"))
        if self.completeness:
            problems.extend(self._verification_problems())
        for attr, key, message in _NOT_BUILT:
            if getattr(self, attr):
                problems.append(ConfigError(f"true: {message}", key=key, hint="leave it false"))
        return problems

    def _verification_problems(self) -> list[ConfigError]:
        problems = [ConfigError(f"is not set: {VERIFY_ENABLED_KEY}=true asks the ingestion job's completeness clock",
                                key=key, hint=hint)
                    for key, value, hint in ((VERIFY_JOB_KEY, self.verify_job, "name the ingestion job (its job.name)"),
                                             (VERIFY_STORE_KEY, self.verify_store,
                                              "name the ingestion job's state.store.dir"))
                    if not (value or "").strip()]
        try:
            self.verify_urn.format(name="", table="")
        except (KeyError, IndexError, ValueError) as exc:
            problems.append(ConfigError(f"{self.verify_urn!r}: {type(exc).__name__} {exc}", key=VERIFY_URN_KEY,
                                        hint="use {name}, {table} or plain text"))
        try:
            simple = not self.dataset_pattern and self.finder_class is SimpleDatasetsFinder
        except UsageError:
            simple = False  # the finder key's own problem is reported already
        if simple:
            problems.append(ConfigError("SimpleDatasetsFinder's one dataset has no time folder whose completeness "
                                        "could be asked", key=VERIFY_ENABLED_KEY,
                                        hint="verify time folders: gobblin.dataset.pattern or "
                                             "TimeBasedSubDirDatasetsFinder"))
        return problems

    @property
    def finder_class(self) -> type:
        return resolve_class(self.finder, FINDER_KEY)

    @property
    def key_mode(self) -> str:
        return self.dedup_key.strip().upper()


def period_seconds(text: str) -> float:
    """Seconds of a Gobblin period ``?m?d?h?min`` (a month is 30 days, as Joda's standard period)."""
    match = PERIOD.match(text.strip())
    if not match:
        raise ValueError(f"{text!r} is not a period")
    months, days, hours, minutes = (int(g or 0) for g in match.groups())
    return ((months * 30 + days) * 24 + hours) * 3600.0 + minutes * 60.0
