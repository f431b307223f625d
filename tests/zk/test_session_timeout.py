"""``zookeeper.session.timeout`` is the session timeout of every hbrep ZooKeeper client (replication/zk/client.py):
a client process that dies keeps its ephemeral znodes (a region server's ``rs`` node, a claim's lock) for as
long as the configured timeout, no longer. Real ZooKeeper (tick 2 s: sessions of 4 s to 40 s), a real
client process killed with SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

from replication.config import Config
from replication.zk.client import connected, session_timeout_s, zk_options

CHILD = textwrap.dedent(
    """
    import sys, time
    from replication.zk.client import connect
    zk = connect(sys.argv[1])
    zk.create(sys.argv[2], b"", ephemeral=True, makepath=True)
    print(round(zk._session_timeout / 1000.0, 1), flush=True)
    time.sleep(600)
    """
)


def _ephemeral_lifetime(cluster_key: str, node: str, timeout_ms: int, watch_s: float) -> tuple[float, float | None]:
    """(the session timeout ZooKeeper granted the child, seconds its ephemeral node outlived its SIGKILL
    or None when it was still there after ``watch_s``)."""
    env = {**os.environ, "HBREP__zookeeper__session__timeout": str(timeout_ms)}
    env.pop("HBREP_CONF", None)
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, cluster_key, node], env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        granted = float(child.stdout.readline())
        with connected(cluster_key, session_timeout=4.0) as zk:
            assert zk.exists(node)
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=30)
            killed = time.monotonic()
            while zk.exists(node):
                if time.monotonic() - killed > watch_s:
                    return granted, None
                time.sleep(0.1)
            return granted, time.monotonic() - killed
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(timeout=30)


def test_the_configured_session_timeout_is_what_a_dead_clients_ephemeral_node_outlives_it_by(cluster_key):
    parent = cluster_key.rsplit(":", 1)[1]
    granted, short = _ephemeral_lifetime(cluster_key, f"{parent}/rs/short", 4000, 30)
    assert granted == 4.0 and short is not None and short < 9  # gone within the 4 s session (+ ZK's tick)
    granted, long = _ephemeral_lifetime(cluster_key, f"{parent}/rs/long", 16000, 10)
    assert granted == 16.0 and long is None  # a 16 s session: still there 10 s after its client died


def test_zk_options_carry_the_configured_timeout():
    conf = Config.load(env={}, overrides={"zookeeper.session.timeout": 7000})
    assert zk_options(conf)["session_timeout"] == 7.0 == session_timeout_s(conf)
    assert session_timeout_s(Config.load(env={})) == 90.0  # HBase's default
