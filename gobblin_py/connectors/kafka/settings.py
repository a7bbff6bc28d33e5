"""The keys of the Kafka source, declared once: Gobblin's names and defaults unless a comment says otherwise."""

from __future__ import annotations

import re
from dataclasses import dataclass

from gobblin_py.sdk.config_errors import ConfigError
from gobblin_py.sdk.settings import Kind, Settings, setting

BROKERS_KEY = "kafka.brokers"
DESERIALIZER_KEY = "kafka.deserializer.type"
SCHEMA_KEY = "source.schema"
REGISTRY_URL_KEY = "kafka.schema.registry.url"
REGISTRY_TIMEOUT_KEY = "kafka.schema.registry.timeout.seconds"
METADATA_COLUMNS_KEY = "source.kafka.metadata.columns"
METADATA_COLUMNS = ("key", "partition", "offset", "timestamp", "topic")
DESERIALIZERS = ("BYTE_ARRAY", "STRING", "JSON", "GSON", "AVRO", "CONFLUENT_AVRO")


@dataclass(frozen=True)
class KafkaSourceSettings(Settings):
    """The keys of :class:`gobblin_py.connectors.kafka.KafkaSimpleSource` and its extractor."""

    brokers: tuple[str, ...] = setting(BROKERS_KEY, required=True, example="localhost:9092",
                                       doc="the brokers to bootstrap from (comma list of host:port)")
    whitelist: tuple[str, ...] = setting("topic.whitelist", default=(),
                                         doc="regular expressions (comma list, full match): topics to pull; "
                                             "empty: every topic")
    blacklist: tuple[str, ...] = setting("topic.blacklist", default=(),
                                         doc="regular expressions (comma list, full match): topics never pulled "
                                             "(wins over the whitelist)")
    bootstrap: str = setting("bootstrap.with.offset", default="latest",
                             choices=("latest", "earliest", "offset_lookback", "skip"),
                             doc="where a partition without a stored offset starts; skip: not pulled (no state)")
    lookback: int = setting("kafka.offset.lookback", default=0, minimum=0,
                            doc="offset_lookback: start this many offsets before the latest")
    reset: str = setting("reset.on.offset.out.of.range", default="nearest",
                         choices=("nearest", "earliest", "latest", "skip"),
                         doc="a stored offset outside the partition's range (deleted by retention, topic "
                             "recreated) moves to the nearest end, the earliest or the latest offset; skip keeps it "
                             "and pulls nothing")
    move_to_latest: tuple[str, ...] = setting("topics.move.to.latest.offset", default=(),
                                              doc="topics (names, any case, or all) that skip ahead to the latest "
                                                  "offset this run")
    allow_namespace: bool = setting("gobblin.kafka.extract.allowTableTypeAndNamspaceCustomization", default=False,
                                    doc="use the job's extract.namespace and extract.table.type instead of KAFKA "
                                        "and APPEND_ONLY")
    max_mappers: int = setting("mr.job.max.mappers", default=100, minimum=1,
                               doc="work units are packed into at most this many MultiWorkUnits (tasks groups)")
    target_mapper_size: float | None = setting("mr.target.mapper.size", minimum=0,
                                               doc="estimated size per MultiWorkUnit: fewer of them when the total is "
                                                   "small")
    packer: str = setting("kafka.workunit.packer.type", default="SINGLE_LEVEL",
                          choices=("SINGLE_LEVEL", "BI_LEVEL", "CUSTOM"),
                          doc="how partitions are packed (Gobblin's single- or bi-level packer, or your own)")
    packer_class: str | None = setting("kafka.workunit.packer.customizedType",
                                       doc="CUSTOM packer: a class with pack(units_by_topic, containers)")
    estimator: str = setting("kafka.workunit.size.estimator.type", default="AVG_RECORD_SIZE",
                             choices=("AVG_RECORD_SIZE", "AVG_RECORD_TIME"),
                             doc="a partition's work: offsets to read × the previous run's average record size "
                                 "(or time)")
    pre_grouping_factor: float = setting("workunit.pre.grouping.size.factor", default=3.0, minimum=0.01,
                                         doc="BI_LEVEL: groups are 1/factor of an even share")
    avg_time_cap: float = setting("kakfa.source.avgFetchTimeCap", default=100.0,
                                  doc="AVG_RECORD_TIME: cap on a previous average (ms); <= 0: no cap")
    fetch_timeout_ms: int = setting("source.kafka.fetchTimeoutMillis", default=1000, minimum=1,
                                    doc="one fetch waits at most this long for records")
    socket_timeout_ms: int = setting("source.kafka.socketTimeoutMillis", default=30000, minimum=1,
                                     doc="a broker that does not answer for this long fails planning; a partition "
                                         "that yields nothing for this long ends for this run (resumed next run)")
    group_id: str = setting("source.kafka.group.id", default="gobblin_py",
                            doc="consumer group named to the broker (no offsets are committed to it)")
    consumer_config: dict = setting("source.kafka.consumerConfig.*", default=None,
                                    doc="passed to the consumer (librdkafka's configuration names)")
    shared_config: dict = setting("gobblin.kafka.sharedConfig.*", default=None,
                                  doc="passed to the consumer and the producer where not set more specifically")
    deserializer: str = setting(DESERIALIZER_KEY, default="BYTE_ARRAY", choices=DESERIALIZERS,
                                doc="how message values become columns: BYTE_ARRAY (binary value), STRING (utf-8 "
                                    "value), JSON/GSON (a column per field), AVRO (a column per field, with the "
                                    "schema in source.schema), CONFLUENT_AVRO (Confluent's framing: the schemas "
                                    "from kafka.schema.registry.url, or source.schema)")
    schema: str | None = setting(SCHEMA_KEY,
                                 doc="JSON: the fields (Gobblin's column list, an Avro record schema or "
                                     "name:type,…); AVRO: the writer's Avro schema; unset JSON: inferred; "
                                     "CONFLUENT_AVRO with a registry: the reader's schema instead of the subject's "
                                     "latest")
    registry_url: str | None = setting(REGISTRY_URL_KEY, example="http://localhost:8081",
                                       doc="CONFLUENT_AVRO: Confluent's schema registry (comma list of URLs); each "
                                           "message's writer schema is looked up by its id, every record is read "
                                           "with the subject's latest schema")
    subject_suffix: str = setting("kafka.schema_registry.confluent.schema_name_suffix", default="-value",
                                  doc="CONFLUENT_AVRO: a topic's subject in the registry is the topic name and this")
    registry_cache: int = setting("kafka.schema.registry.max.cache.size", default=1000, minimum=1,
                                  doc="CONFLUENT_AVRO: writer schemas a task keeps (the oldest goes first)")
    registry_timeout_s: float = setting(REGISTRY_TIMEOUT_KEY, default=30.0, minimum=0.001, maximum=3600,
                                        doc="CONFLUENT_AVRO: each request to the registry, connection and whole "
                                            "answer, ends within this many seconds (the next URL is tried, else "
                                            "the task fails naming the registry)")
    metadata_columns: tuple[str, ...] = setting(METADATA_COLUMNS_KEY, default=(),
                                                doc="add columns kafka_key, kafka_partition, kafka_offset, "
                                                    "kafka_timestamp, kafka_topic (comma list of key, partition, "
                                                    "offset, timestamp, topic)")
    batch_rows: int = setting("source.kafka.batch.rows", default=65536, minimum=1,
                              doc="records per Arrow batch")
    batch_bytes: int = setting("source.kafka.batch.bytes", kind=Kind.SIZE, default=64 << 20, minimum=1,
                               default_doc="64MB", doc="bytes of message values per Arrow batch, at most")
    fetch_parallelism: int = setting("source.kafka.fetch.parallelism", default=1, minimum=1,
                                     doc="partitions a process reads at once (tasks take turns): librdkafka holds "
                                         "what it fetched of a partition until it is consumed")
    threads: int = setting("kafka.source.work.units.creation.threads", default=30, minimum=1,
                           doc="threads asking the broker for offsets while planning")

    def check(self) -> list[ConfigError]:
        problems = []
        for key, patterns in (("topic.whitelist", self.whitelist), ("topic.blacklist", self.blacklist)):
            for pattern in patterns:
                try:
                    re.compile(pattern)
                except re.error as exc:
                    problems.append(ConfigError(f"{pattern!r} is not a regular expression ({exc})", key=key,
                                                hint="give a comma list of regular expressions"))
        for column in self.metadata_columns:
            if column.lower() not in METADATA_COLUMNS:
                problems.append(ConfigError(f"{column!r} is not a metadata column", key=METADATA_COLUMNS_KEY,
                                            hint=f"use {', '.join(METADATA_COLUMNS)}"))
        if self.packer == "CUSTOM" and not self.packer_class:
            problems.append(ConfigError("CUSTOM needs a class", key="kafka.workunit.packer.type",
                                        hint="set kafka.workunit.packer.customizedType"))
        if self.deserializer == "AVRO" and not self.schema:
            problems.append(ConfigError("AVRO needs the writer's Avro schema", key=SCHEMA_KEY,
                                        hint="set source.schema to the Avro schema JSON"))
        if self.deserializer == "CONFLUENT_AVRO" and not self.schema and not self.registry_url:
            problems.append(ConfigError("CONFLUENT_AVRO needs a schema registry (or the writer's Avro schema)",
                                        key=REGISTRY_URL_KEY, hint="set kafka.schema.registry.url to the registry's "
                                        "URL, or source.schema to the one Avro schema every message was written with"))
        if self.registry_url and not all(u.strip().startswith(("http://", "https://"))
                                         for u in self.registry_url.split(",")):
            problems.append(ConfigError(f"{self.registry_url!r} is not an http(s) URL", key=REGISTRY_URL_KEY,
                                        hint="e.g. http://localhost:8081"))
        if self.fetch_timeout_ms >= self.socket_timeout_ms:
            problems.append(ConfigError("must be below source.kafka.socketTimeoutMillis",
                                        key="source.kafka.fetchTimeoutMillis", hint="lower it"))
        return problems

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(self.brokers)

    def topic_passes(self, topic: str) -> bool:
        """Gobblin's filter: not blacklisted, and whitelisted when there is a whitelist (full matches)."""
        if any(re.fullmatch(p, topic) for p in self.blacklist):
            return False
        return not self.whitelist or any(re.fullmatch(p, topic) for p in self.whitelist)

    def moves_to_latest(self, topic: str) -> bool:
        names = {n.lower() for n in self.move_to_latest}
        return "all" in names or topic.lower() in names

    def columns(self) -> tuple[str, ...]:
        """The requested metadata columns, lower case, in the order asked."""
        return tuple(dict.fromkeys(c.lower() for c in self.metadata_columns))
