"""A total time limit on one HTTP request: connecting, every redirect, the headers and the whole body.

A socket's own timeout bounds each read, so a server sending a byte every few seconds never trips it. Here a
watchdog thread shuts the request's sockets down when the deadline passes, or as soon as the run is asked to stop
(:func:`gobblin_py.sdk.interrupts.cancelled`): the read under way returns at once and the caller sees
:attr:`Deadline.expired` or the stop. The sockets are watched through duplicates of their descriptors, so a socket
that TLS took over (``wrap_socket`` detaches the plain one) is still reached.
"""

from __future__ import annotations

import http.client
import socket
import threading
import time
import urllib.request
from types import TracebackType
from typing import Any

from gobblin_py.sdk.interrupts import cancelled

STOP_POLL_S = 0.1  # how soon a request in flight notices the run was asked to stop


class Deadline:
    """The time left for one request; shuts its sockets down when none is left or the run stops."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.expires = time.monotonic() + seconds
        self.expired = False
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._sockets: list[socket.socket] = []
        self._thread = threading.Thread(target=self._watch, name="gpy-http-deadline", daemon=True)

    def remaining(self) -> float:
        return max(0.001, self.expires - time.monotonic())

    def watch(self, sock: socket.socket) -> None:
        """Shut ``sock`` down when the deadline passes (at once when it already has)."""
        with self._lock:
            self._sockets.append(sock.dup())
            if self.expired:
                self._shut()

    def __enter__(self) -> Deadline:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        with self._lock:
            self._done.set()
            for sock in self._sockets:
                sock.close()
            self._sockets.clear()
        self._thread.join()

    def _watch(self) -> None:
        while not self._done.wait(min(STOP_POLL_S, max(0.0, self.expires - time.monotonic()))):
            if time.monotonic() >= self.expires or cancelled():
                with self._lock:
                    if not self._done.is_set():
                        self.expired = True
                        self._shut()
                return

    def _shut(self) -> None:
        for sock in self._sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:  # already closed by the other end
                pass


class _Watched:
    """An HTTP(S) connection whose socket its :class:`Deadline` watches, connecting within the time left."""

    def __init__(self, *args: Any, deadline: Deadline, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline = deadline
        self._create_connection = self._connect_watched

    def _connect_watched(self, address: tuple[str, int], timeout: float, source: Any = None) -> socket.socket:
        sock = socket.create_connection(address, min(timeout, self._deadline.remaining()), source)
        self._deadline.watch(sock)
        return sock


class _WatchedHTTP(_Watched, http.client.HTTPConnection):
    pass


class _WatchedHTTPS(_Watched, http.client.HTTPSConnection):
    pass


class HttpHandler(urllib.request.HTTPHandler):
    """urllib's handler of ``http://`` URLs, its connections under a deadline."""

    def __init__(self, deadline: Deadline) -> None:
        super().__init__()
        self.deadline = deadline

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(self._connection, req)

    def _connection(self, host: str, /, **kwargs: Any) -> http.client.HTTPConnection:
        return _WatchedHTTP(host, deadline=self.deadline, **kwargs)


class HttpsHandler(urllib.request.HTTPSHandler):
    """urllib's handler of ``https://`` URLs (the default TLS context: certificates and host names checked), its
    connections under a deadline."""

    def __init__(self, deadline: Deadline) -> None:
        super().__init__()
        self.deadline = deadline

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(self._connection, req)

    def _connection(self, host: str, /, **kwargs: Any) -> http.client.HTTPConnection:
        return _WatchedHTTPS(host, deadline=self.deadline, **kwargs)
