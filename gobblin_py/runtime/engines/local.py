"""``--engine local``: tasks in a thread pool (Gobblin's standalone mode) or in worker processes."""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor

from gobblin_py.runtime.engines.base import Engine, EngineSettings, TaskGroup, _announce, _executor_log_settings
from gobblin_py.runtime.execute import signals
from gobblin_py.runtime.execute.task import run_task
from gobblin_py.sdk.states import TaskState, WorkUnit


class LocalEngine(Engine):
    """Runs tasks in a thread pool of ``taskexecutor.threadpool.size`` threads (Gobblin's standalone mode), or in
    ``gpy.taskexecutor.processes`` worker processes."""

    name = "local"

    @staticmethod
    def engine_for(job_props: Mapping[str, str]) -> type[Engine]:
        """The engine a job's tasks run on: worker processes when the job asks for them, else threads."""
        return ProcessEngine if EngineSettings.load(job_props).processes else ThreadEngine

    def run(self, job_props: Mapping[str, str], job_id: str, groups: list[TaskGroup]) -> list[TaskState]:
        return self.engine_for(job_props)(self.master).run(job_props, job_id, groups)


class ThreadEngine(Engine):
    """Runs tasks in a thread pool of ``taskexecutor.threadpool.size`` threads."""

    name = "threads"

    def run(self, job_props: Mapping[str, str], job_id: str, groups: list[TaskGroup]) -> list[TaskState]:
        settings = EngineSettings.load(job_props)
        threads = settings.threads
        _announce(groups)
        pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="gpy-task")
        try:
            # submitting starts the pool's threads: a signal handler raising inside Thread.start() would leave a
            # half-started thread (and a traceback); a signal here stops the run once all are submitted
            with signals.shielded():
                futures = [pool.submit(_run_group, dict(job_props), job_id, group.tasks) for group in groups]
            signals.raise_if_interrupted()
            return [state for future in futures for state in future.result()]
        finally:
            # interrupted: queued tasks never start, running ones stop at their next batch (check_cancelled)
            pool.shutdown(wait=True, cancel_futures=True)


class ProcessEngine(Engine):
    """Runs tasks in ``gpy.taskexecutor.processes`` worker processes."""

    name = "processes"

    def run(self, job_props: Mapping[str, str], job_id: str, groups: list[TaskGroup]) -> list[TaskState]:
        settings = EngineSettings.load(job_props)
        _announce(groups)
        if not groups:
            return []
        from gobblin_py.runtime.execute.task_processes import run_in_processes

        return run_in_processes(job_props, job_id, [g.tasks for g in groups], settings.processes,
                                _executor_log_settings())


def _run_group(job_props: dict[str, str], job_id: str, tasks: list[tuple[str, WorkUnit]]) -> list[TaskState]:
    return [run_task(job_props, unit, job_id, task_id) for task_id, unit in tasks]
