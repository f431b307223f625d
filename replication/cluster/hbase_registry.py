"""The znodes through which a real HBase cluster finds hbrep's HBase RPC listeners (its peer's cluster key).

HBase 2.6.1's replication source reaches a peer only through the peer's ZooKeeper: it reads
``<parent>/hbaseid`` (``HBaseReplicationEndpoint.getPeerUUID`` → ``ZKClusterId``; the id its sink
writes into every WAL key and that stops loops) and the children of ``<parent>/rs``
(``fetchSlavesAddresses``), each a ServerName ``host,port,startcode`` whose port it then speaks
HBase's RPC to (``ReplicationSinkManager``, ``ClusterConnection.getAdmin(serverName)``).

hbrep's own ``<parent>/rs/<host,grpcPort,startcode>`` names the gRPC port: every hbrep client, the
WAL directories, the queues and the pid files use that server name. Rather than rename servers (and
make every hbrep client look the gRPC port up elsewhere) or put a byte-sniffing proxy in front of
gRPC (a copy of every hbrep RPC through Python), each region server registers its HBase RPC
listener in a second, HBase-shaped znode parent beside hbrep's own::

    <parent>/hbrep-hbase-rpc/hbaseid                          copy of <parent>/hbaseid (same cluster id)
    <parent>/hbrep-hbase-rpc/rs/<host,hbaseRpcPort,startcode>  ephemeral, one per live region server

So the cluster key to give HBase's ``add_peer`` is ``<quorum>:<port>:<parent>/hbrep-hbase-rpc``
(``hbase_cluster_key``). The start code is the region server's own, so both names of one server are
recognisably the same process.
"""

from __future__ import annotations

import dataclasses

from kazoo.client import KazooClient

from replication.zk.cluster_key import ClusterKey
from replication.zk.cluster_registration import HBaseRpcRegistry
from replication.zk.layout import ZNodePaths


def hbase_cluster_key(key: ClusterKey, paths: ZNodePaths) -> str:
    """The cluster key a real HBase cluster adds as its peer to replicate into this hbrep cluster."""
    return str(dataclasses.replace(key, znode_parent=paths.hbase_rpc))


def hbase_server_name(advertised_host: str, hbase_rpc_port: int, start_code: int) -> str:
    """The ServerName HBase reads for one listener: ``host,port,startcode``."""
    return f"{advertised_host},{hbase_rpc_port},{start_code}"


def register(zk: KazooClient, paths: ZNodePaths, server_name: str) -> None:
    """Copy the cluster id into ``<parent>/hbrep-hbase-rpc/hbaseid`` (once) and create the listener's
    ephemeral ``rs`` child (the region server's ZooKeeper session owns it)."""
    HBaseRpcRegistry(zk, paths).register(server_name)


def unregister(zk: KazooClient, paths: ZNodePaths, server_name: str) -> None:
    """Delete the listener's ``rs`` child (the stopping region server's)."""
    HBaseRpcRegistry(zk, paths).unregister(server_name)
