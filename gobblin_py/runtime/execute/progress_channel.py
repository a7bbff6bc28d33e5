"""The progress channel: Spark executors' task reports to the driver, over TCP, while the tasks run.

The driver listens on its own address (``spark.driver.host``, where executors already reach it) on a free port;
each executor task connects, proves it belongs to this run with a one-run token, and sends one JSON
:class:`~gobblin_py.runtime.execute.task_progress.TaskReport` per line. Progress is best effort: an executor that cannot
reach the driver (a firewall between them) runs on unreported, and the display catches up when the tasks'
states come back.
"""

from __future__ import annotations

import hmac
import json
import secrets
import socket
import socketserver
import threading
from typing import Any

from gobblin_py.runtime.execute.task_progress import ProgressSink, TaskReport
from gobblin_py.sdk.logs import get_logger

log = get_logger(__name__)

Address = tuple[str, int, str]  # host, port, token
CONNECT_TIMEOUT_S = 2.0
SHUTDOWN_POLL_S = 0.05


class _Handler(socketserver.StreamRequestHandler):
    server: _Server

    def handle(self) -> None:
        token = self.rfile.readline().decode("ascii", errors="replace").strip()
        if not hmac.compare_digest(token, self.server.token):
            return  # not one of this run's tasks
        for line in self.rfile:
            try:
                self.server.sink.update(TaskReport.from_json(json.loads(line)))
            except (ValueError, KeyError, TypeError):
                continue


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, bind: tuple[str, int], sink: ProgressSink, token: str) -> None:
        self.sink = sink
        self.token = token
        super().__init__(bind, _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # an executor's connection broken mid-report (its task stopped or its process died): progress is best
        # effort, and a traceback on the console would say otherwise
        log.debug("progress_channel_broken", executor=str(client_address))


class ProgressServer:
    """Listens for executors' reports while a Spark job runs: ``with ProgressServer(sink, host) as address: …``."""

    def __init__(self, sink: ProgressSink, host: str, bind_host: str | None = None) -> None:
        self.sink = sink
        self.host = host
        self.bind_host = bind_host or host
        self.token = secrets.token_hex(16)
        self._server: _Server | None = None

    def __enter__(self) -> Address | None:
        try:
            self._server = _Server((self.bind_host, 0), self.sink, self.token)
        except OSError as exc:
            log.debug("progress_channel_unavailable", host=self.bind_host, error=str(exc))
            return None
        # a short poll: shutting the server down waits for the loop's next look (0.5 s by default, every run)
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": SHUTDOWN_POLL_S},
                         name="gpy-progress", daemon=True).start()
        return self.host, self._server.server_address[1], self.token

    def __exit__(self, *exc: Any) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


class ChannelSink:
    """An executor's end of the channel: sends reports; gives up quietly the first time the driver is not there."""

    def __init__(self, address: Address) -> None:
        self.address = address
        self._socket: socket.socket | None = None
        self._broken = False
        self._lock = threading.Lock()  # a task's branches may report from their own threads

    def planned(self, tasks: int) -> None:
        """Executors plan nothing."""

    def update(self, report: TaskReport) -> None:
        line = (json.dumps(report.to_json(), separators=(",", ":")) + "\n").encode("utf-8")
        with self._lock:
            if self._broken:
                return
            try:
                if self._socket is None:
                    host, port, token = self.address
                    self._socket = socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S)
                    self._socket.sendall(token.encode("ascii") + b"\n")
                self._socket.sendall(line)
            except OSError:
                self._broken = True
                self.close()

    def close(self) -> None:
        if self._socket is not None:
            try:
                self._socket.close()
            finally:
                self._socket = None
