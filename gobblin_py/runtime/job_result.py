"""The outcome of a run, as the summary, the run history and the exit code see it."""

from __future__ import annotations

from dataclasses import dataclass, field

from gobblin_py.runtime.commit import DatasetResult
from gobblin_py.state import RunningState

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_PARTIAL = 3


@dataclass
class JobResult:
    """The outcome of a run: per-dataset results, the job state and the process exit code."""

    job_name: str
    job_id: str
    state: RunningState
    datasets: list[DatasetResult] = field(default_factory=list)
    seconds: float = 0.0
    engine: str = ""
    message: str = ""

    @property
    def exit_code(self) -> int:
        if self.state is RunningState.FAILED or any(d.state is RunningState.FAILED for d in self.datasets):
            return EXIT_FAILED
        if any(d.failed_tasks for d in self.datasets):
            return EXIT_PARTIAL
        return EXIT_OK
