"""Fixtures of the reporter tests: a small CSV job, a real Prometheus Pushgateway, endpoints that never answer.

The Pushgateway is Debian's ``prometheus-pushgateway`` binary (installed with apt-get when missing), started once
per session on a loopback port of its own, without persistence; the system service is never used. ``promtool``
(Debian's ``prometheus`` package, installed the same way; no server is started) evaluates alerting rules.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator

import pytest

from tests.support.environment import missing
from tests.support.net import free_port

PUSHGATEWAY = "prometheus-pushgateway"
PROMTOOL_PACKAGE = "prometheus"  # Debian ships promtool in the Prometheus server's package


def _binary(name: str = PUSHGATEWAY, package: str = PUSHGATEWAY) -> str | None:
    found = shutil.which(name)
    if found is None and shutil.which("apt-get"):
        subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", package], capture_output=True,
                       timeout=600)
        found = shutil.which(name)
    return found


@pytest.fixture(scope="session")
def promtool() -> str:
    """Prometheus's ``promtool``, which evaluates alerting rules against given series (``promtool test rules``)."""
    found = _binary("promtool", PROMTOOL_PACKAGE)
    if found is None:
        missing(f"promtool is not installed and apt-get could not install {PROMTOOL_PACKAGE}")
    return found


@pytest.fixture(scope="session")
def pushgateway(tmp_path_factory) -> Iterator[str]:
    """The URL of a Pushgateway of this session (``http://127.0.0.1:<port>``)."""
    binary = _binary()
    if binary is None:
        missing(f"{PUSHGATEWAY} is not installed and apt-get could not install it")
    port = free_port()
    log = tmp_path_factory.mktemp("pushgateway") / "pushgateway.log"
    with open(log, "wb") as out:
        process = subprocess.Popen([binary, f"--web.listen-address=127.0.0.1:{port}", "--persistence.file="],
                                   stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                urllib.request.urlopen(url + "/-/ready", timeout=1).read()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"the Pushgateway did not start: {log.read_text()[-2000:]}")
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture
def black_hole() -> Iterator[str]:
    """``http://127.0.0.1:<port>`` of a listener that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
                held.append(conn)
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}"
    stop.set()
    thread.join(timeout=2)
    for conn in held:
        conn.close()
    server.close()
