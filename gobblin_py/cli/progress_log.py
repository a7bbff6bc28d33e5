"""How ``gpy run`` shows a run going off a terminal (cron, Airflow, ``--log-format json``): log events.

The numbers the live display shows are logged as ``run_progress`` events, at most every :data:`JSON_INTERVAL_S`
seconds while the run lasts and once at its end, then one ``dataset_summary`` event per dataset. Kept apart from
the live display so that a run off a terminal never imports the terminal library.
"""

from __future__ import annotations

import threading
from typing import Any

from gobblin_py.runtime.commit.history import dataset_record
from gobblin_py.runtime.commit.job_result import JobResult
from gobblin_py.runtime.execute.run_progress import RunProgress
from gobblin_py.sdk.logs import get_logger

JSON_INTERVAL_S = 10.0

log = get_logger("gpy.progress")


class JsonProgress(RunProgress):
    """The run's progress as ``run_progress`` log events (JSON lines off a terminal)."""

    shows_tasks = False

    def __init__(self, interval: float = JSON_INTERVAL_S) -> None:
        super().__init__()
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="gpy-progress-log", daemon=True)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            snap = self.snapshot()
            if snap.planned:
                log.info("run_progress", **snap.as_json())

    def __enter__(self) -> JsonProgress:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._thread.join()
        snap = self.snapshot()
        if snap.planned:
            log.info("run_progress", **snap.as_json())


def log_dataset_summaries(result: JobResult) -> None:
    """One ``dataset_summary`` event per dataset (what the summary table shows), for logs read by machines."""
    for d in result.datasets:
        log.info("dataset_summary", job=result.job_name, job_id=result.job_id, **dataset_record(d))
