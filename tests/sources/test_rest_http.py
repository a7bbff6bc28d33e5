"""The REST client against hostile servers: an answer dripped a byte at a time meets a total deadline, one too large
or nested too deep fails naming the URL; credentials never cross an https → http redirect and are masked in
everything gpy writes."""

from __future__ import annotations

import json
import shutil
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.sources.rest_jobs import ids, items, run_here, write_job
from tests.support.environment import missing


def test_an_answer_dripped_a_byte_at_a_time_fails_at_the_deadline_naming_the_url(web_api, tmp_path):
    body = json.dumps({"data": {"items": []}}) + " " * 40  # 62 bytes, one each 0.5 s: 31 s for the whole answer
    web_api.route("/drip", body, drip_s=0.5)
    job = write_job(tmp_path, web_api.url, **{"rest.url": web_api.url + "/drip", "rest.paging.type": "none",
                                              "rest.timeout.seconds": "1", "rest.retry.max": "0"})
    began = time.monotonic()
    result = run_here(job, tmp_path, expect=1)
    assert time.monotonic() - began < 15  # about the 1 s deadline, where each read's timeout never trips
    assert f"GET {web_api.url}/drip: no whole answer within 1 s (rest.timeout.seconds)" in result.output


def test_an_answer_nested_too_deep_fails_naming_the_url(web_api, tmp_path):
    web_api.route("/deep", "[" * 100_000 + "]" * 100_000)
    result = run_here(write_job(tmp_path, web_api.url, **{"rest.url": web_api.url + "/deep"}), tmp_path, expect=1)
    assert f"GET {web_api.url}/deep" in result.output and "nested deeper than can be read" in result.output
    assert "RecursionError" not in result.output


@pytest.mark.parametrize("length", [True, False])
def test_an_answer_larger_than_the_limit_fails_before_it_is_read_whole(web_api, tmp_path, length):
    big = {"data": {"items": items(*range(1, 200))}}
    web_api.route("/big", big, length=length)
    job = write_job(tmp_path, web_api.url, **{"rest.url": web_api.url + "/big", "rest.response.max.bytes": "1000",
                                              "rest.paging.type": "none"})
    result = run_here(job, tmp_path, expect=1)
    assert f"GET {web_api.url}/big" in result.output and "larger than rest.response.max.bytes=1000" in result.output
    assert "IncompleteRead" not in result.output


class _EitherProtocol(ThreadingHTTPServer):
    """One port answering TLS and plain HTTP alike (as https://host and http://host are one host): a TLS
    connection is redirected to the same URL over plain HTTP, where the headers that came are kept."""

    def __init__(self, context: ssl.SSLContext) -> None:
        self.context = context
        self.plain_headers: list[dict[str, str]] = []
        super().__init__(("127.0.0.1", 0), _Redirecting)

    def get_request(self) -> tuple[socket.socket, object]:
        sock, address = super().get_request()
        if sock.recv(1, socket.MSG_PEEK) == b"\x16":  # a TLS handshake
            sock = self.context.wrap_socket(sock, server_side=True)
        return sock, address


