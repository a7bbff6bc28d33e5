"""A task worker process of ``gpy.taskexecutor.processes``: it runs the chunks of work units the run sends it.

The run starts each worker as a plain child (``python -c BOOT <run pid> <fd> <sys.path>``, see
:data:`BOOT`) with one end of a socket pair. Before it imports anything of gobblin_py the worker asks the kernel
to kill it when the run dies and checks that the run is still its parent, so no worker outlives a run killed by
SIGKILL, even one killed while the worker was starting. Over the socket, length-prefixed pickles: first the
set-up ``(job properties, log settings, progress channel)``, then one ``(job id, chunk)`` per chunk, each
answered by ``("ok", chunk of TaskStates)`` or ``("error", exit code, message, traceback)``. The run closes its
end when it has nothing more to send; the worker then exits.
"""

from __future__ import annotations

import pickle
import signal
import socket
import struct
import traceback
from typing import Any

from gobblin_py.sdk.errors import GobblinPyError

# The worker's first statements, before anything is imported: the parent-death signal (Linux), then whether the
# run died before it was set (the worker was orphaned already: the signal will never come), then the run's
# import path (as multiprocessing's spawn passes it), then the worker itself.
BOOT = """\
import os, sys
if sys.platform.startswith("linux"):
    import ctypes, signal
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)
if os.getppid() != int(sys.argv[1]):
    os._exit(70)
import json
sys.path[:] = json.loads(sys.argv[3])
from gobblin_py.runtime.execute.task_worker import serve
serve(int(sys.argv[2]))
"""

_HEADER = struct.Struct(">Q")

Chunk = list[tuple[str, bytes]]  # (task id, work unit or TaskState in Writable bytes)


def frame(message: Any) -> bytes:
    """One message as it goes over the socket (a length-prefixed pickle)."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(data)) + data


def send(sock: socket.socket, message: Any) -> None:
    """Send one message."""
    sock.sendall(frame(message))


def receive(sock: socket.socket) -> Any | None:
    """The next message; None when the other side closed its end between two messages."""
    header = _read(sock, _HEADER.size, at_start=True)
    if header is None:
        return None
    return pickle.loads(_read(sock, _HEADER.unpack(header)[0]))  # type: ignore[arg-type]


def _read(sock: socket.socket, size: int, at_start: bool = False) -> bytes | None:
    buffer = bytearray(size)
    view, got = memoryview(buffer), 0
    while got < size:
        n = sock.recv_into(view[got:])
        if not n:
            if at_start and got == 0:
                return None
            raise EOFError(f"the other side closed its end within a message ({got} of {size} bytes)")
        got += n
    return bytes(buffer)


def serve(fd: int) -> None:
    """The worker: set up as the run says, then run each chunk it sends until it closes its end."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C reaches the whole group: the run decides
    sock = socket.socket(fileno=fd)
    try:
        setup = receive(sock)
        if setup is None:
            return
        job_props, log_settings, channel = setup
        _set_up(job_props, log_settings, channel)
        while (message := receive(sock)) is not None:
            job_id, chunk = message
            send(sock, ("ok", _run_chunk(job_props, job_id, chunk)))
    except Exception as exc:  # noqa: BLE001 - reported to the run, which fails with it
        code = exc.exit_code if isinstance(exc, GobblinPyError) else 1
        try:
            send(sock, ("error", code, f"{type(exc).__name__}: {exc}", "".join(traceback.format_exception(exc))))
        except OSError:
            pass  # the run is gone
    finally:
        sock.close()


def _set_up(job_props: dict[str, str], log_settings: tuple[str, str], channel: tuple[str, int, str] | None) -> None:
    """Log as the run does, open its filesystems, report progress to it."""
    from gobblin_py.io import fs_settings
    from gobblin_py.runtime.execute import task_progress
    from gobblin_py.sdk.logs import configure_logging

    configure_logging(*log_settings)
    fs_settings.apply(job_props)
    if channel is not None:
        from gobblin_py.runtime.execute.progress_channel import ChannelSink

        task_progress.connect(ChannelSink(channel))


def _run_chunk(job_props: dict[str, str], job_id: str, chunk: Chunk) -> Chunk:
    from gobblin_py.runtime.execute.task import run_task
    from gobblin_py.store.writable import WORK_UNIT_CLASS, deserialize, serialize

    out = []
    for task_id, data in chunk:
        unit = deserialize(WORK_UNIT_CLASS, data)
        out.append((task_id, serialize(run_task(job_props, unit, job_id, task_id))))  # type: ignore[arg-type]
    return out
