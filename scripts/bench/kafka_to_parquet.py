"""Benchmark: a Kafka topic to Parquet — gpy against a bare confluent-kafka → Arrow → Parquet loop.

    python scripts/bench/kafka_to_parquet.py [--messages 5000000] [--size 100] [--partitions 3] [--repeat 3]

Starts a local broker (noida-db, from the dev extra), produces the messages once (about ``--size`` bytes each,
round-robin over the partitions), then times, as whole processes started from here (interpreter and JVM
start-up included), interleaved and ``--repeat`` times:

- the bare loop, the practical limit: one consumer, each partition assigned in turn, ``consume()`` in bulk,
  values into Arrow arrays of 65,536 messages, each a row group of one Parquet file per partition;
- gpy ``--engine local`` and ``--engine spark`` (``local[*]``) on a job pulling the topic from the start, with
  fresh state each time.

Each contender's output must hold every message. Prints each one's median time, messages/s and the ratio of
its time to the bare loop's.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[2]
TOPIC = "bench"

# noida-db answers a fetch with everything from the offset to the partition's end, whatever the fetch size
# limits say: both contenders accept responses of up to 1 GB (librdkafka's default refuses more than 100 MB)
RECEIVE_MAX = 1_000_000_000

BARE_LOOP = f"""
import sys, pathlib, pyarrow as pa, pyarrow.parquet as pq
from confluent_kafka import Consumer, TopicPartition, Message
brokers, topic, out = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3]); out.mkdir(parents=True)
consumer = Consumer({{"bootstrap.servers": brokers, "group.id": "bench", "enable.auto.commit": False,
                     "receive.message.max.bytes": {RECEIVE_MAX}}})
partitions = sorted(consumer.list_topics(topic, timeout=10).topics[topic].partitions)
schema = pa.schema([("value", pa.binary())])
for p in partitions:
    low, high = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)
    consumer.assign([TopicPartition(topic, p, low)])
    writer = pq.ParquetWriter(out / f"part-{{p}}.parquet", schema, compression="snappy")
    values, position = [], low
    while position < high:
        messages = consumer.consume(min(2000, high - position), timeout=1.0)
        if not messages:
            continue
        values += map(Message.value, messages)
        position = messages[-1].offset() + 1
        if len(values) >= 65536 or position >= high:
            writer.write_batch(pa.record_batch([pa.array(values, pa.binary())], schema=schema))
            values = []
    writer.close()
consumer.close()
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_broker(directory: Path) -> tuple[subprocess.Popen, str]:
    """The Kafka tests' broker (noida-db's binary, found as ``tests/kafka/servers.py`` finds it) on a free port."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from tests.kafka.servers import broker_binary

    binary = broker_binary()
    if binary is None:
        raise RuntimeError("the noida-db package (the Kafka broker) is not installed: pip install -e '.[dev,kafka]'")
    port = free_port()
    process = subprocess.Popen([binary, "start", "--only", "kafka", "--host", "127.0.0.1", "--kafka-port",
                                str(port), "--data-dir", str(directory)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 15
    while time.time() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return process, f"127.0.0.1:{port}"
        time.sleep(0.05)
    process.kill()
    raise RuntimeError("the broker did not start")


def produce(brokers: str, messages: int, size: int, partitions: int) -> None:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": brokers})
    admin.create_topics([NewTopic(TOPIC, partitions, 1, config={"retention.ms": "-1"})])[TOPIC].result(30)
    producer = Producer({"bootstrap.servers": brokers, "linger.ms": 50, "batch.num.messages": 10000,
                         "queue.buffering.max.messages": 500000})
    filler = b"x" * size
    for i in range(messages):
        value = b"%012d" % i + filler[12:]
        while True:
            try:
                producer.produce(TOPIC, value=value, partition=i % partitions)
                break
            except BufferError:
                producer.poll(0.1)
    producer.flush(120)


def gpy_job(root: Path, brokers: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    job = root / "bench.pull"
    job.write_text(textwrap.dedent(f"""\
        job.name=KafkaBench
        source.class=gobblin_py.connectors.kafka.KafkaSimpleSource
        kafka.brokers={brokers}
        topic.whitelist={TOPIC}
        bootstrap.with.offset=earliest
        writer.output.format=PARQUET
        writer.codec.type=snappy
        writer.file.path.type=tablename
        writer.staging.dir={root}/staging
        writer.output.dir={root}/output
        data.publisher.final.dir={root}/published
        state.store.dir={root}/state
        task.maxretries=0
        source.kafka.consumerConfig.receive.message.max.bytes={RECEIVE_MAX}
        """))
    return job


def timed(cmd: list[str], cwd: Path | None = None) -> float:
    started = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env={**os.environ, "PYTHONPATH": str(REPO)})
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{cmd[:4]} failed:\n{done.stderr[-3000:]}")
    return elapsed


def count_rows(directory: Path) -> int:
    return sum(pq.ParquetFile(f).metadata.num_rows for f in directory.rglob("*.parquet"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=5_000_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--engines", default="local,spark")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="gpy-bench-kafka-"))
    broker, brokers = start_broker(root / "broker")
    try:
        started = time.perf_counter()
        produce(brokers, args.messages, args.size, args.partitions)
        print(f"{args.messages} messages of {args.size} bytes in {args.partitions} partitions, produced in "
              f"{time.perf_counter() - started:.1f} s; {os.cpu_count()} cores")
        contenders = {"bare confluent-kafka loop": None}
        contenders.update({f"gpy --engine {e}": e for e in args.engines.split(",") if e})
        times: dict[str, list[float]] = {name: [] for name in contenders}
        for round_ in range(args.repeat):
            for name, engine in contenders.items():
                work = root / f"run-{round_}-{engine or 'bare'}"
                if engine is None:
                    out = work / "out"
                    times[name].append(timed([sys.executable, "-c", BARE_LOOP, brokers, TOPIC, str(out)]))
                else:
                    job = gpy_job(work, brokers)
                    times[name].append(timed([sys.executable, "-m", "gobblin_py.cli", "run", str(job), "--engine",
                                              engine], cwd=REPO))
                    out = work / "published"
                rows = count_rows(out)
                assert rows == args.messages, f"{name}: {rows} rows, expected {args.messages}"
                shutil.rmtree(work, ignore_errors=True)
                print(f"  round {round_ + 1}: {name}: {times[name][-1]:.2f} s", flush=True)
        bare = statistics.median(times["bare confluent-kafka loop"])
        print(f"\n| contender | median time (of {args.repeat}) | messages/s | × the bare loop's time |")
        print("|---|---|---|---|")
        for name, values in times.items():
            median = statistics.median(values)
            print(f"| {name} | {median:.2f} s | {args.messages / median / 1e6:.2f} M | {median / bare:.2f} |")
    finally:
        broker.send_signal(signal.SIGTERM)
        try:
            broker.wait(60)  # it saves its data first
        except subprocess.TimeoutExpired:
            broker.kill()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
