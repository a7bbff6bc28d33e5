"""A schema registry that misbehaves, on a loopback port in threads: ``silent`` accepts the connection, reads the
request and never answers; ``drip`` answers a registry's valid answer one byte every ``interval`` seconds."""

from __future__ import annotations

import socket
import threading

ANSWER = b'{"schema": "{\\"type\\": \\"record\\", \\"name\\": \\"R\\", \\"fields\\": []}"}'


class HostileRegistry:
    """``url``; ``requests``: the requests received so far (their first lines)."""

    def __init__(self, mode: str, interval: float = 1.0) -> None:
        assert mode in ("silent", "drip")
        self.mode = mode
        self.interval = interval
        self.requests: list[str] = []
        self.closed = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.connections: list[socket.socket] = []
        threading.Thread(target=self._accept, name="hostile-registry", daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}"

    def _accept(self) -> None:
        while not self.closed.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.connections.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        data = b""
        try:
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            self.requests.append(data.split(b"\r\n", 1)[0].decode())
            if self.mode == "silent":
                self.closed.wait()
                return
            answer = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                      + str(len(ANSWER)).encode() + b"\r\n\r\n" + ANSWER)
            for byte in answer:
                conn.sendall(bytes([byte]))
                if self.closed.wait(self.interval):
                    return
        except OSError:
            return

    def close(self) -> None:
        self.closed.set()
        self.listener.close()
        for conn in self.connections:
            try:
                conn.close()
            except OSError:
                pass
