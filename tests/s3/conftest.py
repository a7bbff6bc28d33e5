"""Fixtures of the S3 tests: one real S3 API server per test session, a new bucket per test.

The server is moto in server mode (``moto_server``, installed with the dev extra as ``moto[server]``), started
on a free loopback port and stopped at the end of the session. gpy talks to it through s3fs exactly as it would
to AWS or MinIO: over HTTP, with the endpoint and credentials given by a job's ``fs.s3a.*`` keys. Only when
moto is not installed, or its server does not start, are the S3 tests skipped, saying why.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.environment import missing
from tests.support.net import free_port
from tests.support.s3 import ACCESS_KEY, SECRET_KEY


@dataclass
class S3Server:
    """A running S3 API server on loopback."""

    process: subprocess.Popen
    port: int
    log: Path  # one line per request: method, path and HTTP status

    def statuses(self, method: str, key: str) -> list[int]:
        """The HTTP status of every ``method`` request on ``bucket/key`` so far."""
        found = []
        for line in self.log.read_text(errors="replace").splitlines():
            parts = re.sub(r"\x1b\[[0-9;]*m", "", line).split('"')  # the server colours some lines
            if len(parts) >= 3 and parts[1].split(" ")[:2] == [method, f"/{key}"]:
                found.append(int(parts[2].split()[0]))
        return found

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def filesystem(self):
        """A fresh s3fs filesystem on the server (no listing cache, so it sees other processes' writes)."""
        import s3fs

        return s3fs.S3FileSystem(key=ACCESS_KEY, secret=SECRET_KEY, client_kwargs={"endpoint_url": self.endpoint},
                                 use_listings_cache=False, skip_instance_cache=True)

    def job_keys(self) -> str:
        """The lines a job file needs to reach this server, as it would for MinIO."""
        return (f"fs.s3a.endpoint={self.endpoint}\nfs.s3a.access.key={ACCESS_KEY}\n"
                f"fs.s3a.secret.key={SECRET_KEY}\nfs.s3a.path.style.access=true\n")

    def env(self) -> dict[str, str]:
        """Environment for a command that reads S3 without a job file (botocore's variables)."""
        return {"AWS_ENDPOINT_URL": self.endpoint, "AWS_ACCESS_KEY_ID": ACCESS_KEY,
                "AWS_SECRET_ACCESS_KEY": SECRET_KEY}


def _server_command(port: int) -> list[str]:
    script = shutil.which("moto_server", path=os.path.dirname(sys.executable)) or shutil.which("moto_server")
    base = [script] if script else [sys.executable, "-m", "moto.server"]
    return [*base, "-H", "127.0.0.1", "-p", str(port)]


def _answers(endpoint: str) -> bool:
    import urllib.request

    try:
        with urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=1) as response:
            return response.status == 200
    except OSError:
        return False


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory):
    """moto's S3 server on a free loopback port for the whole session (skips, saying why, only if it cannot run)."""
    try:
        import moto.server  # noqa: F401
        import s3fs  # noqa: F401
    except ImportError as exc:
        missing(f"the S3 tests need moto[server] and s3fs (pip install -e '.[dev]'): {exc}")
    log = tmp_path_factory.mktemp("moto") / "server.log"
    port = free_port()
    with open(log, "wb") as out:
        process = subprocess.Popen(_server_command(port), stdout=out, stderr=subprocess.STDOUT,
                                   env={**os.environ, "MOTO_ALLOW_NONEXISTENT_REGION": "true"})
    server = S3Server(process, port, Path(log))
    deadline = time.monotonic() + 60
    while not _answers(server.endpoint):
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            process.wait()
            missing(f"moto_server did not start on 127.0.0.1:{port}: {Path(log).read_text()[-500:]}")
        time.sleep(0.1)
    yield server
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.fixture
def bucket(s3_server) -> str:
    """A new, empty bucket for one test (removed afterwards, so the server's memory stays small)."""
    fs = s3_server.filesystem()
    name = f"gpy-{uuid.uuid4().hex[:12]}"
    fs.mkdir(name)
    yield name
    try:
        fs.rm(name, recursive=True)
    except OSError:
        pass
