"""Loopback ports for the processes hbrep starts: pick a free one, and tell whether one is taken.

One check serves every component (ZooKeeper, region servers, Airflow, and the JVMs of the dev stack),
so that a port counts as taken only when something holds it: a listener, or a socket bound to it.
Connections of an old server left in TIME-WAIT do not count: the check binds with SO_REUSEADDR, as
ZooKeeper, gRPC and uvicorn do themselves, so `stop` followed at once by `start` on the same port works.
"""

from __future__ import annotations

import socket

LOOPBACK = "127.0.0.1"


def free_port(host: str = LOOPBACK) -> int:
    """A TCP port on ``host`` that was free a moment ago (bind to 0 and read it back)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def port_in_use(port: int, host: str = LOOPBACK) -> bool:
    """True when something listens on (or is bound to) host:port; TIME-WAIT leftovers do not count."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return True
    return False
