"""Headless Chromium (Debian's package) driven over the DevTools protocol, for looking at the docs site as a reader
would: a page loaded, a link clicked, what the page shows once its scripts have run.

The protocol goes over the pipes of ``--remote-debugging-pipe`` (commands on fd 3, answers on fd 4, each JSON
message ended by a NUL byte), so it needs neither a WebSocket library nor a port.
"""

from __future__ import annotations

import fcntl
import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from typing import Any

# As root in a container without a desktop: no sandbox, no GPU, and none of Chromium's own calls home (this
# machine's network is closed; they would be refused at every start).
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-debugging-pipe"]


class Chromium:
    """One headless Chromium with one page; :meth:`evaluate` runs JavaScript in that page."""

    def __init__(self, binary: str) -> None:
        self.profile = tempfile.mkdtemp(prefix="gpy-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # Chromium's ends become its fds 3 and 4: moved to 10 and above first, so that neither redirection can
        # overwrite the other's source
        reads, writes = (fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (to_browser_r, from_browser_w))
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.process = subprocess.Popen(
            ["bash", "-c", f'exec "$@" 3<&{reads} 4>&{writes} {reads}<&- {writes}>&-', "chromium",
             binary, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, pass_fds=(reads, writes),
            start_new_session=True)  # its own process group: close() ends its helper processes with it
        os.close(reads)
        os.close(writes)
        self._buffer = b""
        self._next_id = 0
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None,
             timeout: float = 60.0) -> dict[str, Any]:
        """Send one command and wait for its answer (events meanwhile are dropped)."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            while b"\0" not in self._buffer:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self._from_browser], [], [], left)[0]:
                    raise TimeoutError(f"Chromium did not answer {method} within {timeout} s")
                chunk = os.read(self._from_browser, 1 << 16)
                if not chunk:
                    raise RuntimeError(f"Chromium exited (code {self.process.poll()}) during {method}")
                self._buffer += chunk
            raw, self._buffer = self._buffer.split(b"\0", 1)
            answer = json.loads(raw)
            if answer.get("id") == self._next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer["result"]

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (a promise is awaited)."""
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True}, self.session)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 60.0) -> Any:
        """Poll ``expression`` until it is truthy (scripts, a search index loading in a worker); its value.
        The deadline is generous: a busy machine is slow, a failure is not."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                value = self.evaluate(expression)
            except RuntimeError:  # the page is between documents: its context went away
                value = None
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"never true within {timeout} s: {expression}")
            time.sleep(0.1)

    def open(self, url: str) -> None:
        """Load ``url`` and wait until its document has loaded."""
        self.send("Page.navigate", {"url": url}, self.session)
        self.wait_for(f"location.href === {json.dumps(url)} && document.readyState === 'complete'")

    def close(self) -> None:
        """Ask Chromium to quit; its process group is killed if it has not within 10 s."""
        try:
            self.send("Browser.close", timeout=10)
        except (OSError, RuntimeError, TimeoutError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)
        shutil.rmtree(self.profile, ignore_errors=True)
