"""Prometheus for batch jobs against a real Pushgateway: a push when every run ends (success, failure), the
node-exporter textfile, and a Pushgateway that is down or never answers costing at most the timeout."""

from __future__ import annotations

import time

from tests.conftest import run_gpy_here
from tests.monitor.conftest import free_port, make_job, scrape


def series(scraped: dict, name: str, **labels: str) -> float:
    return scraped[(name, frozenset(labels.items()))]


def test_every_run_pushes_its_outcome_and_a_failure_keeps_the_last_success(tmp_path, pushgateway):
    job = make_job(tmp_path, f"metrics.reporting.prometheus.pushgateway.url={pushgateway}", name="PushOrders")
    before = time.time()
    assert run_gpy_here("run", str(job), "--engine", "local").returncode == 0
    scraped = scrape(pushgateway)
    group = {"job": "PushOrders", "instance": ""}
    success = series(scraped, "gpy_job_last_success_timestamp_seconds", **group)
    assert before <= success <= time.time()
    assert series(scraped, "gpy_job_last_run_status", **group, status="SUCCEEDED") == 1
    assert series(scraped, "gpy_job_last_run_status", **group, status="FAILED") == 0
    assert series(scraped, "gpy_job_records_read", **group) == 20
    assert series(scraped, "gpy_dataset_records_written", **group, dataset="") == 20
    assert series(scraped, "gpy_dataset_bytes_written", **group, dataset="") > 0
    assert series(scraped, "gpy_job_duration_seconds", **group) > 0
    # the orders run to 2026-01-01T19:00Z: the committed event time lags the run's end by that much
    lag = series(scraped, "gpy_dataset_watermark_lag_seconds", **group, dataset="")
    assert abs(lag - (series(scraped, "gpy_job_last_run_timestamp_seconds", **group) - 1767294000)) < 1

    (tmp_path / "data" / "more.csv").write_text("order_id,amount,ordered_at\n1,x,not a time\n")  # the next run fails
    failed = run_gpy_here("run", str(job), "--engine", "local")
    assert failed.returncode not in (0, 3)
    scraped = scrape(pushgateway)
    assert series(scraped, "gpy_job_last_run_status", **group, status="FAILED") == 1
    assert series(scraped, "gpy_job_last_run_exit_code", **group) == failed.returncode
    assert series(scraped, "gpy_job_last_success_timestamp_seconds", **group) == success  # kept
    assert series(scraped, "gpy_job_last_run_timestamp_seconds", **group) > success


def test_the_textfile_is_written_whole_and_keeps_the_last_success(tmp_path):
    from prometheus_client.parser import text_string_to_metric_families

    job = make_job(tmp_path, f"metrics.reporting.prometheus.textfile.dir={tmp_path}/textfile")
    assert run_gpy_here("run", str(job), "--engine", "local").returncode == 0
    prom = tmp_path / "textfile" / "gpy_Orders.prom"

    def values() -> dict:
        families = text_string_to_metric_families(prom.read_text())
        return {(s.name, s.labels.get("status", s.labels.get("dataset"))): s.value for f in families for s in f.samples
                if s.labels["job"] == "Orders"}

    first = values()
    assert first[("gpy_job_last_run_status", "SUCCEEDED")] == 1 and first[("gpy_dataset_records_read", "")] == 20
    (tmp_path / "data" / "more.csv").write_text("order_id,amount,ordered_at\n1,x,not a time\n")
    assert run_gpy_here("run", str(job), "--engine", "local").returncode != 0
    second = values()
    assert second[("gpy_job_last_run_status", "FAILED")] == 1
    assert second[("gpy_job_last_success_timestamp_seconds", None)] == first[("gpy_job_last_success_timestamp_seconds",
                                                                               None)]
    assert [p.name for p in prom.parent.iterdir()] == ["gpy_Orders.prom"]  # no temporary file left


def test_a_pushgateway_that_is_down_or_never_answers_costs_at_most_the_timeout(tmp_path, black_hole):
    job = make_job(tmp_path / "quick")
    start = time.monotonic()
    assert run_gpy_here("run", str(job), "--engine", "local").returncode == 0
    baseline = time.monotonic() - start

    for name, url in (("closed", f"http://127.0.0.1:{free_port()}"), ("silent", black_hole)):
        slow = make_job(tmp_path / name, f"metrics.reporting.prometheus.pushgateway.url={url}",
                        "metrics.reporting.prometheus.timeout=2")
        start = time.monotonic()
        result = run_gpy_here("run", str(slow), "--engine", "local")
        took = time.monotonic() - start
        assert result.returncode == 0, result.stderr[-2000:]
        assert "metrics_not_sent" in result.stderr and url in result.stderr
        assert took < baseline + 2 + 3, (name, took, baseline)  # the timeout, and a margin for a busy machine
