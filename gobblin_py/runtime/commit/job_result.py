"""The outcome of a run, as the summary, the run history and the exit code see it."""

from __future__ import annotations

from dataclasses import dataclass, field

from gobblin_py.runtime.commit.dataset_result import DatasetResult
from gobblin_py.sdk.states import RunningState

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_PARTIAL = 3
EXIT_DATA = 65  # sysexits' EX_DATAERR: a value of the input does not fit; retrying cannot help until it is fixed


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
    warnings: list[str] = field(default_factory=list)  # what an operator should look at though the run succeeded

    @property
    def exit_code(self) -> int:
        if self.state is RunningState.FAILED or any(d.state is RunningState.FAILED for d in self.datasets):
            # a task failed on the job's configuration or input: no rerun succeeds until a person fixes it
            if self.usage_errors():
                return EXIT_USAGE
            return EXIT_DATA if self.data_errors() else EXIT_FAILED
        if any(d.failed_tasks for d in self.datasets):
            return EXIT_PARTIAL
        return EXIT_OK

    def usage_errors(self) -> list[str]:
        """The failures of tasks of datasets that failed which were the user's configuration or input, one line
        each naming the dataset (unless it is the default one) and the task."""
        return [f"dataset {d.urn}: {line}" if d.urn else line
                for d in self.datasets if d.state is RunningState.FAILED for line in d.usage_errors]

    def data_errors(self) -> list[str]:
        """As :meth:`usage_errors`, the failures that were a value of the input not fitting its column."""
        return [f"dataset {d.urn}: {line}" if d.urn else line
                for d in self.datasets if d.state is RunningState.FAILED for line in d.data_errors]
