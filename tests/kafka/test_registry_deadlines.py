"""A schema registry that accepts the connection and never answers, or drips its answer a byte a second: every
registry request ends within ``kafka.schema.registry.timeout.seconds`` (connection and whole answer), naming the
registry, and a stop ends the wait at once (exit 143 / 130, no further request, the job lock free)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from gobblin_py.runtime.plan.locks import JobLock
from tests.kafka.helpers import KafkaJob
from tests.kafka.hostile import HostileRegistry

# what a healthy registry answers at once; the hostile one would take 100+ s (a byte a second)
BOUND_S = 30


@pytest.fixture
def hostile(request):
    registry = HostileRegistry(request.param)
    yield registry
    registry.close()


def _job(tmp_path, broker, registry: HostileRegistry, **props: str) -> KafkaJob:
    topic = broker.create_topic(partitions=1)
    broker.produce(topic, [b"\x00\x00\x00\x00\x01\x02"], partition=0)  # framed: the subject's schema is needed
    return KafkaJob(tmp_path, broker, topic__whitelist=topic, kafka__deserializer__type="CONFLUENT_AVRO",
                    kafka__schema__registry__url=registry.url, **props)


@pytest.mark.parametrize("hostile", ["silent", "drip"], indirect=True)
def test_a_registry_that_never_answers_or_drips_fails_the_task_within_the_deadline(tmp_path, broker, hostile):
    job = _job(tmp_path, broker, hostile, kafka__schema__registry__timeout__seconds="1")
    started = time.monotonic()
    result = job.run(expect=1)
    assert time.monotonic() - started < BOUND_S
    said = result.stdout + result.stderr
    assert f"{hostile.url}: GET /subjects/" in said and "kafka.schema.registry.timeout.seconds" in said
    assert ("no answer within 1 s" if hostile.mode == "silent" else "no complete answer within 1 s") in said
    assert len(hostile.requests) == 1


@pytest.mark.parametrize("hostile", ["silent"], indirect=True)
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_ends_a_wait_on_the_registry_at_once(tmp_path, broker, hostile, signum):
    job = _job(tmp_path, broker, hostile, task__maxretries="3")  # the default deadline: 30 s
    run = subprocess.Popen([sys.executable, "-m", "gobblin_py.cli", "run", str(job.file), "--engine", "local"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 60
    while not hostile.requests and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert hostile.requests, run.communicate()[1][-3000:]
    time.sleep(0.3)  # well inside the wait
    stopped = time.monotonic()
    if signum == signal.SIGINT:
        os.killpg(run.pid, signum)  # Ctrl-C: the terminal signals the whole group
    else:
        run.send_signal(signum)
    out, err = run.communicate(timeout=120)
    assert time.monotonic() - stopped < 10, err[-3000:]  # it took 60+ s
    assert run.returncode == 128 + signum, err[-3000:]
    assert "Traceback" not in err
    time.sleep(0.3)
    assert len(hostile.requests) == 1  # no retry, no further request
    lock = JobLock({"state.store.dir": str(job.state)}, job.name, "job_next_1")
    lock.acquire()  # free: the next run can start
    lock.release()


@pytest.mark.parametrize("hostile", ["drip"], indirect=True)
def test_the_writer_registers_within_its_deadline_too(hostile):
    import pyarrow as pa

    from gobblin_py.connectors.kafka.registry import ConfluentAvroEncoder
    from gobblin_py.connectors.kafka.registry_http import RegistryHttp
    from gobblin_py.sdk.errors import GobblinPyError

    key = "writer.kafka.schema.registry.timeout.seconds"
    encoder = ConfluentAvroEncoder(RegistryHttp(hostile.url, 0.5, key), "orders", auto_register=True)
    started = time.monotonic()
    with pytest.raises(GobblinPyError) as raised:
        encoder.encode(pa.record_batch({"id": [1, 2]}))
    assert time.monotonic() - started < BOUND_S
    assert f"{hostile.url}: POST /subjects/orders-value/versions: no complete answer within 0.5 s ({key})" in str(
        raised.value)


@pytest.mark.parametrize("hostile", ["silent"], indirect=True)
def test_the_next_url_is_tried_and_credentials_are_never_shown(hostile, schema_registry):
    from gobblin_py.connectors.kafka.registry_http import RegistryError, RegistryHttp

    schema_registry.register("listed-value", {"type": "record", "name": "R", "fields": []})
    guarded = hostile.url.replace("http://", "http://reader:s3cret@")
    both = RegistryHttp(f"{guarded},{schema_registry.url}", 0.3, "kafka.schema.registry.timeout.seconds")
    assert both.get("/subjects/listed-value/versions/latest")["subject"] == "listed-value"
    assert "s3cret" not in both.display and hostile.url in both.display
    with pytest.raises(RegistryError) as raised:
        RegistryHttp(guarded, 0.3, "kafka.schema.registry.timeout.seconds").get("/schemas/ids/1")
    assert "s3cret" not in str(raised.value) and hostile.url in str(raised.value)


def test_answers_whole_chunked_or_cut_short():
    from gobblin_py.connectors.kafka.registry_http import _parse, _Unanswered

    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    assert _parse(head + b"4\r\n{\"a\"\r\n3\r\n: 1\r\n1\r\n}\r\n0\r\n\r\n", ended=False) == (200, b'{"a": 1}')
    assert _parse(head + b"4\r\n{\"a\"\r\n3\r\n: 1", ended=False) is None
    assert _parse(b"HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\n{}", ended=False) == (404, b"{}")
    assert _parse(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n{}", ended=False) is None
    assert _parse(b"HTTP/1.0 200 OK\r\n\r\n{}", ended=True) == (200, b"{}")
    with pytest.raises(_Unanswered):
        _parse(b"SSH-2.0-OpenSSH\r\n\r\n", ended=True)
