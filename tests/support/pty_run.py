"""Run the real CLI under a pseudo-terminal, as a person at a terminal would, and read what the screen got."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from dataclasses import dataclass

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@dataclass
class PtyResult:
    returncode: int
    raw: str  # with the terminal's control sequences

    @property
    def text(self) -> str:
        """What was written, control sequences and carriage returns removed."""
        return ANSI.sub("", self.raw).replace("\r", "")


def run_gpy_in_pty(*args: str, cwd: str | None = None, env: dict | None = None, width: int = 200,
                   timeout: float = 600) -> PtyResult:
    """``gpy ARGS`` with stdin, stdout and stderr on one pseudo-terminal ``width`` columns wide."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, width, 0, 0))
    full_env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": str(width), **(env or {})}
    full_env.pop("NO_COLOR", None)
    proc = subprocess.Popen([sys.executable, "-m", "gobblin_py.cli", *args], stdin=slave, stdout=slave,
                            stderr=slave, cwd=cwd, env=full_env, close_fds=True)
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # the terminal's other end closed: the process is gone
                    break
                if not chunk:
                    break
                chunks.append(chunk)
            elif proc.poll() is not None:
                break
        else:
            proc.kill()
    finally:
        os.close(master)
    return PtyResult(proc.wait(timeout=60), b"".join(chunks).decode("utf-8", errors="replace"))
