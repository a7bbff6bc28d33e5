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

import pytest

from tests.sources.rest_jobs import write_job
from tests.sources.web_api import TOKEN


def _start(job, root) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "gobblin_py.cli", "run", str(job), "--engine", "local",
                             "--sysconfig", str(root / "gobblin.properties")],
                            env={**os.environ, "ITEMS_TOKEN": TOKEN, "GOBBLIN_WORK_DIR": str(root / "work")},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for_requests(web_api, path: str, count: int, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while len(web_api.requests(path)) < count:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the requests never came"
        time.sleep(0.02)
    time.sleep(0.5)  # into the wait that follows


def _stopped(proc: subprocess.Popen, signum: int, root) -> tuple[float, str]:
    began = time.monotonic()
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signum, err
    assert "the job lock is released" in err and not (root / "state-store" / "Items.lock").exists()
    return time.monotonic() - began, err


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_during_a_request_retry_wait_ends_it_at_once(web_api, tmp_path, signum):
    web_api.route("/down", b"{}", status=503, headers={"Retry-After": "30"})
    job = write_job(tmp_path, web_api.url, **{"rest.url": web_api.url + "/down", "rest.retry.max": "5",
                                              "rest.retry.wait.max.ms": "60000"})
    proc = _start(job, tmp_path)
    _wait_for_requests(web_api, "/down", 1, proc)
    seconds, _ = _stopped(proc, signum, tmp_path)
    assert seconds < 10  # the retries alone would wait 150 s
    assert len(web_api.requests("/down")) == 1  # no request after the signal


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_during_the_back_off_between_task_attempts_makes_no_further_attempt(web_api, tmp_path, signum):
    web_api.route("/down", b"{}", status=503)
    job = write_job(tmp_path, web_api.url, **{"rest.url": web_api.url + "/down", "rest.retry.max": "1",
                                              "rest.retry.backoff.ms": "10", "task.maxretries": "3",
                                              "task.retry.intervalinsec": "60"})
    proc = _start(job, tmp_path)
    _wait_for_requests(web_api, "/down", 4, proc)  # two attempts of two requests; the next attempt is 60 s away
    seconds, err = _stopped(proc, signum, tmp_path)
    assert seconds < 10
    assert len(web_api.requests("/down")) == 4  # no request after the signal
    failed = [json.loads(line) for line in err.splitlines() if '"task_failed"' in line]
    assert [f["attempt"] for f in failed] == [2]  # and no third attempt was started
    assert "no further attempt" in failed[0]["note"]
