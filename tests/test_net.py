"""The shared port check: taken only while something listens or is bound, never for TIME-WAIT leftovers."""

from __future__ import annotations

import socket

from replication.net import free_port, port_in_use


def _time_wait_on(port: int) -> None:
    """Leave a connection of a closed server in TIME-WAIT on ``port`` (the server side closes first)."""
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen()
        client = socket.create_connection(("127.0.0.1", port))
        accepted, _ = listener.accept()
        accepted.close()  # the server closes first: its end goes to TIME-WAIT once the client closes too
        client.recv(1)
        client.close()


def _states_on(port: int) -> set[str]:
    """The TCP states /proc/net/tcp lists with local port ``port`` (01 ESTABLISHED, 06 TIME_WAIT, 0A LISTEN)."""
    states = set()
    with open("/proc/net/tcp") as table:
        for line in table.readlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            if int(local.split(":")[1], 16) == port:
                states.add(state)
    return states


def test_listener_counts_as_taken():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        assert port_in_use(sock.getsockname()[1]) is True


def test_time_wait_alone_is_free():
    port = free_port()
    _time_wait_on(port)
    assert _states_on(port) == {"06"}, "the test needs a TIME-WAIT connection and nothing else on the port"
    assert port_in_use(port) is False


def test_free_port_is_free():
    assert port_in_use(free_port()) is False
