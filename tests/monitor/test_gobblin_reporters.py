"""Gobblin's Kafka, Graphite and InfluxDB reporters against the real servers: a report every interval while the
job runs and one at its end, in Gobblin's formats and names; an unreachable reporter costs its timeout only."""

from __future__ import annotations

import io
import json
import re
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path

from tests.support.cli import run_gpy_here
from tests.support.monitor import make_job, make_sequential_job
from tests.support.net import free_port

# three records, one every 350 ms: a run of over a second, long enough for interval reports of 200 ms (and, in
# carbon's whisper files of one-second resolution, for more than one point)
SLOW = ("metrics.report.interval=200", "source.numParallelism=1", "source.numRecordsPerExtract=3",
        "source.sleepTimePerRecordMillis=350")
WRITTEN = "gobblin.writer.records.written"


def slow_job(root: Path, *extra: str) -> Path:
    return make_sequential_job(root, *SLOW, *extra)


def job_id_of(result) -> str:
    """The run's job id, from the summary the run printed (or its log, when it failed)."""
    found = re.search(r"\bjob_Orders_\d+\b", result.stdout) or re.search(r"\bjob_Orders_\d+\b", result.stderr)
    assert found, result.stdout + result.stderr[-2000:]
    return found.group(0)


def test_kafka_gets_metric_reports_and_events_in_gobblins_formats(tmp_path, broker):
    from fastavro import parse_schema, schemaless_reader

    from gobblin_py.runtime.monitor.kafka_reporter import METRIC_REPORT, TRACKING_EVENT

    metrics_topic, events_topic = broker.create_topic(partitions=1), broker.create_topic(partitions=1)
    job = slow_job(tmp_path, "metrics.reporting.kafka.enabled=true", f"metrics.reporting.kafka.brokers={broker.bootstrap}",
                   f"metrics.reporting.kafka.topic.metrics={metrics_topic}",
                   f"metrics.reporting.kafka.topic.events={events_topic}", "metrics.reporting.kafka.format=avro",
                   "metrics.reporting.events.kafka.format=json")
    result = run_gpy_here("run", str(job), "--engine", "local")
    assert result.returncode == 0, result.stderr[-3000:]

    reports = []
    for message in broker.read_all(metrics_topic):
        assert message.value()[:4] == b"\x00\x00\x00\x01"  # Gobblin's fixed schema version
        reports.append(schemaless_reader(io.BytesIO(message.value()[4:]), parse_schema(METRIC_REPORT)))
    job_reports = [r for r in reports if set(r["tags"]) == {"jobName", "jobId", "metricContextName"}]
    assert len(job_reports) >= 3, reports  # at least one interval report, then the job's last report
    job_id = job_reports[-1]["tags"]["jobId"]
    assert job_reports[-1]["tags"]["metricContextName"] == f"gobblin.metrics.{job_id}"
    final = {m["name"]: m["value"] for m in job_reports[-1]["metrics"]}
    assert final[WRITTEN + ".COUNT"] == 3.0 and final[WRITTEN + ".MEAN_RATE"] > 0
    assert any("taskId" in r["tags"] for r in reports)

    events = []
    for message in broker.read_all(events_topic):
        assert message.value()[:4] == b"\x00\x00\x00\x01"
        events.append(json.loads(message.value()[4:]))
    names = [e["name"] for e in events]
    assert names[0] == "JobStartTimer" and names[-3:] == ["JobSucceededTimer", "FullJobExecutionTimer",
                                                          "JobStateEvent"], names
    state = events[-1]
    assert state["namespace"] == {"string": "gobblin.runtime"}  # Avro's JSON encoding of the union
    assert state["metadata"]["jobState"] == "SUCCEEDED" and state["metadata"]["jobId"] == job_id
    # the JSON is Avro's own: it reads back with Gobblin's schema
    from fastavro import json_reader

    assert next(json_reader(io.StringIO(json.dumps(state)), TRACKING_EVENT))["name"] == "JobStateEvent"


def whisper_points(path: Path) -> list[float]:
    done = subprocess.run(["whisper-fetch", "--json", "--from", str(int(time.time()) - 600), str(path)],
                          capture_output=True, text=True, check=True)
    return [v for v in json.loads(done.stdout)["values"] if v is not None]


def test_graphite_gets_metrics_and_events_in_carbon(tmp_path, carbon_server):
    port, whisper = carbon_server
    job = slow_job(tmp_path, "metrics.reporting.graphite.metrics.enabled=true",
                   "metrics.reporting.graphite.events.enabled=true", "metrics.reporting.graphite.hostname=127.0.0.1",
                   f"metrics.reporting.graphite.port={port}", "metrics.reporting.graphite.prefix=gpytest",
                   "metrics.reporting.graphite.events.value.as.key=true")
    result = run_gpy_here("run", str(job), "--engine", "local")
    assert result.returncode == 0, result.stderr[-3000:]
    job_id = job_id_of(result)
    base = whisper / "gpytest" / "gobblin" / "metrics" / job_id
    written = base / "gobblin" / "writer" / "records" / "written" / "count.wsp"
    state = base / "events" / "JobStateEvent" / "jobState" / "SUCCEEDED.wsp"
    duration = base / "events" / "JobSucceededTimer" / "durationMillis.wsp"
    deadline = time.monotonic() + 60  # carbon writes its cache to whisper files in the background
    while not (written.exists() and state.exists() and duration.exists() and 3.0 in whisper_points(written)):
        assert time.monotonic() < deadline, (sorted(str(p) for p in base.rglob("*.wsp")),
                                             written.exists() and whisper_points(written), result.stderr[-3000:])
        time.sleep(0.2)
    points = whisper_points(written)
    # whisper keeps one value a second, the last sent in it: how many interval reports land in distinct seconds
    # depends on the run's pace, so the interval reports are counted where each is kept (Kafka, InfluxDB)
    assert points and points[-1] == 3.0, points  # the final report's total
    assert whisper_points(duration)[-1] > 0


