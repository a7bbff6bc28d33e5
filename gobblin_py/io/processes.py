"""This host's name and whether one of its processes is alive: how a lock or a run record tells a dead owner."""

from __future__ import annotations

import os
import socket


def host_name() -> str:
    """The name a lock or a run record gives this host."""
    return socket.gethostname()


def pid_alive(pid: int) -> bool:
    """Whether a process of this host has that id (a process we may not signal is alive too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
