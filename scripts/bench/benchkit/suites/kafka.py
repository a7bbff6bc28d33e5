"""A Kafka topic → Parquet: 2,000,000 messages of 100 bytes in 3 partitions, then the next run with nothing new.

The broker is the Kafka tests' (noida-db's single binary, from the dev extra), started by
``kafka_to_parquet.start_broker`` in a temporary folder on a free port and stopped afterwards; the topic is
produced once per ``make bench``. Contenders: the limit is ``kafka_to_parquet.py``'s bare confluent-kafka loop
(``consume()`` in bulk, values into Arrow arrays of 65,536 messages, one Parquet file per partition; it keeps
no offsets, so it has no no-op row); gpy ``--engine local`` on a job pulling the topic from the earliest
offset, fresh state each trial, then the same job again. No peer: dlt has no Kafka source of its own.

Targets: gpy's first run within 1.2 × the bare loop's time and 1.5 × its peak memory.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import kafka_to_parquet
from benchkit.context import Context
from benchkit.model import GPY_LOCAL, Benchmark, Case, Contender, Step, Target, memory_within
from benchkit.peers import BARE, parquet_rows

MESSAGES = 2_000_000
SIZE = 100
PARTITIONS = 3
FIRST, NOOP = "kafka-first", "kafka-noop"
KEYS = (FIRST, NOOP)
LIMIT = "bare confluent-kafka loop"
LIMIT_RATIO = 1.2  # gpy's time at most this × the bare loop's
NOTES = [
    "Kafka: the bench's broker (noida-db) answers a fetch with the whole rest of the partition whatever the fetch "
    "size limits, and librdkafka keeps it parsed, about 450 bytes a message (300 MB for a partition of 666,667), "
    "until it is consumed: queue and fetch settings cannot bound it. gpy's tasks take turns reading partitions "
    "(source.kafka.fetch.parallelism, 1 by default; at 2, 710 to 730 MB and no faster), as the bare loop reads one "
    "after the other. gpy keeps all threads' C allocations in one glibc malloc arena: with one arena per "
    "thread, librdkafka's freed memory stayed resident (about 625 MB instead of 440 MB). The raw batches are built "
    "from b''.join and the lengths' running sum, not pa.array, which imports pandas (0.5 to 1 s, 50 MB; the "
    "bare loop's environment has no pandas); offsets without gaps are a range. What remains of the time is "
    "gpy's start, planning and commit (a no-op run took 0.56 s in the last full make bench, 0.8 to 1.1 s under "
    "load 6 to 9) "
    "and, per message, the error check and the timestamp (the bare loop takes the value only). Measured with "
    "--repeats 5 under load 6 to 9.5, each version against the bare loop in its own run, two runs each: before "
    "these changes time 1.66 and 1.57 x, memory 2.31 x; with them time 1.23 and 1.16 x, memory 1.08 x.",
]


def _cases(messages: int) -> list[Case]:
    return [
        Case(FIRST, f"Kafka topic → Parquet, {messages:,} messages of {SIZE} bytes, {PARTITIONS} partitions",
             messages, unit="msgs", targets=[Target(FIRST, GPY_LOCAL, LIMIT, "<=", LIMIT_RATIO),
                                             memory_within(FIRST, LIMIT)]),
        Case(NOOP, "Kafka, the next run with nothing new (no-op)", 0, unit="msgs"),
    ]


def _contenders(ctx: Context, brokers: str, messages: int) -> list[Contender]:
    bare, bare_error = ctx.python(BARE)

    def bare_trial(work: Path) -> list[Step]:
        out = work / "out"
        argv = [bare or "python", "-c", kafka_to_parquet.BARE_LOOP, brokers, kafka_to_parquet.TOPIC, str(out)]
        return [Step(argv, FIRST, messages, lambda: parquet_rows(out))]

    def gpy_trial(work: Path) -> list[Step]:
        command = ctx.gpy("run", str(kafka_to_parquet.gpy_job(work, brokers)), "--engine", "local")
        out = work / "published"
        return [Step(command, FIRST, messages, lambda: parquet_rows(out)),
                Step(command, NOOP, messages, lambda: parquet_rows(out))]

    return [Contender(LIMIT, "limit", bare_trial, cases=(FIRST,), error=bare_error),
            Contender(GPY_LOCAL, "gpy", gpy_trial)]


def _stop(broker: subprocess.Popen) -> None:
    broker.send_signal(signal.SIGTERM)
    try:
        broker.wait(60)  # it saves its data first
    except subprocess.TimeoutExpired:
        broker.kill()


def benchmarks(ctx: Context) -> Iterator[Benchmark]:
    if not ctx.wants(*KEYS):
        return
    messages = ctx.size(MESSAGES, least=PARTITIONS)
    root = Path(tempfile.mkdtemp(prefix="gpy-bench-kafka-"))
    broker = None
    try:
        try:
            broker, brokers = kafka_to_parquet.start_broker(root / "broker")
            kafka_to_parquet.produce(brokers, messages, SIZE, PARTITIONS)
        except Exception as exc:  # no broker package, a broker that did not start…
            failed = [Contender(name, role, lambda work: [], error=f"the Kafka topic: {exc}")
                      for name, role in ((LIMIT, "limit"), (GPY_LOCAL, "gpy"))]
            yield Benchmark("kafka", _cases(messages), failed)
            return
        yield Benchmark("kafka", _cases(messages), _contenders(ctx, brokers, messages), notes=NOTES)
    finally:
        if broker is not None:
            _stop(broker)
        shutil.rmtree(root, ignore_errors=True)
