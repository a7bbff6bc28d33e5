"""A stop ends every wait of a REST run at once: SIGTERM or SIGINT during a request's retry wait, or during the
back-off between task attempts, makes no further request nor attempt; the run exits 143 / 130 with its lock
released. Real ``gpy run`` processes and real signals."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable

import pytest

from tests.sources.rest_jobs import write_job
from tests.sources.web_api import TOKEN
from tests.support.waiting import StderrWatch


def _start(job, root) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "gobblin_py.cli", "run", str(job), "--engine", "local",
                             "--sysconfig", str(root / "gobblin.properties")],
                            env={**os.environ, "ITEMS_TOKEN": TOKEN, "GOBBLIN_WORK_DIR": str(root / "work")},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _event(name: str, **fields: object) -> Callable[[str], bool]:
    """Whether a log line is the event ``name`` with ``fields``."""
    def found(line: str) -> bool:
        if f'"{name}"' not in line:
            return False
        event = json.loads(line)
        return event.get("event") == name and all(event.get(k) == v for k, v in fields.items())
    return found


def _stopped(proc: subprocess.Popen, watch: StderrWatch, signum: int, root) -> tuple[float, str]:
    began = time.monotonic()
    proc.send_signal(signum)
    err = watch.finish(60)
    assert proc.returncode == 128 + signum, err
    assert "the job lock is released" in err and not (root / "state-store" / "Items.lock").exists()
    return time.monotonic() - began, err


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_during_a_request_retry_wait_ends_it_at_once(web_api, tmp_path, signum):
    web_api.route("/down", b"{}", status=503, headers={"Retry-After": "30"})
    job = write_job(tmp_path, web_api.url, **{"rest.url": web_api.url + "/down", "rest.retry.max": "5",
                                              "rest.retry.wait.max.ms": "60000"})
    proc = _start(job, tmp_path)
    watch = StderrWatch(proc)
    watch.wait_for(_event("http_retry", attempt=1), "the first request's retry wait")  # logged as it begins
    seconds, _ = _stopped(proc, watch, signum, tmp_path)
    assert seconds < 10  # the retries alone would wait 150 s
    assert len(web_api.requests("/down")) == 1  # no request after the signal


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_during_the_back_off_between_task_attempts_makes_no_further_attempt(web_api, tmp_path, signum):
    web_api.route("/down", b"{}", status=503)
    job = write_job(tmp_path, web_api.url, **{"rest.url": web_api.url + "/down", "rest.retry.max": "1",
                                              "rest.retry.backoff.ms": "10", "task.maxretries": "3",
                                              "task.retry.intervalinsec": "60"})
    proc = _start(job, tmp_path)
    watch = StderrWatch(proc)
    # two attempts of two requests; the third attempt is 60 s away (its wait logged as it begins)
    watch.wait_for(_event("task_retry", attempt=3), "the back-off before the third attempt")
    seconds, err = _stopped(proc, watch, signum, tmp_path)
    assert seconds < 10
    assert len(web_api.requests("/down")) == 4  # no request after the signal
    failed = [json.loads(line) for line in err.splitlines() if '"task_failed"' in line]
    assert [f["attempt"] for f in failed] == [2]  # and no third attempt was started
    assert "no further attempt" in failed[0]["note"]
