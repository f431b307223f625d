from __future__ import annotations

import logging

from replication.config import Config
from replication.zk.layout import ZNodePaths
from replication.zk.queue_info import ReplicationQueueInfo, recovered_queue_id


def test_normal_queue():
    info = ReplicationQueueInfo.parse("2")
    assert (info.peer_id, info.is_recovered, info.dead_region_servers, info.owner_of_wals) == ("2", False, [], None)


def test_recovered_chain_keeps_order():
    qid = recovered_queue_id(recovered_queue_id("2", "1.1.1.2,60020,123456790"), "1.1.1.3,60020,123456630")
    assert qid == "2-1.1.1.2,60020,123456790-1.1.1.3,60020,123456630"
    info = ReplicationQueueInfo.parse(qid)
    assert info.peer_id == "2" and info.is_recovered
    assert info.dead_region_servers == ["1.1.1.2,60020,123456790", "1.1.1.3,60020,123456630"]
    assert info.owner_of_wals == "1.1.1.2,60020,123456790"


def test_hyphenated_hostnames():
    qid = "peer1-ip-10-46-221-101.ec2.internal,52170,1364333181125-ip-10-46-221-102.ec2.internal,52170,1364333181126"
    info = ReplicationQueueInfo.parse(qid)
    assert info.dead_region_servers == [
        "ip-10-46-221-101.ec2.internal,52170,1364333181125",
        "ip-10-46-221-102.ec2.internal,52170,1364333181126",
    ]


def test_bad_parts_are_skipped_with_a_warning(caplog):
    with caplog.at_level(logging.WARNING):
        info = ReplicationQueueInfo.parse("2-host,abc,1-1.1.1.3,60020,5")
    assert info.dead_region_servers == ["1.1.1.3,60020,5"]
    assert "host,abc,1" in caplog.text


def test_layout_follows_config_keys():
    conf = Config.load(env={}).with_overrides(
        {
            "zookeeper.znode.replication": "repl",
            "zookeeper.znode.replication.rs": "queues",
            "zookeeper.znode.rs": "live",
        }
    )
    paths = ZNodePaths(conf, parent="/hb")
    assert paths.queues == "/hb/repl/queues"
    assert paths.live_server("s,1,2") == "/hb/live/s,1,2"
    assert paths.peer_state("7") == "/hb/repl/peers/7/peer-state"
    assert paths.wal("s,1,2", "7", "w.1") == "/hb/repl/queues/s,1,2/7/w.1"
    assert paths.hbaseid == "/hb/hbaseid"
    assert ZNodePaths(conf).parent == "/hbase"
