"""One bash session that runs a page's examples block after block (tests/docs/runnable.py)."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

DONE = "__runnable_block_done__"


@dataclass
class Ran:
    """What a block or command printed, its exit code and the shell's working folder after it."""

    stdout: str
    stderr: str
    exit_code: int
    cwd: Path


class Shell:
    """bash reading a sequence from the test: each block is sourced (so cd, export and background jobs carry on),
    stdin /dev/null, in a process group of its own that ``close`` ends with whatever it left running."""

    def __init__(self, folder: Path, cwd: Path, env: dict[str, str], timeout: float = 600) -> None:
        self.folder = folder
        self.folder.mkdir(parents=True, exist_ok=True)
        self.stderr = self.folder / "shell.stderr"
        self.process = subprocess.Popen(["bash", "--noprofile", "--norc"], cwd=cwd, env=env, text=True,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=self.stderr.open("w"), start_new_session=True)
        self.count = 0
        # a hung command must not hang the test run
        self.watchdog = threading.Timer(timeout, self.close)
        self.watchdog.start()
        self.send("set -euo pipefail")

    def send(self, line: str) -> None:
        """Write one line to the shell; nothing when it has ended (a command failed under errexit before this line
        reached it: ``run`` reads no done-line and says the shell ended)."""
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(line + "\n")
            self.process.stdin.flush()
        except BrokenPipeError:
            pass

    def run(self, text: str, errexit: bool = True, after: str = "") -> Ran | None:
        """Source ``text``; None when the shell ended (a command failed under errexit)."""
        self.count += 1
        script, out, err = (self.folder / f"{self.count}.{suffix}" for suffix in ("sh", "stdout", "stderr"))
        script.write_text(text)
        redirect = f"< /dev/null > {shlex.quote(str(out))} 2> {shlex.quote(str(err))}"
        if errexit:
            self.send(f". {shlex.quote(str(script))} {redirect}; __rc=0")
        else:
            self.send(f"set +e; . {shlex.quote(str(script))} {redirect}; __rc=$?; set -e")
        if after:
            self.send(after)
        self.send(f'echo "{DONE} $__rc $PWD"')
        assert self.process.stdout is not None
        done = self.process.stdout.readline()
        stdout = out.read_text() if out.exists() else ""
        stderr = err.read_text() if err.exists() else ""
        if not done.startswith(DONE):
            return None
        _, code, cwd = done.rstrip("\n").split(" ", 2)
        return Ran(stdout, stderr, int(code), Path(cwd))

    def output_of_last(self) -> tuple[str, str]:
        """What the last block printed on stdout and stderr (the shell's own stderr added)."""
        out, err = (self.folder / f"{self.count}.{suffix}" for suffix in ("stdout", "stderr"))
        return (out.read_text() if out.exists() else "",
                (err.read_text() if err.exists() else "") + self.stderr.read_text())

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                assert self.process.stdin is not None
                self.process.stdin.close()
                self.process.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                pass
        try:  # what the blocks left running in the background (a server started with &)
            os.killpg(self.process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.watchdog.cancel()
