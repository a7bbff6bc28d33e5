"""Fixtures of the reporter tests: a real Prometheus Pushgateway, endpoints that never answer.

The Pushgateway is Debian's ``prometheus-pushgateway`` binary (installed with apt-get when missing), started once
per session on a loopback port of its own, without persistence; the system service is never used. ``promtool``
(Debian's ``prometheus`` package, installed the same way; no server is started) evaluates alerting rules.
Gobblin's Graphite and InfluxDB reporters write to Debian's ``graphite-carbon`` (carbon-cache, whisper files of
one-second resolution) and ``influxdb`` (1.x), each started once per session on free loopback ports with its own
data folder.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

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


def _started(process: subprocess.Popen, port: int, log: Path, what: str) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                pytest.fail(f"{what} did not start: {log.read_text(errors='replace')[-2000:]}")
            time.sleep(0.1)


@pytest.fixture(scope="session")
def carbon_server(tmp_path_factory) -> Iterator[tuple[int, Path]]:
    """A carbon-cache of this session: ``(its plaintext port, the folder of its whisper files)``."""
    binary = _binary("carbon-cache", "graphite-carbon")
    if binary is None:
        missing("carbon-cache is not installed and apt-get could not install graphite-carbon")
    root = tmp_path_factory.mktemp("carbon")
    line, pickle, query = free_port(), free_port(), free_port()
    for folder in ("conf", "whisper", "lists", "log", "pid"):
        (root / folder).mkdir()
    (root / "conf" / "storage-schemas.conf").write_text("[everything]\npattern = .*\nretentions = 1s:1h\n")
    (root / "conf" / "carbon.conf").write_text("\n".join([
        "[cache]", f"STORAGE_DIR = {root}/", f"LOCAL_DATA_DIR = {root}/whisper/", f"WHITELISTS_DIR = {root}/lists/",
        f"CONF_DIR = {root}/conf/", f"LOG_DIR = {root}/log/", f"PID_DIR = {root}/pid/", "DATABASE = whisper",
        "ENABLE_TAGS = False", "ENABLE_LOGROTATION = False", "MAX_CACHE_SIZE = inf", "MAX_UPDATES_PER_SECOND = 10000",
        "MAX_CREATES_PER_MINUTE = inf", "LINE_RECEIVER_INTERFACE = 127.0.0.1", f"LINE_RECEIVER_PORT = {line}",
        "ENABLE_UDP_LISTENER = False", "PICKLE_RECEIVER_INTERFACE = 127.0.0.1", f"PICKLE_RECEIVER_PORT = {pickle}",
        "CACHE_QUERY_INTERFACE = 127.0.0.1", f"CACHE_QUERY_PORT = {query}", "LOG_UPDATES = False", "",
    ]))
    log = root / "carbon.out"
    with open(log, "wb") as out:
        process = subprocess.Popen([binary, f"--config={root}/conf/carbon.conf", "--debug", "start"], stdout=out,
                                   stderr=subprocess.STDOUT)
    try:
        _started(process, line, log, "carbon-cache")
        yield line, root / "whisper"
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="session")
def influxdb_server(tmp_path_factory) -> Iterator[str]:
    """The URL of an InfluxDB 1.x of this session (``http://127.0.0.1:<port>``)."""
    binary = _binary("influxd", "influxdb")
    if binary is None:
        missing("influxd is not installed and apt-get could not install influxdb")
    root = tmp_path_factory.mktemp("influxdb")
    http, rpc = free_port(), free_port()
    (root / "influxdb.conf").write_text("\n".join([
        "reporting-disabled = true", f'bind-address = "127.0.0.1:{rpc}"', "[meta]", f'  dir = "{root}/meta"',
        "[data]", f'  dir = "{root}/data"', f'  wal-dir = "{root}/wal"', "  query-log-enabled = false",
        "[http]", f'  bind-address = "127.0.0.1:{http}"', "  log-enabled = false", "[monitor]",
        "  store-enabled = false", "",
    ]))
    log = root / "influxd.out"
    with open(log, "wb") as out:
        process = subprocess.Popen([binary, "-config", str(root / "influxdb.conf")], stdout=out,
                                   stderr=subprocess.STDOUT)
    try:
        _started(process, http, log, "influxd")
        yield f"http://127.0.0.1:{http}"
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
