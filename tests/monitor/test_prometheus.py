"""Prometheus for batch jobs against a real Pushgateway: a push when every run ends (success, failure), the
node-exporter textfile, and a Pushgateway that is down or never answers costing at most the timeout."""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

from tests.support.cli import run_gpy_here
from tests.support.monitor import make_job, scrape
from tests.support.net import free_port


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
    assert failed.returncode == 65, failed.stderr  # amount=x where the dataset has doubles: bad data
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
    assert run_gpy_here("run", str(job), "--engine", "local").returncode == 65  # bad data
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


MONITORING = Path(__file__).resolve().parents[2] / "docs" / "operating" / "monitoring.md"


def documented_rules() -> str:
    """The alerting rules of the docs' Monitoring page, as written there."""
    section = MONITORING.read_text()
    return next(block for block in re.findall(r"```yaml\n(.*?)```", section, re.S) if "alert:" in block)


def promtool_test(promtool: str, folder: Path, scraped: dict, at: int, expected: dict[str, list[dict]]) -> None:
    """Evaluate the docs' rules with ``promtool test rules`` over ``scraped`` (the Pushgateway's series, as a
    Prometheus scraping it with honor_labels holds them) at epoch second ``at``: each alert fires exactly with the
    ``expected`` labels and annotations. An empty label is no label to Prometheus.

    promtool's clock starts at 0 and evaluates every minute up to the time asked: the epoch is moved to 10 minutes
    before ``at`` (time stamps, which the rules only compare with ``time()``, moved with it)."""
    (folder / "rules.yml").write_text(documented_rules())
    epoch, now = at - 600, 600

    def selector(name: str, labels: frozenset) -> str:
        kept = ",".join(f'{k}="{v}"' for k, v in sorted(labels) if v)
        return f"{name}{{{kept}}}"

    def value(name: str, value: float) -> float:
        return value - epoch if name.endswith("_timestamp_seconds") else value

    series = [{"series": selector(name, labels), "values": f"_ {value(name, v)!r}"}
              for (name, labels), v in scraped.items()]
    tests = {"rule_files": ["rules.yml"], "evaluation_interval": "1m", "tests": [{
        "interval": f"{now}s", "input_series": series,  # one sample each, at `now`
        "alert_rule_test": [{"eval_time": f"{now}s", "alertname": name, "exp_alerts": alerts}
                            for name, alerts in expected.items()]}]}
    (folder / "tests.yml").write_text(json.dumps(tests))  # JSON is YAML
    checked = subprocess.run([promtool, "test", "rules", "tests.yml"], cwd=folder, capture_output=True, text=True,
                             timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_dataset_series_outlive_runs_that_commit_nothing_or_fail_and_the_documented_alerts_fire(tmp_path, pushgateway,
                                                                                            promtool):
    job = make_job(tmp_path, f"metrics.reporting.prometheus.pushgateway.url={pushgateway}", name="LateOrders")
    group = {"job": "LateOrders", "instance": "", "dataset": ""}
    lags = []
    for status in ("SUCCEEDED", "NOTHING_NEW", "FAILED"):
        if status == "FAILED":
            (tmp_path / "data" / "more.csv").write_text("order_id,amount,ordered_at\n1,x,not a time\n")
        result = run_gpy_here("run", str(job), "--engine", "local")
        scraped = scrape(pushgateway)
        assert series(scraped, "gpy_job_last_run_status", job="LateOrders", instance="", status=status) == 1, \
            result.stderr[-2000:]
        lags.append(series(scraped, "gpy_dataset_watermark_lag_seconds", **group))  # still there
        assert series(scraped, "gpy_dataset_committed", **group) == (1 if status == "SUCCEEDED" else 0)
    assert lags[0] < lags[1] < lags[2]  # the committed event time stays 2026-01-01T19:00Z while time goes on

    ours = {key: value for key, value in scraped.items() if ("job", "LateOrders") in key[1]}
    late = {"alertname": "GpyDataLate", "job": "LateOrders"}
    promtool_test(promtool, tmp_path, ours, int(time.time()), {
        "GpyJobStale": [],  # the NOTHING_NEW run was a success, minutes ago
        "GpyJobFailed": [{"exp_labels": {"alertname": "GpyJobFailed", "job": "LateOrders", "status": "FAILED"},
                          "exp_annotations": {"summary": "gpy job LateOrders: last run FAILED"}}],
        "GpyDataLate": [{"exp_labels": late,
                         "exp_annotations": {"summary": "gpy job LateOrders: no new data of dataset '' in 3 h"}}],
    })


def test_a_stopped_run_sends_the_lag_of_each_dataset_its_state_store_knows():
    from gobblin_py.runtime.monitor.prometheus import registry_of
    from gobblin_py.runtime.monitor.report import RunInfo, RunReport
    from gobblin_py.sdk.run_states import DatasetState
    from gobblin_py.store.progress import COMPLETENESS_KEY

    committed = DatasetState()
    committed.set_prop(COMPLETENESS_KEY, "1000000")
    run = RunInfo("Orders", "job_Orders_1", "local", 1_000_000, {})
    report = RunReport(run, 4_600_000, "STOPPED", 143, "stopped by SIGTERM", "", [])
    samples = {(s.name, s.labels.get("dataset")): s.value
               for metric in registry_of(report, False, None, {"eu": committed}).collect() for s in metric.samples}
    assert samples[("gpy_dataset_watermark_lag_seconds", "eu")] == 3600
    assert samples[("gpy_dataset_committed", "eu")] == 0
