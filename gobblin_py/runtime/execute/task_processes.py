"""Tasks of ``--engine local`` in worker processes (``gpy.taskexecutor.processes``), beside the thread pool.

Threads of one interpreter share its lock: tasks that spend their time in Python (many small files, per-record
converters) run one at a time however many threads there are. Worker processes run them truly at once. Work units
go to the workers and TaskStates come back in Gobblin's Writable encoding, as on Spark, so a worker needs only
the job's properties and gobblin_py.

- Workers are fresh interpreters (plain child processes, started from this thread: safe beside the run's
  threads; no helper process of multiprocessing), log as the run does and report progress over the same channel
  Spark executors use. See :mod:`gobblin_py.runtime.execute.task_worker` for their side.
- A worker dies with the run: on Linux the kernel kills it when the run's process dies (SIGKILL included, even
  while the worker starts), so nothing of the run keeps its output open after it; a run stopped by SIGTERM or
  SIGINT kills its workers (their attempts' files are never published) and exits as interrupted. A worker that
  dies fails the run, naming its exit code; nothing is committed.
- Work units go out in small chunks, so a fast worker is never idle behind a slow one. While more chunks are
  left than there are workers, each worker holds two: when it finishes one its next is already there, so it never
  waits while the run reads back, decodes and reports what it sent; the last chunks go one at a time to whichever
  worker is free. The run never blocks sending to a worker (what does not fit in the socket is sent as the worker
  reads), so neither side can wait on the other with large work units or task states.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import subprocess
import sys
from collections import deque
from collections.abc import Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gobblin_py.runtime.execute import signals, task_progress
from gobblin_py.runtime.execute.task_worker import BOOT, Chunk, frame, receive, send
from gobblin_py.sdk import interrupts
from gobblin_py.sdk.errors import GobblinPyError
from gobblin_py.sdk.logs import get_logger
from gobblin_py.sdk.states import TaskState, WorkUnit
from gobblin_py.store.writable import TASK_STATE_CLASS, deserialize, serialize

if TYPE_CHECKING:
    from gobblin_py.runtime.execute.progress_channel import Address

log = get_logger(__name__)

CHUNKS_PER_WORKER = 8  # chunks per worker over the run: balance against one round trip per chunk
MAX_CHUNK = 64  # work units in one chunk at most
IN_FLIGHT = 2  # chunks a worker holds at once while many are left: the one it runs and the next
WAIT_S = 0.2  # how often the run looks for a signal while its workers run
EXIT_WAIT_S = 5.0  # how long a worker told to stop may take to exit before it is killed


class TaskWorkerError(GobblinPyError):
    """A worker process failed outside any task (its set-up, say); the exit code is the failure's own."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


@dataclass
class _Worker:
    process: subprocess.Popen
    sock: socket.socket
    chunks: deque[int] = field(default_factory=deque)  # indices of the chunks it holds, oldest (running) first
    outbox: bytearray = field(default_factory=bytearray)  # what is still to be sent to it
    last: bool = False  # it gets no more chunks: once its outbox is sent, its end is told so
    told: bool = False  # it was told (its socket is shut for writing)
    events: int = 0  # what the selector watches its socket for


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
        from gobblin_py.runtime.execute.progress_channel import ProgressServer

        listening = ProgressServer(sink, "127.0.0.1")
    with listening as channel:
        workers: list[_Worker] = []
        finished = False
        try:
            setup = (dict(job_props), log_settings, channel)
            with signals.shielded():  # a signal now is seen once every worker started is known, to be stopped
                for _ in range(min(processes, len(chunks)) or 1):
                    _start(setup, workers)
            states = _dispatch(workers, job_id, chunks, sink)
            finished = True
            return states
        finally:
            _stop(workers, kill=not finished)


def _start(setup: tuple[dict[str, str], tuple[str, str], Address | None], workers: list[_Worker]) -> None:
    """A new worker in ``workers``, sent its set-up. The kernel's parent-death signal is tied to the thread that
    starts a process: workers are started from the thread that waits for them."""
    ours, theirs = socket.socketpair()
    try:
        command = [sys.executable, *subprocess._args_from_interpreter_flags(), "-c", BOOT,  # type: ignore[attr-defined]
                   str(os.getpid()), str(theirs.fileno()), json.dumps(sys.path)]
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, pass_fds=(theirs.fileno(),))
    except BaseException:
        ours.close()
        raise
    finally:
        theirs.close()  # the worker's end is the worker's alone: its death ends the socket
    worker = _Worker(process, ours)
    workers.append(worker)
    try:
        send(ours, setup)
    except OSError:
        pass  # it died already: its end of the socket says so (_reply)


