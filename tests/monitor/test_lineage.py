"""OpenLineage run events posted to a local HTTP receiver and validated against OpenLineage's JSON schema: START
and COMPLETE or FAIL under one run id, the inputs read and outputs published with schema and row counts, the
parent run; a receiver that never answers costs at most the timeout."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.monitor.lineage_schema import validate_event
from tests.support.cli import run_gpy_here
from tests.support.monitor import make_job, make_sequential_job, scrape


class Receiver:
    """An OpenLineage HTTP endpoint (POST /api/v1/lineage) on loopback, keeping what it was sent."""

    def __init__(self) -> None:
        self.events: list[dict] = []
        self.paths: list[str] = []
        events, paths = self.events, self.paths

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers["Content-Length"]))
                events.append(json.loads(body))
                paths.append(self.path)
                self.send_response(201)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.close()


def test_a_run_sends_start_and_complete_with_its_datasets(tmp_path, receiver):
    job = make_job(tmp_path, "openlineage.transport.type=http", f"openlineage.transport.url={receiver.url}",
                   "openlineage.namespace=ingest")
    parent = str(uuid.uuid4())
    result = run_gpy_here("run", str(job), "--engine", "local",
                     env={"OPENLINEAGE_PARENT_ID": f"airflow/gpy_ingest.gpy_run/{parent}"})
    assert result.returncode == 0, result.stderr[-3000:]
    assert receiver.paths == ["/api/v1/lineage", "/api/v1/lineage"]
    start, end = receiver.events
    assert [start["eventType"], end["eventType"]] == ["START", "COMPLETE"]
    assert start["run"]["runId"] == end["run"]["runId"]
    assert end["job"]["namespace"] == "ingest" and end["job"]["name"] == "Orders"
    for event in receiver.events:
        checked = validate_event(event)
        assert "ParentRunFacet.json" in checked
        assert event["run"]["facets"]["parent"]["run"]["runId"] == parent
        parent_job = event["run"]["facets"]["parent"]["job"]
        assert (parent_job["namespace"], parent_job["name"]) == ("airflow", "gpy_ingest.gpy_run")
    assert {"SchemaDatasetFacet.json", "InputStatisticsInputDatasetFacet.json",
            "OutputStatisticsOutputDatasetFacet.json"} <= set(validate_event(end))
    [source] = end["inputs"]
    assert (source["namespace"], source["name"]) == ("file", str(tmp_path / "data"))
    assert source["inputFacets"]["inputStatistics"]["rowCount"] == 20
    [output] = end["outputs"]
    assert (output["namespace"], output["name"]) == ("file", str(tmp_path / "published" / "orders"))
    stats = output["outputFacets"]["outputStatistics"]
    assert stats["rowCount"] == 20 and stats["fileCount"] == 1 and stats["size"] > 0
    fields = {f["name"]: f["type"] for f in output["facets"]["schema"]["fields"]}
    assert set(fields) == {"order_id", "amount", "ordered_at"}


def test_a_failed_run_sends_fail_with_its_error_through_the_clients_own_configuration(tmp_path, receiver):
    job = make_job(tmp_path)
    (tmp_path / "data" / "orders.csv").write_text("order_id,amount,ordered_at\n1,x,not a time\n")
    before = dict(os.environ)
    result = run_gpy_here("run", str(job), "--engine", "local", env={"OPENLINEAGE_URL": receiver.url})
    assert result.returncode == 2, result.stderr  # its event time column holds no times: a task found the input bad
    # the client's own OPENLINEAGE__TRANSPORT__* aliases are not left to configure the process's later runs
    assert dict(os.environ) == before
    start, end = receiver.events
    assert [start["eventType"], end["eventType"]] == ["START", "FAIL"]
    assert "ErrorMessageRunFacet.json" in validate_event(end)
    assert end["run"]["facets"]["errorMessage"]["message"]


def test_no_lineage_is_sent_unless_configured_and_a_silent_receiver_costs_at_most_the_timeout(tmp_path, receiver,
                                                                                               black_hole):
    quiet = make_job(tmp_path / "quiet")
    start = time.monotonic()
    assert run_gpy_here("run", str(quiet), "--engine", "local", env={"OPENLINEAGE_URL": ""}).returncode == 0
    baseline = time.monotonic() - start
    off = make_job(tmp_path / "off", "openlineage.enabled=false")
    assert run_gpy_here("run", str(off), "--engine", "local", env={"OPENLINEAGE_URL": receiver.url}).returncode == 0
    assert receiver.events == []

    silent = make_job(tmp_path / "silent", "openlineage.transport.type=http", f"openlineage.transport.url={black_hole}",
                      "openlineage.timeout=1")
    start = time.monotonic()
    result = run_gpy_here("run", str(silent), "--engine", "local")
    took = time.monotonic() - start
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stderr.count("lineage_not_sent") == 2  # START and COMPLETE, one timeout each
    assert took < baseline + 2 * 1 + 3, (took, baseline)


def test_a_stopped_run_sends_abort_and_pushes_its_status(tmp_path, receiver, pushgateway):
    job = make_sequential_job(tmp_path, "openlineage.transport.type=http", f"openlineage.transport.url={receiver.url}",
                              f"metrics.reporting.prometheus.pushgateway.url={pushgateway}", "source.numParallelism=1",
                              "source.numRecordsPerExtract=30", "source.sleepTimePerRecordMillis=100",
                              name="StoppedOrders")
    process = subprocess.Popen([sys.executable, "-m", "gobblin_py.cli", "run", str(job), "--engine", "local"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not receiver.events and time.monotonic() < deadline:
        time.sleep(0.05)
    assert receiver.events, "no START event"
    process.send_signal(signal.SIGTERM)  # the run has started; its one task takes 3 s
    _, err = process.communicate(timeout=60)
    assert process.returncode == 143, err[-2000:]
    assert [e["eventType"] for e in receiver.events] == ["START", "ABORT"]
    validate_event(receiver.events[1])
    pushed = scrape(pushgateway)
    group = frozenset({"job": "StoppedOrders", "instance": "", "status": "STOPPED"}.items())
    assert pushed[("gpy_job_last_run_status", group)] == 1
    assert ("gpy_job_last_success_timestamp_seconds", frozenset({"job": "StoppedOrders", "instance": ""}.items())) \
        not in pushed  # it never succeeded


def test_a_table_read_is_named_by_its_database_and_table(tmp_path, receiver):
    database = tmp_path / "shop.db"
    with sqlite3.connect(database) as conn:
        conn.execute("CREATE TABLE orders (order_id INTEGER PRIMARY KEY, amount REAL, updated_at TIMESTAMP)")
        conn.executemany("INSERT INTO orders VALUES (?, ?, ?)",
                         [(i, i * 0.5, f"2026-01-01 {i:02d}:00:00") for i in range(12)])
    conn.close()
    job = tmp_path / "shop.pull"
    job.write_text("\n".join([
        "job.name=Shop", "source.class=SqliteSource", f"source.conn.database={database}", "source.entities=orders",
        "extract.namespace=shop", "extract.table.type=append_only", "extract.delta.fields=updated_at",
        "extract.primary.key.fields=order_id", "source.querybased.watermark.type=timestamp",
        f"writer.staging.dir={tmp_path}/staging", f"writer.output.dir={tmp_path}/output",
        f"data.publisher.final.dir={tmp_path}/published", f"state.store.dir={tmp_path}/state",
        "openlineage.transport.type=http", f"openlineage.transport.url={receiver.url}", ""]))
    result = run_gpy_here("run", str(job), "--engine", "local")
    assert result.returncode == 0, result.stderr[-3000:]
    end = receiver.events[-1]
    validate_event(end)
    [table] = end["inputs"]
    assert (table["namespace"], table["name"]) == (f"sqlite://{database}", "orders")
    assert table["inputFacets"]["inputStatistics"]["rowCount"] == 12
    [output] = end["outputs"]
    assert output["outputFacets"]["outputStatistics"]["rowCount"] == 12
    assert {f["name"] for f in output["facets"]["schema"]["fields"]} == {"order_id", "amount", "updated_at"}


@pytest.mark.parametrize("publisher, namespace, name, version", [
    ("IcebergPublisher", "iceberg://gpy", "shop.orders", "snapshot"),
    ("DeltaPublisher", "file", "{root}/published/shop/orders", "version"),
])
def test_a_table_is_the_output_with_the_snapshot_or_version_the_run_committed(tmp_path, receiver, publisher,
                                                                                namespace, name, version):
    job = make_job(tmp_path, f"data.publisher.type={publisher}", "extract.namespace=shop",
                   "writer.output.format=PARQUET", "openlineage.transport.type=http",
                   f"openlineage.transport.url={receiver.url}")
    result = run_gpy_here("run", str(job), "--engine", "local")
    assert result.returncode == 0, result.stdout + result.stderr
    committed = next(line.split()[-1] for line in result.stdout.splitlines() if f" {version} " in line)
    end = receiver.events[-1]
    assert "DatasetVersionDatasetFacet.json" in validate_event(end)
    [output] = end["outputs"]
    assert (output["namespace"], output["name"]) == (namespace, name.format(root=tmp_path))
    assert output["facets"]["version"]["datasetVersion"] == committed
    assert output["outputFacets"]["outputStatistics"]["rowCount"] == 20