class _Redirecting(BaseHTTPRequestHandler):
    server: _EitherProtocol

    def do_GET(self) -> None:  # noqa: N802 - the standard library's name
        port = self.server.server_address[1]
        if isinstance(self.connection, ssl.SSLSocket):
            self.send_response(302)
            self.send_header("Location", f"http://127.0.0.1:{port}{self.path}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.server.plain_headers.append(dict(self.headers.items()))
        body = json.dumps({"data": {"items": items(1, 2)}}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def certificate(tmp_path_factory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key."""
    if shutil.which("openssl") is None:
        missing("the openssl command, to make a test certificate")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    return cert, key


@pytest.fixture
def either_protocol(certificate) -> Iterator[_EitherProtocol]:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*map(str, certificate))
    server = _EitherProtocol(context)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


def test_no_credential_is_sent_over_plain_http_after_an_https_redirect_on_the_same_host(either_protocol, certificate,
                                                                                        tmp_path):
    port = either_protocol.server_address[1]
    job = write_job(tmp_path, "", **{"rest.url": f"https://127.0.0.1:{port}/items", "rest.paging.type": "none",
                                     "rest.watermark.param": None})
    run_here(job, tmp_path, env={"SSL_CERT_FILE": str(certificate[0])})
    assert ids(tmp_path) == [1, 2]  # the redirect was followed (over TLS the token went, verified)
    assert len(either_protocol.plain_headers) == 1 and "Authorization" not in either_protocol.plain_headers[0]


SECRETS = ("pw-Secret9", "abc123KEY", "wrong-token-77", "dTpwdy1TZWNyZXQ5")  # (the last: u:pw-Secret9 in base64)


def _written(root: Path, result_output: str) -> dict[str, str]:
    """What gpy wrote: its output, run history, metrics file and lineage events (not the job file it was given)."""
    written = {"output": result_output}
    for folder in ("state-store/_history", "metrics", "lineage"):
        for path in sorted((root / folder).rglob("*")):
            if path.is_file():
                written[str(path.relative_to(root))] = path.read_text(errors="replace")
    return written


@pytest.mark.parametrize("how", ["user-info and api_key in rest.url", "a refused token echoed, api_key as a query key"])
def test_credentials_are_masked_in_logs_errors_history_metrics_and_lineage(web_api, tmp_path, how):
    web_api.fail_next(503)  # a retry line naming the URL first
    (tmp_path / "lineage").mkdir()
    host = web_api.url.removeprefix("http://")
    reporting = {"metrics.reporting.file.enabled": "true", "metrics.log.dir": str(tmp_path / "metrics"),
                 "openlineage.transport.type": "file", "openlineage.transport.append": "true",
                 "openlineage.transport.log_file_path": str(tmp_path / "lineage" / "events.jsonl"),
                 "rest.retry.backoff.ms": "10"}
    if how.startswith("user-info"):
        job = write_job(tmp_path, web_api.url, **reporting, **{
            "rest.url": f"http://u:pw-Secret9@{host}/items?api_key=abc123KEY", "rest.auth.token": None})
    else:
        job = write_job(tmp_path, web_api.url, **reporting, **{"rest.query.api_key": "abc123KEY",
                                                               "rest.auth.token": "wrong-token-77"})
    result = run_here(job, tmp_path, expect=1)
    assert "HTTP 401" in result.output and "http_retry" in result.output
    sent = web_api.requests("/items")[-1]
    assert sent.params.get("api_key") == "abc123KEY"  # the credentials did go to the server, and only there
    written = _written(tmp_path, result.output)
    assert any(name.startswith("state-store/_history") for name in written) and "lineage/events.jsonl" in written
    assert any(name.startswith("metrics") for name in written)
    leaks = {name: secret for name, text in written.items() for secret in SECRETS if secret in text}
    assert not leaks
    assert "api_key=******" in written["output"]


@pytest.fixture
def dripping_ftp() -> Iterator[tuple[int, list[float]]]:
    """An "FTP server" sending its greeting a line a second for 6 s (urllib's FTP client would wait through it,
    each read within its timeout): its port, and when each connection came."""
    listener = socket.create_server(("127.0.0.1", 0))
    connections: list[float] = []

    def drip(conn: socket.socket) -> None:
        with conn:
            for _ in range(6):
                try:
                    conn.sendall(b"220-welcome\r\n")
                except OSError:
                    return
                time.sleep(1)

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            connections.append(time.monotonic())
            threading.Thread(target=drip, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    yield listener.getsockname()[1], connections
    listener.close()


def test_a_redirect_to_another_scheme_is_refused_naming_both_urls(web_api, tmp_path, dripping_ftp):
    port, connections = dripping_ftp
    ftp = f"ftp://127.0.0.1:{port}/x.json"
    job = write_job(tmp_path, web_api.url, **{"rest.url": f"{web_api.url}/moved?to={ftp}", "rest.paging.type": "none",
                                              "rest.timeout.seconds": "3", "rest.retry.max": "1",
                                              "rest.retry.backoff.ms": "0"})
    result = run_here(job, tmp_path, expect=1)
    assert f"GET {web_api.url}/moved?to={ftp}: redirected to {ftp}" in result.output
    assert "only http:// and https:// redirects are followed" in result.output
    assert connections == []  # nothing outside the deadline-watched HTTP(S) connections was opened
    assert len(web_api.requests("/moved")) == 1  # refused at once, not retried


def test_a_server_down_holds_the_run_no_longer_than_its_retry_budget(web_api, tmp_path):
    web_api.route("/down", {"error": "maintenance"}, status=503)
    job = write_job(tmp_path, web_api.url, **{"rest.url": web_api.url + "/down", "rest.paging.type": "none",
                                              "rest.retry.backoff.ms": "200", "task.maxretries": "5",
                                              "task.retry.intervalinsec": "300", "gpy.retry.budget.seconds": "0.5"})
    began = time.monotonic()
    result = run_here(job, tmp_path, expect=1)
    assert time.monotonic() - began < 15  # Gobblin's retries, each of 5 REST retries, wait about 50 minutes
    assert [r.status for r in web_api.requests("/down")] == [503] * 3  # waits of 0.2 s, then 0.3 of 0.4 s
    lines = [json.loads(line) for line in result.output.splitlines() if '"http_retry"' in line]
    assert lines[0]["note"] == "the run may still wait 0.5 s in all for retries (gpy.retry.budget.seconds=0.5)"
    assert "shortened by 0.1 s" in lines[1]["note"] and len(lines) == 2
    spent = "the run's retry budget is spent (gpy.retry.budget.seconds=0.5)"
    assert f"GET {web_api.url}/down: HTTP 503, not retried: {spent}" in result.output
    assert result.output.count(spent) == result.output.count("not retried")  # said once in each line