def influx(url: str, query: str, db: str = "") -> dict:
    data = urllib.parse.urlencode({"q": query, "db": db}).encode()
    with urllib.request.urlopen(urllib.request.Request(url + "/query", data=data), timeout=10) as answer:
        return json.loads(answer.read())


def test_influxdb_gets_metrics_and_events(tmp_path, influxdb_server):
    influx(influxdb_server, "CREATE DATABASE gobblin")
    influx(influxdb_server, "CREATE DATABASE gobblin_events")
    job = slow_job(tmp_path, "metrics.reporting.influxdb.metrics.enabled=true",
                   "metrics.reporting.influxdb.events.enabled=true", f"metrics.reporting.influxdb.url={influxdb_server}",
                   "metrics.reporting.influxdb.database=gobblin", "metrics.reporting.influxdb.events.database="
                   "gobblin_events")
    result = run_gpy_here("run", str(job), "--engine", "local")
    assert result.returncode == 0, result.stderr[-3000:]
    job_id = job_id_of(result)
    answer = influx(influxdb_server, f'SELECT value FROM "gobblin.metrics.{job_id}.{WRITTEN}.count"', "gobblin")
    values = [row[1] for row in answer["results"][0]["series"][0]["values"]]
    assert len(values) >= 3 and values[-1] == 3, values  # interval reports, then the final one
    answer = influx(influxdb_server, f'SELECT value FROM "gobblin.metrics.{job_id}.events.JobStateEvent.jobState"',
                    "gobblin_events")
    assert answer["results"][0]["series"][0]["values"][0][1] == "SUCCEEDED"

    failing = make_job(tmp_path / "failing", *[line for line in job.read_text().splitlines() if line.startswith("metrics.")])
    (tmp_path / "failing" / "data" / "orders.csv").write_text("order_id,amount,ordered_at\n1,x,not a time\n")
    failed = run_gpy_here("run", str(failing), "--engine", "local")
    assert failed.returncode == 2, failed.stderr[-3000:]  # the end of a failed run is reported too
    failed_id = job_id_of(failed)
    answer = influx(influxdb_server, f'SELECT value FROM "gobblin.metrics.{failed_id}.events.JobStateEvent.jobState"',
                    "gobblin_events")
    assert answer["results"][0]["series"][0]["values"][0][1] == "FAILED"


def test_unreachable_reporters_cost_their_timeout_and_never_the_exit_code(tmp_path, black_hole):
    silent = black_hole.rsplit(":", 1)[1]  # accepts connections, never answers
    job = make_job(tmp_path, "metrics.report.interval=100", "metrics.reporting.kafka.enabled=true",
                   f"metrics.reporting.kafka.brokers=127.0.0.1:{silent}", "metrics.reporting.kafka.topic.common=m",
                   "metrics.reporting.kafka.timeout=1", "metrics.reporting.graphite.metrics.enabled=true",
                   "metrics.reporting.graphite.hostname=127.0.0.1", f"metrics.reporting.graphite.port={free_port()}",
                   "metrics.reporting.graphite.timeout=1", "metrics.reporting.influxdb.events.enabled=true",
                   f"metrics.reporting.influxdb.url={black_hole}", "metrics.reporting.influxdb.database=d",
                   "metrics.reporting.influxdb.password=hunter2-secret", "metrics.reporting.influxdb.user=u",
                   "metrics.reporting.influxdb.timeout=1")
    (tmp_path / "data" / "orders.csv").write_text("order_id,amount,ordered_at\n1,x,not a time\n")  # a failed run
    started = time.monotonic()
    result = run_gpy_here("run", str(job), "--engine", "local")
    elapsed = time.monotonic() - started
    assert result.returncode == 2, result.stderr[-3000:]  # a bad value in the data, as without reporters
    for reporter in ("kafka", "graphite", "influxdb"):
        assert f"reporter={reporter}" in result.stderr or f'"reporter": "{reporter}"' in result.stderr, \
            result.stderr[-3000:]
    assert "hunter2" not in result.stdout + result.stderr
    assert elapsed < 30, elapsed  # three reporters of 1 s each; never the 60+ s of an unbounded wait


def test_validate_refuses_a_reporter_without_its_server(tmp_path):
    job = make_job(tmp_path, "metrics.reporting.kafka.enabled=true", "metrics.reporting.graphite.events.enabled=true",
                   "metrics.reporting.influxdb.metrics.enabled=true", "metrics.reporting.influxdb.url=http://i:8086")
    result = run_gpy_here("validate", str(job))
    out = result.stdout + result.stderr
    assert result.returncode == 2, out
    for key in ("metrics.reporting.kafka.brokers", "metrics.reporting.kafka.topic.common",
                "metrics.reporting.graphite.hostname", "metrics.reporting.influxdb.database"):
        assert key in out, out
