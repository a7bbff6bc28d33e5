"""Tasks of ``--engine local`` in worker processes (``gpy.taskexecutor.processes``), beside the thread pool.

Threads of one interpreter share its lock: tasks that spend their time in Python (many small files, per-record
converters) run one at a time however many threads there are. Worker processes run them truly at once. Work units
go to the workers and TaskStates come back in Gobblin's Writable encoding, as on Spark, so a worker needs only
the job's properties and gobblin_py.

- Workers are started fresh (``spawn``: safe beside the run's threads), log as the run does and report progress
  over the same channel Spark executors use.
- A worker dies with the run: on Linux the kernel kills it when the run's process dies (SIGKILL included); a run
  stopped by SIGTERM or SIGINT kills its workers (their attempts' files are never published) and exits as
  interrupted. A worker that dies fails the run, naming its exit code; nothing is committed.
- Work units go out in small chunks (a few per worker at a time), so a fast worker is never idle behind a slow one.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import signal
import sys
from collections.abc import Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING

from gobblin_py.errors import GobblinPyError
from gobblin_py.runtime import interrupts, task_progress
from gobblin_py.state import TaskState, WorkUnit
from gobblin_py.state.writable import TASK_STATE_CLASS, WORK_UNIT_CLASS, deserialize, serialize

if TYPE_CHECKING:
    from gobblin_py.runtime.progress_channel import Address

CHUNKS_PER_WORKER = 8  # chunks per worker over the run: balance against one round trip per chunk
MAX_CHUNK = 64  # work units in one chunk at most
WAIT_S = 0.2  # how often the run looks for a signal while its workers run
PR_SET_PDEATHSIG = 1

Chunk = list[tuple[str, bytes]]  # (task id, work unit in Writable bytes)


def run_in_processes(job_props: Mapping[str, str], job_id: str, groups: list[list[tuple[str, WorkUnit]]],
                     processes: int, log_settings: tuple[str, str]) -> list[TaskState]:
    """Run each group's tasks (task id, work unit), one after another, on ``processes`` worker processes; their
    TaskStates in the same order. A group is never split between workers."""
    encoded = [[(task_id, serialize(unit)) for task_id, unit in group] for group in groups]
    size = max(1, min(MAX_CHUNK, len(encoded) // (processes * CHUNKS_PER_WORKER)))
    chunks = [[task for group in encoded[i:i + size] for task in group] for i in range(0, len(encoded), size)]
    sink = task_progress.driver_sink()
    listening: AbstractContextManager[Address | None] = nullcontext(None)
    if sink is not None:
        from gobblin_py.runtime.progress_channel import ProgressServer

        listening = ProgressServer(sink, "127.0.0.1")
    with listening as channel:
        pool = ProcessPoolExecutor(max_workers=min(processes, len(chunks)) or 1,
                                   mp_context=multiprocessing.get_context("spawn"), initializer=_start_worker,
                                   initargs=(dict(job_props), log_settings, channel))
        finished = False
        try:
            futures = [pool.submit(_run_chunk, dict(job_props), job_id, chunk) for chunk in chunks]
            states = _collect(futures, sink)
            finished = True
            return states
        except BrokenProcessPool as exc:
            raise GobblinPyError(f"a task worker process died ({_exit_codes(pool)}); nothing of this run was "
                                 "committed") from exc
        finally:
            if not finished:
                _kill_workers(pool)
            pool.shutdown(wait=True, cancel_futures=True)


def _collect(futures: list[Future], sink: task_progress.ProgressSink | None) -> list[TaskState]:
    """The chunks' TaskStates in order, reporting each chunk's as it comes; a signal stops the wait."""
    pending = set(futures)
    decoded: dict[Future, list[TaskState]] = {}
    while pending:
        done, pending = wait(pending, timeout=WAIT_S, return_when=FIRST_COMPLETED)
        if interrupts.cancelled():
            raise interrupts.JobInterrupted(interrupts.interrupted_by())
        for future in done:
            decoded[future] = _decode(future.result())
            if sink is not None:
                for state in decoded[future]:
                    task_progress.report_finished(state, sink)
    return [state for future in futures for state in decoded[future]]


def _decode(chunk: Chunk) -> list[TaskState]:
    states = []
    for task_id, data in chunk:
        state = deserialize(TASK_STATE_CLASS, data)
        assert isinstance(state, TaskState) and state.task_id == task_id
        states.append(state)
    return states


def _kill_workers(pool: ProcessPoolExecutor) -> None:
    # a stopped run does not wait for its workers' tasks: their files are in attempt folders nothing publishes
    for process in list(getattr(pool, "_processes", {}).values()):
        if process.is_alive():
            process.kill()


def _exit_codes(pool: ProcessPoolExecutor) -> str:
    codes = sorted({p.exitcode for p in getattr(pool, "_processes", {}).values() if p.exitcode not in (None, 0)})
    return "exit code " + ", ".join(str(c) for c in codes) if codes else "it was killed"


def _start_worker(job_props: dict[str, str], log_settings: tuple[str, str], channel: Address | None) -> None:
    """A worker's set-up: die with the run, leave signals to it, log as it does, open its filesystems."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C reaches the whole group: the run decides
    from gobblin_py import fs_settings
    from gobblin_py.logs import configure_logging

    configure_logging(*log_settings)
    fs_settings.apply(job_props)
    if channel is not None:
        from gobblin_py.runtime.progress_channel import ChannelSink

        task_progress.connect(ChannelSink(channel))


def _run_chunk(job_props: dict[str, str], job_id: str, chunk: Chunk) -> Chunk:
    from gobblin_py.runtime.task import run_task

    out = []
    for task_id, data in chunk:
        unit = deserialize(WORK_UNIT_CLASS, data)
        out.append((task_id, serialize(run_task(job_props, unit, job_id, task_id))))  # type: ignore[arg-type]
    return out
