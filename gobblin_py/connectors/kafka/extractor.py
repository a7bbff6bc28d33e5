"""``KafkaExtractor``: one work unit's partitions, read in order from each one's low to its expected high offset.

Messages come from librdkafka many at a time (``consume``); per message only the C accessors run (value,
offset, timestamp, key when asked), mapped over the batch, and everything else — batch columns, sizes, the
newest timestamp, decoding — is Arrow kernels over whole batches of ``source.kafka.batch.rows`` messages (or
``source.kafka.batch.bytes``). A partition is done when the next offset reaches its expected high watermark
(transaction markers and compacted gaps are stepped over by the consumer's position); messages beyond it are
left for the next run. A partition that yields nothing for ``source.kafka.socketTimeoutMillis`` ends for this
run, its offset kept (Gobblin ends it at the first empty fetch).

An offset deleted under the reader (retention) follows ``reset.on.offset.out.of.range`` and the offsets lost
are counted. Undecodable messages (:mod:`.deserializers`) are counted, written to an error file when
``qualitychecker.row.err.file`` names a folder, and stepped over: the offset always advances past them.

``close()`` sets the actual high watermark — per partition the offset after the last message read — and
records per partition Gobblin's fetch times and ``<topic>.<id>.avg.record.millis``, and gpy's
``<topic>.<id>.avg.record.size``, ``.record.count``, ``.max.record.timestamp`` (epoch ms) and the last message's
``.last.record.offset`` and ``.last.record.timestamp`` (:mod:`.recreated`).
"""

from __future__ import annotations

import operator
import time
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from gobblin_py.connectors.kafka import keys as K
from gobblin_py.connectors.kafka.client import consumer_config, kafka_module, translate
from gobblin_py.connectors.kafka.deserializers import (
    Deserializer,
    JsonDeserializer,
    UnreadableMessage,
    deserializer_for,
    unify,
)
from gobblin_py.connectors.kafka.errfile import UndecodableLog
from gobblin_py.connectors.kafka.raw import (
    ZERO,
    RawBatch,
    at_least,
    binary_array,
    bool_array,
    int64_array,
    int64_scalar,
    repeated_int32,
    repeated_string,
    without_negatives,
)
from gobblin_py.connectors.kafka.settings import KafkaSourceSettings
from gobblin_py.connectors.kafka.spool import Spool
from gobblin_py.connectors.kafka.turns import FetchTurn, gc_paused
from gobblin_py.sdk.contracts import Extractor, PartitionProgress
from gobblin_py.sdk.errors import GobblinPyError
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.states import WorkUnitState
from gobblin_py.sdk.watermarks import MultiLongWatermark
from gobblin_py.store.startpoints import FILTERED_KEY

log = get_logger(__name__)

CONSUME_MAX = 1000  # messages per consume call: small calls keep librdkafka's message objects in cache
POLL_SECONDS = 0.1
METADATA_TYPES = {"key": pa.binary(), "partition": pa.int32(), "offset": pa.int64(),
                  "timestamp": pa.timestamp("ms", "UTC"), "topic": pa.string()}
_TIMESTAMP = operator.itemgetter(1)


@dataclass
class PartitionStats:
    """What one partition's reading came to: messages, undecodable ones, bytes, newest timestamp, offsets lost."""

    records: int = 0
    undecodable: int = 0
    bytes: int = 0
    min_timestamp: int | None = None
    max_timestamp: int | None = None
    filtered: int = 0
    lost: int = 0
    start: int = 0
    stop: int = 0
    last: tuple[int, int] | None = None  # the last message read: (offset, timestamp)


