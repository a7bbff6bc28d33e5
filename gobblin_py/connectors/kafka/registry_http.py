"""Confluent's schema registry over HTTP(S): each request — connection, question and whole answer — within a total
deadline, and a stop (SIGTERM, SIGINT) ends it at once.

confluent-kafka's registry client times each read, not the answer: a registry that accepts the connection and
never answers costs its retries times the read timeout, one that drips its answer holds a task for as long as it
drips, and neither wait notices a stop. The few calls gpy's readers and writers make are made here instead, on a
non-blocking socket waited on a tenth of a second at a time: past the deadline the request fails naming the
registry's URL and the timeout's key; once the process is asked to stop it raises
:class:`~gobblin_py.sdk.interrupts.TaskCancelled` and sends nothing more.

With several URLs (a comma list), a request that fails without an answer, or is answered 429 or 5xx, is tried at
the next one. Credentials in a URL's user-info are sent as Basic authentication and never shown: errors name the
URL without them. HTTPS checks the registry's certificate against the system's authorities (``SSL_CERT_FILE`` /
``SSL_CERT_DIR``) and certifi's.
"""

from __future__ import annotations

import base64
import errno
import json
import os
import selectors
import socket
import ssl
import time
from typing import Any
from urllib.parse import SplitResult, quote, unquote, urlsplit

from gobblin_py.sdk.errors import GobblinPyError
from gobblin_py.sdk.interrupts import check_cancelled

POLL_S = 0.1
MAX_ANSWER = 64 << 20  # a registry's answers are schemas: kilobytes
ACCEPT = "application/vnd.schemaregistry.v1+json, application/vnd.schemaregistry+json, application/json"


class RegistryError(GobblinPyError):
    """A registry request that failed: ``http_status_code`` (0: no answer) and the registry's ``error_code``."""

    def __init__(self, message: str, http_status_code: int = 0, error_code: int = 0) -> None:
        super().__init__(message)
        self.http_status_code = http_status_code
        self.error_code = error_code


class _Unanswered(Exception):
    """No (complete) answer from one URL: the next one may answer."""


