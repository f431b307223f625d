"""JvmProcess against a real JVM (a ZooKeeper server from the jars pyspark ships)."""

from __future__ import annotations

import pytest

from replication.devstack.jvm import JvmProcess, JvmProcessError, pid_alive, port_accepts
from replication.net import free_port


def _zookeeper(tmp_path, port: int, heap_mb: int = 128) -> JvmProcess:
    from replication.devstack.zookeeper import zookeeper_classpath

    cfg = tmp_path / "zoo.cfg"
    cfg.write_text(
        f"tickTime=2000\ndataDir={tmp_path / 'data'}\nclientPort={port}\nclientPortAddress=127.0.0.1\n"
        "admin.enableServer=false\n"
    )
    return JvmProcess("zk", tmp_path / "state", "org.apache.zookeeper.server.ZooKeeperServerMain",
                      zookeeper_classpath(), args=[str(cfg)], heap_mb=heap_mb)  # fmt: skip


def test_start_ready_stop_leaves_nothing(tmp_path):
    port = free_port()
    jvm = _zookeeper(tmp_path, port)
    pid = jvm.start(lambda: port_accepts(port), timeout=60)
    try:
        assert jvm.running() and port_accepts(port)
        with pytest.raises(JvmProcessError, match="already runs"):
            jvm.spawn()
    finally:
        assert jvm.stop() is True
    assert not pid_alive(pid)
    assert not jvm.pid_file.exists()
    assert jvm.stop() is False


def test_kill_is_immediate(tmp_path):
    port = free_port()
    jvm = _zookeeper(tmp_path, port)
    pid = jvm.start(lambda: port_accepts(port), timeout=60)
    jvm.kill()
    assert not pid_alive(pid) and not jvm.pid_file.exists()


def test_jvm_that_dies_is_one_error_with_the_log_tail(tmp_path):
    jvm = _zookeeper(tmp_path, free_port(), heap_mb=1)  # the JVM refuses a 1 MB heap
    with pytest.raises(JvmProcessError, match="zk exited with code") as info:
        jvm.start(lambda: False, timeout=30)
    assert "log tail" in str(info.value)


def test_not_ready_in_time_is_stopped(tmp_path):
    jvm = _zookeeper(tmp_path, free_port())
    with pytest.raises(JvmProcessError, match="zk was not ready within 2s"):
        jvm.start(lambda: False, timeout=2)
    assert not jvm.running()