class KafkaExtractor(Extractor):
    """Reads the partitions of one Kafka work unit as Arrow record batches."""

    def __init__(self, state: WorkUnitState) -> None:
        self.state = state
        self.settings = KafkaSourceSettings.load(state)
        self.topic: str = state.get_prop(K.TOPIC) or ""
        self.partitions = K.partitions_of(state)
        interval = state.workunit.watermark_interval
        if not self.topic or not self.partitions or interval is None:
            raise GobblinPyError(f"work unit {state.id}: not a Kafka work unit (no {K.TOPIC}, {K.PARTITION} or "
                                 "watermark interval)")
        self.low = list(MultiLongWatermark.from_json(interval.low_json).values)
        self.high = list(MultiLongWatermark.from_json(interval.expected_high_json).values)
        self.next = list(self.low)
        self.stats = [PartitionStats() for _ in self.partitions]
        self.deserializer: Deserializer
        if self.settings.deserializer == "CONFLUENT_AVRO" and self.settings.registry_url:
            from gobblin_py.connectors.kafka.registry import registry_deserializer

            self.deserializer = registry_deserializer(self.settings, self.topic)
        else:
            self.deserializer = deserializer_for(self.settings.deserializer, self.settings.schema)
        self.columns = self.settings.columns()
        self.undecodable = UndecodableLog(state, self.topic)
        self._consumer = None
        self._schema: pa.Schema | None = None
        self._spool: Spool | None = None
        # per partition, a replay from a time: (the time, the offset from which messages are new), as int64
        self._since: list[tuple[pa.Scalar, pa.Scalar] | None] | None = None
        self._turn = FetchTurn(self.settings.fetch_parallelism)

    # -- schema

    def get_schema(self) -> pa.Schema:
        if self._schema is None:
            if isinstance(self.deserializer, JsonDeserializer) and self.deserializer.schema is None:
                self._spool_and_infer()  # JSON without source.schema: infer over the whole work unit
            else:
                self.deserializer.load_schema(empty=self.get_expected_record_count() <= 0)
            fields = list(self.deserializer.schema or pa.schema([]))
            fields += [pa.field(f"kafka_{name}", METADATA_TYPES[name]) for name in self.columns]
            self._schema = pa.schema(fields)
        return self._schema

    def get_expected_record_count(self) -> int:
        return sum(h - lo for h, lo in zip(self.high, self.low, strict=True))

    def _spool_and_infer(self) -> None:
        assert isinstance(self.deserializer, JsonDeserializer)
        spool = self._spool = Spool()
        schema: pa.Schema | None = None
        for raw in self._fetch_all():
            spool.append(raw)
            inferred, _ = self.deserializer.infer(raw.values)
            if inferred is not None:
                schema = inferred if schema is None else unify(schema, inferred)
        spool.finish()
        self.deserializer = self.deserializer.with_schema(schema if schema is not None else pa.schema([]))

    # -- reading

    def read_batches(self) -> Iterator[pa.RecordBatch]:
        schema = self.get_schema()
        raws = self._spool.replay() if self._spool is not None else self._fetch_all()
        for raw in raws:
            batch = self._decode(raw, schema)
            if batch.num_rows:
                yield batch

    def filter_before(self, timestamp_ms: int) -> None:
        """A replay from a time: the messages of each partition replayed that were read before (below its
        ``kafka.replay.end``) and are stamped before its time are dropped (the broker's offset for the time is where
        reading starts, and a partition's timestamps may go back and forth a little after it). Messages read for
        the first time, and the partitions not replayed, are all kept."""
        self._since = []
        for index in range(len(self.partitions)):
            since = K.indexed_long(self.state, K.REPLAY_SINCE, index, -1)
            end = K.indexed_long(self.state, K.REPLAY_END, index, -1)
            self._since.append((int64_scalar(since), int64_scalar(end)) if since >= 0 and end >= 0 else None)

    def partition_progress(self) -> dict[str, PartitionProgress]:
        """Per partition: the offsets read (low to the next one) and the messages' timestamps."""
        return {str(pid): PartitionProgress(low, nxt, stats.records, stats.min_timestamp, stats.max_timestamp)
                for pid, low, nxt, stats in zip(self.partitions, self.low, self.next, self.stats, strict=True)}

    def _decode(self, raw: RawBatch, schema: pa.Schema) -> pa.RecordBatch:
        try:
            decoded, bad = self.deserializer.decode(raw.values)  # the decodable messages' columns
        except UnreadableMessage as exc:
            error = GobblinPyError(f"topic {self.topic} partition {self.partitions[raw.index]} at offset "
                                   f"{raw.offsets[exc.index].as_py()}: {exc}")
            error.retryable = exc.retryable
            raise error from None
        columns = list(decoded.columns)
        keep = None  # over all the batch's messages
        if bad:
            self.stats[raw.index].undecodable += len(bad)
            self.undecodable.write(self.partitions[raw.index], raw, bad)
            mask = np.ones(len(raw.values), np.bool_)
            mask[[index for index, _ in bad]] = False
            keep = bool_array(mask)
        for name in self.columns:
            if name == "key":
                assert raw.keys is not None  # read whenever the kafka_key column is asked for
                column = raw.keys
            elif name == "offset":
                column = raw.offsets
            elif name == "timestamp":
                column = without_negatives(raw.timestamps)
                column = column.cast(pa.timestamp("ms")).cast(METADATA_TYPES["timestamp"])
            elif name == "partition":
                column = repeated_int32(self.partitions[raw.index], len(raw.values))
            else:
                column = repeated_string(self.topic, len(raw.values))
            columns.append(column.filter(keep) if keep is not None else column)
        batch = pa.RecordBatch.from_arrays(columns, schema=schema)
        replay = self._since[raw.index] if self._since is not None else None
        if replay is None:
            return batch
        since, end = replay
        stamps = raw.timestamps.filter(keep) if keep is not None else raw.timestamps
        offsets = raw.offsets.filter(keep) if keep is not None else raw.offsets
        recent = batch.filter(pc.or_(at_least(stamps, since), pc.greater_equal(offsets, end)))
        self.stats[raw.index].filtered += batch.num_rows - recent.num_rows
        return recent

    def _fetch_all(self) -> Iterator[RawBatch]:
        for index in range(len(self.partitions)):
            if self.next[index] < self.high[index]:
                yield from self._fetch(index)

    def _consumer_for(self):
        if self._consumer is None:
            kafka = kafka_module()
            try:
                self._consumer = kafka.Consumer(consumer_config(self.settings))
            except (kafka.KafkaException, ValueError, TypeError) as exc:
                raise translate(exc, "creating a consumer", self.settings) from None
        return self._consumer

    def _fetch(self, index: int) -> Iterator[RawBatch]:
        kafka = kafka_module()
        consumer = self._consumer_for()
        where = kafka.TopicPartition(self.topic, self.partitions[index], self.next[index])
        self._turn.take()  # tasks take turns: librdkafka holds what it fetched until it is consumed
        try:
            consumer.assign([where])
            yield from self._read(consumer, index)
        finally:
            try:
                consumer.unassign()  # what was fetched beyond the expected high offset goes now
            except (kafka.KafkaException, RuntimeError):  # RuntimeError: the consumer is closed already
                pass
            self._turn.give()

    def _read(self, consumer, index: int) -> Iterator[RawBatch]:
        kafka = kafka_module()
        pid, high, stats = self.partitions[index], self.high[index], self.stats[index]
        stats.start = stats.start or int(time.time() * 1000)
        message = kafka.Message
        values: list = []
        offsets: list = []
        stamps: list = []
        keys: list = []
        size = 0
        idle_since = time.monotonic()
        stall = self.settings.socket_timeout_ms / 1000
        try:
            while self.next[index] < high:
                with gc_paused():
                    messages = consumer.consume(min(CONSUME_MAX, high - self.next[index]), timeout=POLL_SECONDS)
                    if messages:
                        if any(map(message.error, messages)):
                            messages = self._handle_errors(consumer, index, messages)
                        if messages and messages[-1].offset() >= high:
                            messages = messages[:_first_at_or_after(messages, high)]
                        if messages:
                            idle_since = time.monotonic()
                            chunk = list(map(message.value, messages))
                            values += chunk
                            first, last = messages[0].offset(), messages[-1].offset()
                            if last - first == len(messages) - 1:  # no gap (the usual case): no call per message
                                offsets += range(first, last + 1)
                            else:
                                offsets += map(message.offset, messages)
                            stamps += map(_TIMESTAMP, map(message.timestamp, messages))
                            if "key" in self.columns:
                                keys += map(message.key, messages)
                            self.next[index] = offsets[-1] + 1
                            size += sum(map(len, filter(None, chunk)))
                    got = bool(messages)
                    messages = chunk = []  # the messages go now, by reference counting, not later by the collector
                # transaction markers and compacted gaps: the consumer's position steps over them
                position = consumer.position([kafka.TopicPartition(self.topic, pid)])[0].offset
                if position > self.next[index]:
                    self.next[index] = min(position, high)
                if values and (len(values) >= self.settings.batch_rows or size >= self.settings.batch_bytes
                               or self.next[index] >= high):
                    yield self._raw(index, values, offsets, stamps, keys)
                    values, offsets, stamps, keys, size = [], [], [], [], 0
                if not got and time.monotonic() - idle_since > stall:
                    log.warning("kafka_partition_stalled", topic=self.topic, partition=pid, offset=self.next[index],
                                expected_high=high, seconds=round(stall, 1),
                                note="nothing arrived: the partition ends for this run; the next run resumes here")
                    break
            if values:
                yield self._raw(index, values, offsets, stamps, keys)
        except kafka.KafkaException as exc:
            raise GobblinPyError(f"topic {self.topic} partition {pid} at offset {self.next[index]}: "
                                 f"{translate(exc, 'fetching', self.settings)}") from None
        finally:
            stats.stop = int(time.time() * 1000)

    def _raw(self, index: int, values: list, offsets: list, stamps: list, keys: list) -> RawBatch:
        with gc_paused():
            return self._arrays(index, values, offsets, stamps, keys)

    def _arrays(self, index: int, values: list, offsets: list, stamps: list, keys: list) -> RawBatch:
        stats = self.stats[index]
        raw = RawBatch(index, binary_array(values), int64_array(offsets), int64_array(stamps),
                       binary_array(keys) if "key" in self.columns else None)
        stats.records += len(values)
        stats.last = (offsets[-1], stamps[-1])
        stats.bytes += int(pc.sum(pc.binary_length(raw.values)).as_py() or 0)
        extremes = pc.min_max(raw.timestamps)
        if (extremes["min"].as_py() or 0) < 0:  # some messages have no timestamp (-1): only the others count
            extremes = pc.min_max(raw.timestamps.filter(pc.greater_equal(raw.timestamps, ZERO)))
        oldest, newest = extremes["min"].as_py(), extremes["max"].as_py()
        if newest is not None:
            stats.max_timestamp = newest if stats.max_timestamp is None else max(stats.max_timestamp, newest)
            stats.min_timestamp = oldest if stats.min_timestamp is None else min(stats.min_timestamp, oldest)
        return raw

    def _handle_errors(self, consumer, index: int, messages: list) -> list:
        """Data messages kept; an offset deleted under us moves per ``reset.on.offset.out.of.range``."""
        kafka = kafka_module()
        kept = []
        pid = self.partitions[index]
        for msg in messages:
            error = msg.error()
            if error is None:
                kept.append(msg)
                continue
            if error.code() not in (kafka.KafkaError._AUTO_OFFSET_RESET, kafka.KafkaError.OFFSET_OUT_OF_RANGE):
                raise GobblinPyError(f"topic {self.topic} partition {pid} at offset {self.next[index]}: {error.str()}")
            if kept:  # read what came before; the error comes again at the next fetch
                break
            earliest, latest = consumer.get_watermark_offsets(kafka.TopicPartition(self.topic, pid),
                                                              timeout=self.settings.socket_timeout_ms / 1000)
            policy = self.settings.reset
            offset = self.next[index]
            if policy == "skip":
                start = self.high[index]  # end the partition: its offset stays where it is
            elif policy == "latest" or (policy == "nearest" and offset > latest):
                start = latest
            else:
                start = earliest
            lost = max(0, min(start, self.high[index]) - offset) if policy != "skip" else 0
            self.stats[index].lost += lost
            log.warning("kafka_offset_out_of_range", topic=self.topic, partition=pid, offset=offset,
                        earliest=earliest, latest=latest, policy=policy, offsets_lost=lost,
                        note="deleted while the run was reading (retention)")
            if policy == "skip":
                self.high[index] = offset
                return []
            self.next[index] = min(start, self.high[index])
            consumer.assign([kafka.TopicPartition(self.topic, pid, self.next[index])])
            return []
        return kept

    # -- the end

    def close(self) -> None:
        state = self.state
        try:
            state.set_actual_high_watermark(MultiLongWatermark(self.next))
            undecodable = sum(s.undecodable for s in self.stats)
            state.set_prop(K.UNDECODABLE_COUNT, undecodable)
            state.set_prop(K.ERROR_PARTITION_COUNT, sum(1 for s in self.stats if s.undecodable))
            state.set_prop(FILTERED_KEY, sum(s.filtered for s in self.stats))
            if undecodable:
                state.set_prop("qualitychecker.row.policy.results.kafka", self.undecodable.results(undecodable))
            for index, (pid, stats) in enumerate(zip(self.partitions, self.stats, strict=True)):
                state.set_prop(f"{K.START_FETCH_TIME}.{index}", stats.start)
                state.set_prop(f"{K.STOP_FETCH_TIME}.{index}", stats.stop)
                key = lambda what, pid=pid: K.partition_key(self.topic, pid, what)  # noqa: E731
                state.set_prop(key(K.RECORD_COUNT), stats.records)
                decoded = stats.records - stats.undecodable
                if decoded > 0:
                    state.set_prop(key(K.AVG_RECORD_MILLIS), (stats.stop - stats.start) / decoded)
                if stats.records:
                    state.set_prop(key(K.AVG_RECORD_SIZE), round(stats.bytes / stats.records))
                if stats.max_timestamp is not None:
                    state.set_prop(key(K.MAX_TIMESTAMP), stats.max_timestamp)
                for what, value in zip(K.LAST_MESSAGE, stats.last or (), strict=False):
                    state.set_prop(key(what), value)
                if stats.lost:
                    state.set_prop(f"{K.OFFSETS_LOST}.read.{index}", stats.lost)
        finally:
            self._turn.give()
            self.undecodable.close()
            self.deserializer.close()
            if self._spool is not None:
                self._spool.close()
            if self._consumer is not None:
                consumer, self._consumer = self._consumer, None
                consumer.close()


def _first_at_or_after(messages: list, offset: int) -> int:
    """The index of the first message at or after ``offset`` (messages are in offset order)."""
    lo, hi = 0, len(messages)
    while lo < hi:
        mid = (lo + hi) // 2
        if messages[mid].offset() < offset:
            lo = mid + 1
        else:
            hi = mid
    return lo
