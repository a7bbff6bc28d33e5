"""How Gobblin's Kafka, Graphite and InfluxDB reporters run: on the driver, on a thread of their own.

Each reporter (a :class:`~.report.RunListener`) puts what it has to send on a bounded queue that one thread
empties: the job's start event at once, the job's meters every ``metrics.report.interval`` ms, and the run's
last metrics and end events when it ends — succeeded, failed or stopped. Nothing waits for a send but the end
of the run, and that at most the reporter's timeout; a report that finds the queue full is dropped and counted. A
reporter that cannot send is a warning naming it (at its first failure, and when its last report is not sent in
time), never a change of the run's exit code.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import MutableMapping
from typing import Any, Protocol

from gobblin_py.runtime.monitor.gobblin_metrics import (
    MetricSet,
    TrackingEvent,
    final_reports,
    progress_report,
    start_event,
)
from gobblin_py.runtime.monitor.report import RunInfo, RunReport
from gobblin_py.sdk import logs
from gobblin_py.sdk.logs import get_logger

log = get_logger(__name__)

QUEUE_CAPACITY = 100  # Gobblin's EventReporter.DEFAULT_QUEUE_CAPACITY
Batch = tuple[list[MetricSet], list[TrackingEvent]]


class Sink(Protocol):
    """Where a reporter sends: Kafka topics, carbon, InfluxDB. ``send`` gives up after ``timeout`` seconds."""

    name: str
    timeout: float

    def send(self, metrics: list[MetricSet], events: list[TrackingEvent]) -> None: ...

    def close(self) -> None: ...


class GobblinReporter:
    """Sends a run's metrics and events to one sink while the run goes and when it ends."""

    def __init__(self, sink: Sink, interval_ms: int) -> None:
        self.sink = sink
        self.name = sink.name
        self.interval = interval_ms / 1000
        self._queue: queue.Queue[Batch | None] = queue.Queue(QUEUE_CAPACITY)
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._read = self._written = 0
        self._dropped = 0
        self._failed = False
        self._run: RunInfo | None = None
        self._sender: threading.Thread | None = None
        self._ticker: threading.Thread | None = None

    def run_started(self, run: RunInfo) -> None:
        self._run = run
        self._offer(([], [start_event(run, int(time.time() * 1000))]))
        logs.add_listener(self._observe)
        self._sender = threading.Thread(target=self._send_all, name=f"gpy-{self.name}-reporter", daemon=True)
        self._ticker = threading.Thread(target=self._tick, name=f"gpy-{self.name}-interval", daemon=True)
        self._sender.start()
        self._ticker.start()

    def _observe(self, level: str, event: MutableMapping[str, Any]) -> bool:
        """Counts the records of the tasks the driver sees finish (``task_finished``)."""
        if event.get("event") == "task_finished":
            with self._lock:
                self._read += _number(event.get("extracted"))
                self._written += _number(event.get("written"))
        return False

    def _tick(self) -> None:
        while not self._stop.wait(self.interval):
            run = self._run
            if run is None:
                return
            with self._lock:
                read, written = self._read, self._written
            self._offer(([progress_report(run, int(time.time() * 1000), read, written)], []))

    def _offer(self, batch: Batch | None) -> None:
        try:
            self._queue.put_nowait(batch)
        except queue.Full:
            with self._lock:
                self._dropped += 1

    def _send_all(self) -> None:
        while True:
            batch = self._queue.get()
            if batch is None:
                return
            try:
                self.sink.send(*batch)
            except Exception as exc:  # noqa: BLE001 - reporting never fails a run: said once, as a warning
                if not self._failed:
                    self._failed = True
                    run = self._run
                    log.warning("metrics_not_sent", job=run.job if run else None, reporter=self.name,
                                error=f"{type(exc).__name__}: {exc}")

    def run_finished(self, report: RunReport) -> None:
        self._stop.set()
        logs.remove_listener(self._observe)
        if self._ticker is not None:
            self._ticker.join(timeout=1)
        self._offer(final_reports(report))
        self._offer(None)
        sender = self._sender
        if sender is not None:
            sender.join(self.sink.timeout)
            if sender.is_alive():  # a send still hangs: left to end by itself (a daemon thread holding nothing)
                log.warning("metrics_not_sent", job=report.run.job, reporter=self.name,
                            error=f"the last report was not sent within {self.sink.timeout:g} s")
            else:
                self.sink.close()
        if self._dropped:
            log.warning("metrics_not_sent", job=report.run.job, reporter=self.name,
                        error=f"{self._dropped} reports dropped: the reporter's queue was full")


def _number(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0