def _dispatch(workers: list[_Worker], job_id: str, chunks: list[Chunk],
              sink: task_progress.ProgressSink | None) -> list[TaskState]:
    """Keep each worker busy with the next chunks; the chunks' TaskStates in order, reporting each chunk's as it
    comes; a signal stops the wait."""
    queue = deque(range(len(chunks)))
    decoded: dict[int, list[TaskState]] = {}
    with selectors.DefaultSelector() as selector:
        for most in (1, IN_FLIGHT):  # one each first: a run of few chunks has them side by side
            for worker in workers:
                _give(worker, queue, job_id, chunks, len(workers), most)
        for worker in workers:
            _flush(worker, selector)
        while len(decoded) < len(chunks):
            ready = selector.select(WAIT_S)
            if interrupts.cancelled():
                raise signals.JobInterrupted(signals.interrupted_by())
            answered: list[tuple[int, Chunk]] = []
            for key, events in ready:
                worker = key.data
                if events & selectors.EVENT_READ:
                    reply = _reply(worker)
                    if reply[0] == "error":
                        _, code, message, trace = reply
                        log.debug("task_worker_failed", error=trace)
                        raise TaskWorkerError(f"a task worker process failed: {message}; nothing of this run was "
                                              "committed", code)
                    answered.append((worker.chunks.popleft(), reply[1]))
                    _give(worker, queue, job_id, chunks, len(workers))
                _flush(worker, selector)
            for index, states in answered:  # every worker that answered has its next chunk: now take theirs in
                decoded[index] = _decode(states)
                if sink is not None:
                    for state in decoded[index]:
                        task_progress.report_finished(state, sink)
    return [state for index in range(len(chunks)) for state in decoded[index]]


def _give(worker: _Worker, queue: deque[int], job_id: str, chunks: list[Chunk], workers: int,
          most: int = IN_FLIGHT) -> None:
    """Queue chunks for the worker until it holds ``most``, or one once no more are left than ``workers``; mark
    when there are none left at all."""
    while queue and len(worker.chunks) < (most if len(queue) > workers else 1):
        index = queue.popleft()
        worker.chunks.append(index)
        worker.outbox += frame((job_id, chunks[index]))
    if not queue:
        worker.last = True


def _flush(worker: _Worker, selector: selectors.BaseSelector) -> None:
    """Send the worker what its socket takes now, without waiting; once all is sent and no chunk is left for it,
    close its end for writing (it exits when done); watch for its replies while it holds chunks, and for room in
    its socket while something is left to send."""
    try:
        if worker.outbox:
            try:
                del worker.outbox[:worker.sock.send(worker.outbox, socket.MSG_DONTWAIT)]
            except BlockingIOError:
                pass
        if worker.last and not worker.outbox and not worker.told:
            worker.told = True
            worker.sock.shutdown(socket.SHUT_WR)
    except OSError:
        worker.outbox.clear()  # it died: its end of the socket says so (_reply)
    events = (selectors.EVENT_READ if worker.chunks else 0) | (selectors.EVENT_WRITE if worker.outbox else 0)
    if events != worker.events:
        if not worker.events:
            selector.register(worker.sock, events, worker)
        elif not events:
            selector.unregister(worker.sock)
        else:
            selector.modify(worker.sock, events, worker)
        worker.events = events


def _reply(worker: _Worker) -> tuple:
    try:
        reply = receive(worker.sock)
    except (OSError, EOFError):
        reply = None
    if reply is None:
        raise GobblinPyError(f"a task worker process died ({_exit_code(worker.process)}); nothing of this run was "
                             "committed")
    return reply


def _exit_code(process: subprocess.Popen) -> str:
    try:
        code = process.wait(timeout=EXIT_WAIT_S)
    except subprocess.TimeoutExpired:
        return "it stopped answering"
    if code < 0:
        return f"killed by {signal.Signals(-code).name}"
    return f"exit code {code}"


def _decode(chunk: Chunk) -> list[TaskState]:
    states = []
    for task_id, data in chunk:
        state = deserialize(TASK_STATE_CLASS, data)
        assert isinstance(state, TaskState) and state.task_id == task_id
        states.append(state)
    return states


def _stop(workers: list[_Worker], kill: bool) -> None:
    """End every worker: at once when the run failed or was stopped (a stopped run does not wait for its
    workers' tasks: their files are in attempt folders nothing publishes), else once they have exited."""
    with signals.shielded():
        for worker in workers:
            worker.sock.close()  # a worker waiting for work exits
            if kill and worker.process.poll() is None:
                worker.process.kill()
        for worker in workers:
            try:
                worker.process.wait(timeout=EXIT_WAIT_S)
            except subprocess.TimeoutExpired:
                worker.process.kill()
                worker.process.wait()
