"""A local Kafka broker and sample events for jobs/kafka_to_parquet.pull.

    python scripts/kafka_sample.py start [--port 9092]    start noida-db's broker in the background (the port's
                                                          default: $KAFKA_SAMPLE_PORT, else 9092)
    python scripts/kafka_sample.py produce [--count N]    N JSON events (default 10,000) to topic "events", one bad
    python scripts/kafka_sample.py stop                   stop the broker
    python scripts/kafka_sample.py demo                   all of it: start, produce, run the job twice, stop

The broker is the ``noida-db`` binary of the dev extra (a single program speaking Kafka's protocol), with its data
under work/kafka-broker. Any Kafka broker will do: point ``kafka.brokers`` in the job at it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import socket
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "work" / "kafka-broker"
PID_FILE = DATA / "broker.pid"
TOPIC = "events"


def binary() -> str:
    try:
        import noida_db
    except ImportError:
        sys.exit("noida-db is not installed: make install (or pip install -e '.[dev,kafka]')")
    path = Path(noida_db.__file__).parent / "noida-db"
    path.chmod(path.stat().st_mode | 0o111)
    return str(path)


def listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.2)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def start(port: int) -> None:
    if listening(port):
        sys.exit(f"something already listens on 127.0.0.1:{port}: stop it, or use --port and edit kafka.brokers")
    DATA.mkdir(parents=True, exist_ok=True)
    log = open(DATA / "broker.log", "ab")
    process = subprocess.Popen([binary(), "start", "--only", "kafka", "--host", "127.0.0.1", "--kafka-port", str(port),
                                "--data-dir", str(DATA / "data")], stdout=log, stderr=subprocess.STDOUT,
                               start_new_session=True)
    deadline = time.time() + 15
    while not listening(port):
        if process.poll() is not None or time.time() > deadline:
            sys.exit(f"the broker did not start; see {DATA / 'broker.log'}")
        time.sleep(0.05)
    PID_FILE.write_text(f"{process.pid} {port}\n")
    print(f"broker on 127.0.0.1:{port} (pid {process.pid}, data in {DATA})")


def stop() -> None:
    if not PID_FILE.exists():
        print("no broker started by this script")
        return
    pid = int(PID_FILE.read_text().split()[0])
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    PID_FILE.unlink()
    print(f"broker {pid} stopped")


def produce(port: int, count: int) -> None:
    from confluent_kafka import Producer
    from confluent_kafka.admin import AdminClient, NewTopic

    brokers = f"127.0.0.1:{port}"
    admin = AdminClient({"bootstrap.servers": brokers})
    if TOPIC not in admin.list_topics(timeout=10).topics:
        admin.create_topics([NewTopic(TOPIC, 3, 1, config={"retention.ms": "-1"})])[TOPIC].result(10)
    producer = Producer({"bootstrap.servers": brokers, "linger.ms": 20})
    rng = random.Random(count)
    start_at = datetime.now(timezone.utc) - timedelta(hours=1)
    first = int(time.time() * 1000) % 1_000_000_000 * 100
    for i in range(count):
        event = {"event_id": first + i, "user": f"user{rng.randrange(500)}",
                 "type": rng.choice(["view", "click", "purchase"]), "amount": round(rng.uniform(1, 200), 2),
                 "at": (start_at + timedelta(milliseconds=i * 300)).isoformat(timespec="milliseconds")}
        value = json.dumps(event) if i != count // 2 else "this is not JSON"
        while True:
            try:
                producer.produce(TOPIC, value=value.encode(), key=event["user"].encode())
                break
            except BufferError:
                producer.poll(0.05)
    producer.flush(30)
    print(f"{count} events to topic {TOPIC!r} on {brokers} (one of them not JSON)")


def demo(port: int) -> None:
    gpy = [sys.executable, "-m", "gobblin_py.cli"]
    start(port)
    try:
        produce(port, 10_000)
        for _ in range(2):
            subprocess.run([*gpy, "run", "jobs/kafka_to_parquet.pull", "--engine", "local"], cwd=ROOT, check=True)
        subprocess.run([*gpy, "state", "show", "jobs/kafka_to_parquet.pull"], cwd=ROOT, check=True)
    finally:
        stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["start", "produce", "stop", "demo"])
    parser.add_argument("--port", type=int, default=None)
    parser.add_argument("--count", type=int, default=10_000)
    args = parser.parse_args()
    port = args.port
    if port is None:
        port = (int(PID_FILE.read_text().split()[1]) if PID_FILE.exists() and args.command == "produce"
                else int(os.environ.get("KAFKA_SAMPLE_PORT", "9092")))
    if args.command == "start":
        start(port)
    elif args.command == "produce":
        produce(port, args.count)
    elif args.command == "stop":
        stop()
    else:
        demo(port)


if __name__ == "__main__":
    main()
