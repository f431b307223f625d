"""The sink RPC demands the cluster token; every server listens on loopback only."""

from __future__ import annotations

import time
import uuid

import psutil
import pytest

from replication.cluster.client import ClusterClient
from replication.cluster.embedded import server_pids
from replication.cluster.errors import SinkAuthError
from replication.cluster.sink_client import SinkClient
from replication.config import Config
from replication.fs import get_filesystem
from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry
from replication.wal.cell_codec import encode_cells
from replication.wal.model import Cell, CellType, WALKey
from tests.cluster.helpers import wal_entries
from tests.security.conftest import TOKEN

pytestmark = pytest.mark.slow


def batch() -> list:
    cells = [Cell(b"r1", b"f", b"q", 1000, int(CellType.PUT), b"v")]
    key = WALKey(b"0" * 32, b"t", 1, int(time.time() * 1000), {b"f": 1}, [uuid.uuid4()])
    return [(key, len(cells), encode_cells(cells))]


def test_sink_rejects_requests_without_or_with_a_wrong_token(secure):
    fs, root = get_filesystem(secure.root)
    if not TableRegistry(fs, root).exists("t"):
        TableRegistry(fs, root).create(TableDescriptor.of("t", ColumnFamilyDescriptor("f", scope=1)))
    sink = secure.servers[0]
    before = len(wal_entries(secure.root, sink))
    for token in ("", "wrong-token", TOKEN[:-1]):
        with SinkClient(sink, token) as client, pytest.raises(SinkAuthError) as caught:
            client.replicate(batch(), str(uuid.uuid4()))
        assert str(caught.value) == f"sink {sink} refused the cluster token (bad cluster token)"
        assert token not in str(caught.value) or not token
    assert len(wal_entries(secure.root, sink)) == before  # nothing was applied
    with SinkClient(sink, TOKEN) as client:
        client.replicate(batch(), str(uuid.uuid4()))
    assert len(wal_entries(secure.root, sink)) == before + 1
    # the client write path too: a client configured with another token is refused
    wrong = Config.load(env={}, overrides={"hbrep.zk.auth": secure.conf.get_str("hbrep.zk.auth"),
                                           "hbrep.cluster.token": "not-it"})  # fmt: skip
    refused = pytest.raises(Exception, match="refused the cluster token")
    with ClusterClient(secure.cluster_key, wrong) as client, refused:
        client.put("t", b"r2", b"f", b"q", b"v")
    assert len(wal_entries(secure.root, sink)) == before + 1


def listening(pid: int) -> list[tuple[str, int]]:
    """(ip, port) of every listening TCP socket of the process and its children."""
    procs = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
    found = []
    for proc in procs:
        for conn in proc.net_connections(kind="inet"):
            if conn.status == psutil.CONN_LISTEN:
                ip = conn.laddr.ip  # a JVM's IPv6 socket shows 127.0.0.1 as ::ffff:127.0.0.1
                found.append((ip.removeprefix("::ffff:"), conn.laddr.port))
    return found


def test_every_server_binds_to_loopback_only(secure, zk_server):
    zk_pid = zk_server.read_pid()
    assert zk_pid is not None
    zk_sockets = listening(zk_pid)
    assert ("127.0.0.1", zk_server.port) in zk_sockets
    assert {ip for ip, _ in zk_sockets} == {"127.0.0.1"}, zk_sockets
    pids = server_pids(secure.root)
    assert set(pids) >= set(secure.servers)
    for server in secure.servers:
        sockets = listening(pids[server])
        port = int(server.split(",")[1])
        assert ("127.0.0.1", port) in sockets, sockets
        assert {ip for ip, _ in sockets} == {"127.0.0.1"}, (server, sockets)
