"""Which RPC a peer's region servers speak, and the sink client that speaks it.

- ``hbrep``: hbrep's own region servers (gRPC with HBase's messages, a cluster token; cluster/sink_client.py);
- ``hbase``: a real HBase 2.x cluster (HBase's own RPC, ``AdminService.ReplicateWALEntry``; hbase_rpc/).

How a peer's protocol is decided (at snapshot time, once per cycle, and recorded in the manifest):
1. the peer's configuration key ``hbrep.peer.protocol`` (``hbrep`` or ``hbase``), set with
   ``update_peer_config``, when present: an operator can always say it;
2. otherwise the peer cluster tells: an hbrep cluster records itself at ``<parent>/hbrep-cluster``
   (cluster/info.py) and HBase never writes that znode, so its absence means an HBase peer. This needs
   no setting for the common case and reads only what the snapshot already reads (the peer's
   ZooKeeper, for its cluster id and ``rs`` list), exactly as HBase's own source looks only at the
   peer's ZooKeeper to find its sinks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from kazoo.client import KazooClient

from replication.cluster.hbase_rpc.cell_block import check_codec
from replication.cluster.hbase_rpc.rpc_kerberos import rpc_kerberos
from replication.cluster.hbase_rpc.sink_client import HBaseSinkClient
from replication.cluster.hbase_rpc.tls import client_context
from replication.cluster.sink_client import SinkClient
from replication.config import Config
from replication.errors import HbrepError
from replication.tls import rpc_client_tls
from replication.zk.layout import cluster_info_path

PEER_PROTOCOL_KEY = "hbrep.peer.protocol"
HBREP = "hbrep"
HBASE = "hbase"
PROTOCOLS = (HBREP, HBASE)


class UnknownPeerProtocol(HbrepError):
    """The peer configuration names a protocol hbrep does not speak."""


def configured_protocol(peer_id: str, configuration: Mapping[str, str]) -> str | None:
    """The protocol the peer's configuration names, None when it names none; UnknownPeerProtocol for a bad value."""
    value = configuration.get(PEER_PROTOCOL_KEY, "").strip().lower()
    if not value:
        return None
    if value not in PROTOCOLS:
        choices = ", ".join(PROTOCOLS)
        raise UnknownPeerProtocol(f"peer {peer_id}: {PEER_PROTOCOL_KEY}={value!r} must be one of {choices}")
    return value


def detect_protocol(peer_zk: KazooClient, znode_parent: str) -> str:
    """``hbrep`` when the peer cluster has hbrep's cluster-info znode, else ``hbase``."""
    return HBREP if peer_zk.exists(cluster_info_path(znode_parent)) else HBASE


def sink_client_factory(
    protocol: str, conf: Config, source_hfile_dirs: tuple[str, str] | None = None
) -> Callable[[str, str, float], object] | None:
    """The endpoint's client factory ``(sink, token, timeout) → client`` for ``protocol`` (None: hbrep's default).
    An HBase peer's requests carry ``hbase.replication.cluster.id`` when set (else the source cluster's id);
    ``source_hfile_dirs`` (where a peer's sink copies bulk-loaded store files from) go to either kind of peer."""
    if protocol != HBASE:
        if source_hfile_dirs is None:
            return None
        tls_settings = rpc_client_tls(conf)
        rpc_codec = conf.get_str("hbase.replication.rpc.codec")

        def hbrep_factory(sink: str, token: str, timeout_s: float) -> SinkClient:
            return SinkClient(
                sink, token, timeout_s, tls=tls_settings, codec_class=rpc_codec, source_hfile_dirs=source_hfile_dirs
            )

        return hbrep_factory
    codec = check_codec(conf.get_str("hbase.replication.rpc.codec"))
    user = conf.get_str("hbrep.hbase.rpc.user", "") or None
    tls = client_context(conf)
    kerberos = rpc_kerberos(conf)
    replication_cluster_id = conf.get_str("hbase.replication.cluster.id", "")

    def factory(sink: str, _token: str, timeout_s: float) -> HBaseSinkClient:
        return HBaseSinkClient(
            sink, timeout_s, codec_class=codec, user=user, tls=tls,
            replication_cluster_id=replication_cluster_id, source_hfile_dirs=source_hfile_dirs, kerberos=kerberos,
        )  # fmt: skip

    return factory