def shown(url: str) -> str:
    """``url`` without the credentials of its user-info."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    return parts._replace(netloc=(parts.hostname or "") + (f":{parts.port}" if parts.port else "")).geturl()


def path_of(*segments: str | int) -> str:
    """``/a/b/…`` with each segment percent-encoded (a subject may hold ``/``)."""
    return "".join("/" + quote(str(s), safe="") for s in segments)


class RegistryHttp:
    """The registry's REST API at ``urls`` (a comma list), each request ended within ``timeout_s`` seconds
    (``timeout_key`` names the key that sets it, in errors)."""

    def __init__(self, urls: str, timeout_s: float, timeout_key: str) -> None:
        self.urls = [u.strip().rstrip("/") for u in urls.split(",") if u.strip()]
        self.display = ",".join(shown(u) for u in self.urls)
        self.timeout_s = timeout_s
        self.timeout_key = timeout_key
        self._tls: ssl.SSLContext | None = None

    def get(self, path: str) -> Any:
        return self.call("GET", path)

    def post(self, path: str, body: Any) -> Any:
        return self.call("POST", path, body)

    def call(self, method: str, path: str, body: Any = None) -> Any:
        """The JSON answer to ``method path``; RegistryError naming the URL when no URL answers it with success."""
        failure: RegistryError | None = None
        for url in self.urls:
            where = f"{shown(url)}: {method} {path}"
            try:
                status, data = self._exchange(urlsplit(url + path), method, body)
            except _Unanswered as exc:
                failure = RegistryError(f"{where}: {exc}")
                continue
            if 200 <= status < 300:
                try:
                    return json.loads(data) if data.strip() else None
                except ValueError:
                    raise RegistryError(f"{where}: answered {status} with something that is not JSON: "
                                        f"{data[:200]!r}", status) from None
            failure = _refusal(where, status, data)
            if status != 429 and status < 500:
                break
        assert failure is not None
        raise failure

    def _exchange(self, url: SplitResult, method: str, body: Any) -> tuple[int, bytes]:
        deadline = time.monotonic() + self.timeout_s
        payload = json.dumps(body).encode() if body is not None else b""
        target = url.path + (f"?{url.query}" if url.query else "")
        host = url.hostname or ""
        headers = [f"{method} {target} HTTP/1.1", f"Host: {url.netloc.rpartition('@')[2]}", f"Accept: {ACCEPT}",
                   "Connection: close", "User-Agent: gobblin_py", f"Content-Length: {len(payload)}"]
        if body is not None:
            headers.append("Content-Type: application/vnd.schemaregistry.v1+json")
        if url.username is not None:
            secret = f"{unquote(url.username)}:{unquote(url.password or '')}".encode()
            headers.append(f"Authorization: Basic {base64.b64encode(secret).decode()}")
        request = ("\r\n".join(headers) + "\r\n\r\n").encode() + payload
        try:
            sock = self._connect(host, url.port or (443 if url.scheme == "https" else 80), deadline)
        except OSError as exc:
            raise _Unanswered(f"cannot connect: {exc}") from None
        try:
            if url.scheme == "https":
                sock = self._handshake(sock, host, deadline)
            _send(sock, request, deadline, self)
            return _receive(sock, deadline, self)
        except (OSError, ssl.SSLError) as exc:
            raise _Unanswered(f"the connection failed: {exc}") from None
        finally:
            sock.close()

    def wait(self, sock: socket.socket, events: int, deadline: float, what: str) -> None:
        """Until ``sock`` is ready, a tenth of a second at a time: a stop raises TaskCancelled, the deadline
        _Unanswered."""
        with selectors.DefaultSelector() as selector:
            selector.register(sock, events)
            while True:
                check_cancelled()
                left = deadline - time.monotonic()
                if left <= 0:
                    raise _Unanswered(f"{what} within {self.timeout_s:g} s ({self.timeout_key})")
                if selector.select(min(POLL_S, left)):
                    return

    def _connect(self, host: str, port: int, deadline: float) -> socket.socket:
        last: OSError = OSError(f"no address for {host}")
        for family, kind, proto, _, address in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
            sock = socket.socket(family, kind, proto)
            sock.setblocking(False)
            try:
                started = sock.connect_ex(address)
                if started not in (0, *_IN_PROGRESS):
                    raise OSError(started, os.strerror(started))
                self.wait(sock, selectors.EVENT_WRITE, deadline, "no connection")
                error = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if error:
                    raise OSError(error, os.strerror(error))
                return sock
            except OSError as exc:
                sock.close()
                last = exc
            except BaseException:
                sock.close()
                raise
        raise last

    def _handshake(self, sock: socket.socket, host: str, deadline: float) -> ssl.SSLSocket:
        if self._tls is None:
            self._tls = ssl.create_default_context()
            try:
                import certifi

                self._tls.load_verify_locations(certifi.where())
            except ImportError:
                pass
        secure = self._tls.wrap_socket(sock, server_hostname=host, do_handshake_on_connect=False)
        while True:
            try:
                secure.do_handshake()
                return secure
            except ssl.SSLWantReadError:
                self.wait(secure, selectors.EVENT_READ, deadline, "no TLS handshake")
            except ssl.SSLWantWriteError:
                self.wait(secure, selectors.EVENT_WRITE, deadline, "no TLS handshake")


_IN_PROGRESS = (errno.EINPROGRESS, errno.EALREADY, errno.EWOULDBLOCK, errno.EAGAIN)


def _send(sock: socket.socket, data: bytes, deadline: float, http: RegistryHttp) -> None:
    sent = 0
    while sent < len(data):
        try:
            sent += sock.send(data[sent:])
        except (BlockingIOError, ssl.SSLWantWriteError):
            http.wait(sock, selectors.EVENT_WRITE, deadline, "the request not taken")
        except ssl.SSLWantReadError:
            http.wait(sock, selectors.EVENT_READ, deadline, "the request not taken")


def _receive(sock: socket.socket, deadline: float, http: RegistryHttp) -> tuple[int, bytes]:
    data = bytearray()
    while True:
        try:
            chunk = sock.recv(65536)
        except (BlockingIOError, ssl.SSLWantReadError):
            http.wait(sock, selectors.EVENT_READ, deadline, "no complete answer" if data else "no answer")
            continue
        except ssl.SSLWantWriteError:
            http.wait(sock, selectors.EVENT_WRITE, deadline, "no complete answer")
            continue
        data += chunk
        if len(data) > MAX_ANSWER:
            raise _Unanswered(f"an answer over {MAX_ANSWER >> 20} MB, not a registry's")
        answer = _parse(bytes(data), ended=not chunk)
        if answer is not None:
            return answer
        if not chunk:
            raise _Unanswered("the answer ended early" if data else "the connection closed without an answer")


def _parse(data: bytes, ended: bool) -> tuple[int, bytes] | None:
    """``(status, body)`` once ``data`` holds a whole HTTP answer (``ended``: nothing more will come)."""
    head, found, rest = data.partition(b"\r\n\r\n")
    if not found:
        return None
    lines = head.decode("latin-1").split("\r\n")
    try:
        status = int(lines[0].split(" ", 2)[1])
    except (IndexError, ValueError):
        raise _Unanswered(f"not an HTTP answer: {lines[0][:100]!r}") from None
    fields = {name.strip().lower(): value.strip() for name, _, value in (line.partition(":") for line in lines[1:])}
    if "chunked" in fields.get("transfer-encoding", "").lower():
        body = _unchunk(rest)
        return (status, body) if body is not None else None
    if "content-length" in fields:
        length = int(fields["content-length"]) if fields["content-length"].isdigit() else -1
        return (status, rest[:length]) if 0 <= length <= len(rest) else None
    return (status, rest) if ended else None


def _unchunk(data: bytes) -> bytes | None:
    body = bytearray()
    at = 0
    while True:
        end = data.find(b"\r\n", at)
        if end < 0:
            return None
        try:
            size = int(data[at:end].split(b";")[0], 16)
        except ValueError:
            raise _Unanswered("a chunked answer that is not") from None
        if size == 0:
            return bytes(body)
        if len(data) < end + 2 + size + 2:
            return None
        body += data[end + 2:end + 2 + size]
        at = end + 2 + size + 2


def _refusal(where: str, status: int, data: bytes) -> RegistryError:
    try:
        answer = json.loads(data)
        code, message = int(answer.get("error_code") or 0), str(answer.get("message") or "")
    except (ValueError, AttributeError, TypeError):
        code, message = 0, data[:200].decode("utf-8", "replace")
    return RegistryError(f"{where}: {message or 'refused'} (HTTP {status})", status, code)
