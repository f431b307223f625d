from __future__ import annotations

import logging
import random

import pytest

from replication.source.sink_manager import NoSinksAvailable, ReplicationSinkManager

SERVERS = [f"127.0.0.1,{16000 + i},1" for i in range(10)]


def test_ratio_subset_and_random_choice(caplog):
    manager = ReplicationSinkManager("2", lambda: list(SERVERS), 0.5, 3, random.Random(7))
    with caplog.at_level(logging.INFO):
        chosen = manager.choose_sinks()
        sink = manager.get_sink()
    assert len(chosen) == 5 and set(chosen) <= set(SERVERS)
    assert sink in chosen
    assert "Getting 5 rs from peer cluster # 2" in caplog.text
    assert f"Choosing peer {sink}" in caplog.text


def test_ratio_rounds_up():
    manager = ReplicationSinkManager("2", lambda: SERVERS[:3], 0.1, 3)
    assert len(manager.choose_sinks()) == 1


def test_bad_sink_dropped_after_threshold_and_success_resets():
    manager = ReplicationSinkManager("2", lambda: SERVERS[:4], 1.0, 2, random.Random(1))
    manager.choose_sinks()
    bad = manager.sinks[0]
    manager.report_bad_sink(bad)
    manager.report_bad_sink(bad)
    manager.report_sink_success(bad)
    manager.report_bad_sink(bad)
    manager.report_bad_sink(bad)
    assert bad in manager.sinks  # success reset the count
    manager.report_bad_sink(bad)
    assert bad not in manager.sinks


def test_all_sinks_bad_rechooses_and_changed_server_list_rechooses():
    servers = [SERVERS[:1]]
    manager = ReplicationSinkManager("2", lambda: servers[0], 1.0, 0)
    manager.choose_sinks()
    servers[0] = SERVERS[1:2]
    manager.report_bad_sink(SERVERS[0])
    assert manager.sinks == [SERVERS[1]]
    manager.notice_servers(SERVERS[2:3])
    servers[0] = SERVERS[2:3]
    assert manager.get_sink() == SERVERS[2]


def test_no_live_servers_is_clear_error():
    manager = ReplicationSinkManager("7", list, 0.5, 3)
    with pytest.raises(NoSinksAvailable, match="peer 7 has no live region server"):
        manager.get_sink()


def test_sink_choice_logs_the_reference_guides_lines_for_a_real_server_list(zk, caplog):
    # the peer's region servers as ephemeral znodes on the real ZooKeeper, read as the ship reads them
    for server in SERVERS[:3]:
        zk.create(f"/rs/{server}", b"", ephemeral=True, makepath=True)
    manager = ReplicationSinkManager("2", lambda: sorted(zk.get_children("/rs")), 0.1, 3, random.Random(3))
    with caplog.at_level(logging.INFO, logger="replication.source.sink_manager"):
        sink = manager.get_sink()
    assert [r.getMessage() for r in caplog.records] == [
        "Considering 3 rs, with ratio 0.1",
        "Getting 1 rs from peer cluster # 2",
        f"Choosing peer {sink}",
    ]
    assert sink in SERVERS[:3]
