"""What a run's reporters hear: the run started, and the run ended with this outcome.

The launcher tells one :class:`RunMonitor` of both; it passes them on to each reporter the job configures (the
metrics file, Prometheus, OpenLineage). A reporter is a :class:`RunListener`. Reporting never fails a run nor
holds it up past its reporters' timeouts: an error in a reporter is a warning naming it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

from gobblin_py.runtime.commit.dataset_result import DatasetResult
from gobblin_py.runtime.commit.history import dataset_record, outcome
from gobblin_py.runtime.commit.job_result import JobResult
from gobblin_py.sdk.logs import get_logger
from gobblin_py.store.report import iso_time

log = get_logger(__name__)

SUCCEEDED_STATUSES = ("SUCCEEDED", "NOTHING_NEW", "PARTIAL")  # the run committed what it pulled
STATUSES = ("SUCCEEDED", "NOTHING_NEW", "PARTIAL", "FAILED", "STOPPED")


@dataclass
class RunInfo:
    """A run as it starts: its job, ids, engine, start and configuration."""

    job: str
    job_id: str
    engine: str
    started_ms: int
    props: Mapping[str, str]


@dataclass
class RunReport:
    """A run as it ended: its status (``SUCCEEDED``, ``NOTHING_NEW``, ``PARTIAL``, ``FAILED``, ``STOPPED``), exit
    code, error and what each dataset did (``datasets``: the run history's records, ``results``: the same as
    the commit saw them, with their task states' numbers in ``tasks``)."""

    run: RunInfo
    ended_ms: int
    status: str
    exit_code: int
    error: str | None
    message: str
    results: list[DatasetResult] = field(default_factory=list)

    @property
    def datasets(self) -> list[dict[str, Any]]:
        return [dataset_record(d) for d in self.results]

    @property
    def seconds(self) -> float:
        return max(0, self.ended_ms - self.run.started_ms) / 1000

    @property
    def succeeded(self) -> bool:
        return self.status in SUCCEEDED_STATUSES

    @property
    def ended(self) -> str | None:
        return iso_time(self.ended_ms)

    @property
    def records_read(self) -> int:
        return sum(d.records_extracted for d in self.results)

    @property
    def records_written(self) -> int:
        return sum(d.records_written for d in self.results)

    @property
    def bytes_written(self) -> int:
        return sum(d.bytes_written for d in self.results)


class RunListener(Protocol):
    """A reporter of runs: told when a run starts and when it ends."""

    name: str

    def run_started(self, run: RunInfo) -> None: ...

    def run_finished(self, report: RunReport) -> None: ...


def report_of(run: RunInfo, result: JobResult, failure: BaseException | None) -> RunReport:
    """The ended run's report, with the status and exit code the run history records."""
    status, code, error = outcome(result, failure)
    return RunReport(run, int(time.time() * 1000), status, code, error, result.message, list(result.datasets))


ListenerFactory = Callable[[Mapping[str, str]], "RunListener | None"]


class RunMonitor:
    """Passes a run's start and end on to its reporters, each guarded: a reporter's failure is a warning."""

    def __init__(self, run: RunInfo, listeners: list[RunListener]) -> None:
        self.run = run
        self.listeners = listeners

    def started(self) -> None:
        for listener in self.listeners:
            self._call(listener, "run_started", partial(listener.run_started, self.run))

    def finished(self, result: JobResult, failure: BaseException | None) -> None:
        if not self.listeners:
            return
        report = report_of(self.run, result, failure)
        for listener in self.listeners:
            self._call(listener, "run_finished", partial(listener.run_finished, report))

    def _call(self, listener: RunListener, what: str, call: Callable[[], None]) -> None:
        try:
            call()
        except Exception as exc:  # noqa: BLE001 - reporting never fails a run
            log.warning("reporter_failed", job=self.run.job, reporter=listener.name, on=what,
                        error=f"{type(exc).__name__}: {exc}")


def within(seconds: float, what: str, call: Callable[[], Any]) -> None:
    """Run ``call`` on a thread of its own and wait at most ``seconds`` for it: TimeoutError after that (the
    thread is left to end by itself; it holds nothing the run needs), and ``call``'s own error re-raised."""
    errors: list[BaseException] = []

    def target() -> None:
        try:
            call()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            errors.append(exc)

    thread = threading.Thread(target=target, name=f"gpy-{what}", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        raise TimeoutError(f"{what}: no answer within {seconds:g} s")
    if errors:
        raise errors[0]
