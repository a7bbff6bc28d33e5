"""Free loopback ports for the servers the tests start."""

from __future__ import annotations

import socket


def free_ports(count: int) -> list[int]:
    """``count`` distinct loopback ports free now (held together while chosen, so no two are the same)."""
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket()
            sock.bind(("127.0.0.1", 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def free_port() -> int:
    """A loopback port free now (nothing listens on it until a server binds it)."""
    return free_ports(1)[0]
