"""Replication peers in ZooKeeper (``ZKReplicationPeerStorage``, ``ReplicationPeerConfig``; spec §3.1, §4.2).

``<parent>/replication/peers/<id>`` holds ``PBUF`` + ReplicationPeer; its child ``peer-state`` holds
``PBUF`` + ReplicationState. 0.94's plain cluster-key string and ``ENABLED``/``DISABLED`` are read too.
"""

from __future__ import annotations

import contextlib
import posixpath
import re
from dataclasses import dataclass, field

from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError, NodeExistsError, NoNodeError

from replication.errors import HbrepError
from replication.proto import HBase_pb2, Replication_pb2
from replication.secrets import refuse_plain_secrets
from replication.tables.names import TableName, validate_family_name
from replication.zk import codec
from replication.zk.acl import acl_for, zk_access
from replication.zk.cluster_id import ClusterIdNotFound, read_cluster_id
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths
from replication.zk.queue_info import ReplicationQueueInfo
from replication.zk.queue_storage import ReplicationQueueStorage

DEFAULT_NAMESPACE = "default"
_PEER_ID = re.compile(r"[^\s/\-]+")


class BadPeerId(HbrepError):
    """A peer id HBase refuses (empty, or containing '-', '/' or blanks)."""


class PeerNotFound(HbrepError):
    """No peer with that id."""


class PeerIsSelf(HbrepError):
    """add_peer of the source cluster itself (same cluster id)."""


def _same_ensemble(ours: tuple[tuple[str, int], ...], theirs: list[tuple[str, int]]) -> bool:
    def normal(host: str) -> str:
        lowered = host.lower()
        return "127.0.0.1" if lowered == "localhost" else lowered

    return bool({(normal(h), p) for h, p in ours} & {(normal(h), int(p)) for h, p in theirs})


class PeerExists(HbrepError):
    """A peer with that id already exists."""


class PeerQueuesLeftOver(HbrepError):
    """A peer id cannot be reused while queues of the old peer with that id remain (checkQueuesDeleted)."""


def normalize_table(name: str) -> str:
    """HBase's table string: ``t1`` in the default namespace, ``ns:t1`` otherwise."""
    namespace, sep, qualifier = name.partition(":")
    if sep and namespace == DEFAULT_NAMESPACE:
        return qualifier
    return name


def split_table(name: str) -> tuple[str, str]:
    """``(namespace, qualifier)`` of a table string (namespace ``default`` when none)."""
    namespace, sep, qualifier = name.partition(":")
    return (namespace, qualifier) if sep else (DEFAULT_NAMESPACE, name)


def parse_table_cfs(spec: str) -> dict[str, list[str]]:
    """Parse ``t1:cf1,cf2;ns:t2;ns:t3:cf`` (``;`` between tables; 3 ``:`` parts = ns:table:cfs).

    ``t:cf`` names families of a default-namespace table; a namespaced table with all families is
    ``ns:t:`` (empty family list). Raises HbrepError naming the bad part.
    """
    result: dict[str, list[str]] = {}
    for part in filter(None, (p.strip() for p in spec.split(";"))):
        pieces = part.split(":")
        if len(pieces) == 1:
            table, cfs = pieces[0], ""
        elif len(pieces) == 2:
            table, cfs = pieces[0], pieces[1]
        elif len(pieces) == 3:
            table, cfs = f"{pieces[0]}:{pieces[1]}", pieces[2]
        else:
            raise HbrepError(f"bad table-cfs entry {part!r}: expected [ns:]table[:cf1,cf2]")
        if not table or table.startswith(":") or table.endswith(":"):
            raise HbrepError(f"bad table-cfs entry {part!r}: empty table name")
        families = [c.strip() for c in cfs.split(",") if c.strip()]
        _check_names(part, table, families)
        result.setdefault(normalize_table(table), []).extend(families)
    return result


def _check_names(part: str, table: str, families: list[str]) -> None:
    """HBase refuses illegal table and family names in a peer's table-cfs (TableName.valueOf)."""
    try:
        TableName.parse(table)
        for family in families:
            validate_family_name(family, table)
    except HbrepError as exc:
        raise HbrepError(f"bad table-cfs entry {part!r}: {exc}") from None


def parse_namespaces(spec: str) -> set[str]:
    """Parse ``ns1,ns2`` (a peer's NAMESPACES); HbrepError naming a name HBase would refuse."""
    names = {n.strip() for n in spec.split(",") if n.strip()}
    for name in sorted(names):
        if not re.fullmatch(r"[A-Za-z0-9_]+", name):
            raise HbrepError(f"bad namespace {name!r}: it may only contain [A-Za-z0-9_]")
    return names


def hbase_table_cfs_string(table_cfs: dict[str, list[str]] | None) -> str:
    """TABLE_CFS as the HBase shell's ``list_peers`` shows it: ``ReplicationPeerConfigUtil.convertToString``,
    ``ns.table[:cf1,cf2]`` joined by ``;``, the namespace always spelled out (``default.t1``).

    Checked against a real HBase 2.6 (tests/interop). One deliberate difference: tables come sorted by
    name as TableName compares them (HBase passes a HashMap, whose order means nothing).
    """
    if not table_cfs:
        return ""
    parts = []
    for table in sorted(table_cfs, key=lambda t: normalize_table(t).encode()):
        namespace, qualifier = split_table(table)
        cfs = table_cfs[table]
        parts.append(f"{namespace}.{qualifier}" + (f":{','.join(cfs)}" if cfs else ""))
    return ";".join(parts)


def format_table_cfs(table_cfs: dict[str, list[str]] | None) -> str:
    """The inverse of :func:`parse_table_cfs` (hbrep's ``--table-cfs`` spelling, ``t1:cf1,cf2; ns:t2``)."""
    if not table_cfs:
        return ""
    parts = []
    for table, cfs in sorted(table_cfs.items()):
        parts.append(f"{table}:{','.join(cfs)}" if cfs else table)
    return "; ".join(parts)


@dataclass
class ReplicationPeerConfig:
    """What to replicate to one peer cluster (the fields of HBase's ReplicationPeerConfig)."""

    cluster_key: str
    replicate_all: bool = True
    table_cfs: dict[str, list[str]] | None = None
    namespaces: set[str] | None = None
    exclude_table_cfs: dict[str, list[str]] | None = None
    exclude_namespaces: set[str] | None = None
    bandwidth: int = 0
    serial: bool = False
    configuration: dict[str, str] = field(default_factory=dict)
    replication_endpoint_impl: str | None = None
    # The ReplicationPeer message this configuration was read from (no PBUF magic), kept so that a rewrite
    # carries what hbrep does not model byte for byte: the peer data map (field 3,
    # ``ReplicationPeerConfig.getPeerData()``), ``remoteWALDir`` (field 12: synchronous replication, HBASE-19064,
    # in HBase 3; HBase 2.6's client does not have it) and any later field (kept by protobuf as unknown fields).
    # See :meth:`to_bytes`.
    _message: bytes | None = field(default=None, compare=False, repr=False)

    def need_to_replicate(self, table: str, family: str | None = None) -> bool:
        """``ReplicationPeerConfig.needToReplicate``: is this table (and family, if given) replicated?"""
        table = normalize_table(table)
        namespace = split_table(table)[0]
        if self.replicate_all:
            if self.exclude_namespaces and namespace in self.exclude_namespaces:
                return False
            excluded = {normalize_table(t): c for t, c in (self.exclude_table_cfs or {}).items()}
            if table not in excluded:
                return True
            cfs = excluded[table]
            return bool(cfs) and (family is None or family not in cfs)
        if self.namespaces is None and self.table_cfs is None:
            return False
        if self.namespaces and namespace in self.namespaces:
            return True
        wanted = {normalize_table(t): c for t, c in (self.table_cfs or {}).items()}
        if table not in wanted:
            return False
        cfs = wanted[table]
        return not cfs or family is None or family in cfs

    @property
    def peer_data(self) -> dict[bytes, bytes]:
        """``ReplicationPeerConfig.getPeerData()`` as read (hbrep does not change it)."""
        if self._message is None:
            return {}
        peer = Replication_pb2.ReplicationPeer()
        peer.ParseFromString(self._message)
        return {pair.first: pair.second for pair in peer.data}

    # -- bytes --------------------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        """``ReplicationPeerConfigUtil.toByteArray``: ``PBUF`` + ReplicationPeer.

        A configuration read from bytes is written back from the message it was read from: the fields
        whose modelled value changed are replaced, every other field (the peer data map, unknown fields
        such as ``remoteWALDir`` or later ones) is written as it was read. A message HBase (Java) wrote, in
        field-number order, comes back byte for byte when nothing changed.
        """
        fresh = self._fresh_message()
        if self._message is None:
            return codec.PB_MAGIC + fresh.SerializeToString()
        peer = Replication_pb2.ReplicationPeer()
        peer.ParseFromString(self._message)
        read = ReplicationPeerConfig._from_pb(peer)
        for attribute, name in _MODELLED_FIELDS:
            if getattr(self, attribute) == getattr(read, attribute):
                continue
            peer.ClearField(name)
            if name in _REPEATED_FIELDS:
                getattr(peer, name).extend(getattr(fresh, name))
            elif fresh.HasField(name):
                setattr(peer, name, getattr(fresh, name))
        return codec.PB_MAGIC + peer.SerializeToString()

    def _fresh_message(self) -> Replication_pb2.ReplicationPeer:
        """The ReplicationPeer of the modelled fields alone (a new peer's bytes)."""
        peer = Replication_pb2.ReplicationPeer(
            clusterkey=self.cluster_key,
            bandwidth=self.bandwidth,
            replicate_all=self.replicate_all,
            serial=self.serial,
        )
        if self.replication_endpoint_impl:
            peer.replicationEndpointImpl = self.replication_endpoint_impl
        for name, value in self.configuration.items():
            peer.configuration.add(name=name, value=value)
        _put_table_cfs(peer.table_cfs, self.table_cfs)
        peer.namespaces.extend(n.encode() for n in sorted(self.namespaces or ()))
        _put_table_cfs(peer.exclude_table_cfs, self.exclude_table_cfs)
        peer.exclude_namespaces.extend(n.encode() for n in sorted(self.exclude_namespaces or ()))
        return peer

    @classmethod
    def from_bytes(cls, data: bytes, what: str = "peer") -> ReplicationPeerConfig:
        """``parsePeerFrom``: the PBUF protobuf, or a legacy plain cluster-key string."""
        data = codec.strip_metadata(data) or b""
        if not data.startswith(codec.PB_MAGIC):
            return cls(cluster_key=data.decode("utf-8", "replace"))
        peer = codec._parse(Replication_pb2.ReplicationPeer, data, what)
        try:
            config = cls._from_pb(peer)
            config._message = data[len(codec.PB_MAGIC) :]
            return config
        except UnicodeDecodeError:  # found by fuzzing: table or namespace names that are not UTF-8
            raise codec.BadZNodeData(f"{what}: a table or namespace name in the peer is not UTF-8") from None

    @classmethod
    def _from_pb(cls, peer: Replication_pb2.ReplicationPeer) -> ReplicationPeerConfig:
        return cls(
            cluster_key=peer.clusterkey,
            # replicate_all is always written by 2.x; a 1.x peer without it replicated everything
            # unless it listed table-cfs or namespaces (ReplicationPeerConfigUpgrader's rule).
            replicate_all=peer.replicate_all
            if peer.HasField("replicate_all")
            else not (peer.table_cfs or peer.namespaces),
            table_cfs=_get_table_cfs(peer.table_cfs),
            namespaces={n.decode() for n in peer.namespaces} or None,
            exclude_table_cfs=_get_table_cfs(peer.exclude_table_cfs),
            exclude_namespaces={n.decode() for n in peer.exclude_namespaces} or None,
            bandwidth=peer.bandwidth,
            serial=peer.serial,
            configuration={p.name: p.value for p in peer.configuration},
            replication_endpoint_impl=peer.replicationEndpointImpl or None,
        )


# (dataclass attribute, ReplicationPeer field) of every field hbrep models; to_bytes rewrites only these
_MODELLED_FIELDS = (
    ("cluster_key", "clusterkey"),
    ("replication_endpoint_impl", "replicationEndpointImpl"),
    ("configuration", "configuration"),
    ("table_cfs", "table_cfs"),
    ("namespaces", "namespaces"),
    ("bandwidth", "bandwidth"),
    ("replicate_all", "replicate_all"),
    ("exclude_table_cfs", "exclude_table_cfs"),
    ("exclude_namespaces", "exclude_namespaces"),
    ("serial", "serial"),
)
_REPEATED_FIELDS = {"configuration", "table_cfs", "namespaces", "exclude_table_cfs", "exclude_namespaces"}


def _put_table_cfs(target, table_cfs: dict[str, list[str]] | None) -> None:
    for table, cfs in sorted((table_cfs or {}).items()):
        namespace, qualifier = split_table(table)
        entry = target.add(table_name=HBase_pb2.TableName(namespace=namespace.encode(), qualifier=qualifier.encode()))
        entry.families.extend(cf.encode() for cf in cfs)


def _get_table_cfs(entries) -> dict[str, list[str]] | None:
    result: dict[str, list[str]] = {}
    for entry in entries:
        table = normalize_table(f"{entry.table_name.namespace.decode()}:{entry.table_name.qualifier.decode()}")
        result[table] = [cf.decode() for cf in entry.families]
    return result or None


def check_peer_id(peer_id: str) -> None:
    """Raise BadPeerId unless HBase would accept ``peer_id`` (no '-': it separates queue-id parts)."""
    if not _PEER_ID.fullmatch(peer_id or ""):
        raise BadPeerId(f"bad peer id {peer_id!r}: it must be non-empty, without '-', '/' or blanks")


class ReplicationPeerStorage:
    """Peers of one cluster in ZooKeeper: add, remove, enable, disable, read, list."""

    def __init__(self, zk: KazooClient, paths: ZNodePaths):
        self.zk = zk
        self.paths = paths
        self._acl = acl_for(zk)

    def add_peer(self, peer_id: str, config: ReplicationPeerConfig, enabled: bool = True) -> None:
        """Create the peer node and its peer-state in one multi.

        Refuses (one-line HbrepError) a bad id, a malformed cluster key, a configuration holding a
        secret itself instead of a reference (``replication/secrets.py``: the peer znode is readable by
        every ZooKeeper client with access), an existing peer, and an id whose old queues are still
        present on any replicator (``checkQueuesDeleted``).
        """
        check_peer_id(peer_id)
        ClusterKey.parse(config.cluster_key)
        refuse_plain_secrets(config.configuration)
        self._refuse_self(peer_id, config)
        with zk_access(self.paths.peers):
            if self.zk.exists(self.paths.peer(peer_id)):
                raise PeerExists(f"peer {peer_id} already exists")
            left = self._queues_of(peer_id)
            if left:
                server, queue_id = left[0]
                raise PeerQueuesLeftOver(
                    f"peer {peer_id}: {len(left)} queue(s) of an earlier peer with this id remain "
                    f"(e.g. {self.paths.queue(server, queue_id)}); remove them first"
                )
            self.zk.ensure_path(self.paths.peers, acl=self._acl)
            tx = self.zk.transaction()
            tx.create(self.paths.peer(peer_id), config.to_bytes(), acl=self._acl)
            tx.create(self.paths.peer_state(peer_id), codec.peer_state_to_bytes(enabled), acl=self._acl)
            results = tx.commit()
        if any(isinstance(r, NodeExistsError) for r in results):
            raise PeerExists(f"peer {peer_id} already exists")
        for result in results:
            if isinstance(result, Exception):
                raise HbrepError(f"adding peer {peer_id} failed: {type(result).__name__}")

    def _refuse_self(self, peer_id: str, config: ReplicationPeerConfig) -> None:
        """HBase's ReplicationPeerManager.checkSameClusterKey: PeerIsSelf when the peer's cluster id is
        this cluster's, for the default endpoint (a custom one may replicate to its own cluster).

        Departure: HBase opens a session to the peer's ZooKeeper and refuses the peer when it cannot read
        its id ("Can't get peerClusterId"); hbrep lets a peer be added before its cluster runs, so the id
        is compared when the peer's parent is on this session's ensemble (one cluster = one ZooKeeper
        namespace) and has an id.
        """
        impl = config.replication_endpoint_impl
        if impl and not impl.endswith("HBaseInterClusterReplicationEndpoint"):
            return
        key = ClusterKey.parse(config.cluster_key)
        if self.zk.chroot or not _same_ensemble(key.servers, self.zk.hosts):
            return
        peer_hbaseid = posixpath.join(key.znode_parent, posixpath.relpath(self.paths.hbaseid, self.paths.parent))
        try:
            local = read_cluster_id(self.zk, self.paths)
            data, _ = self.zk.get(peer_hbaseid)
        except (ClusterIdNotFound, NoNodeError, NoAuthError):
            # no id yet, or one this session may not read: the peer's znodes are not this cluster's
            # (this cluster's own id is readable with these credentials)
            return
        if codec.parse_cluster_id(data, peer_hbaseid) == local:
            raise PeerIsSelf(
                f"peer {peer_id}: Invalid cluster key: {config.cluster_key}, "
                "should not replicate to itself for HBaseInterClusterReplicationEndpoint"
            )

    def remove_peer(self, peer_id: str) -> None:
        """Delete the peer (recursively), then its normal and recovered queues on every replicator."""
        with zk_access(self.paths.peer(peer_id)):  # a refusal names the peer's znode, which its ACL guards
            if not self.zk.exists(self.paths.peer(peer_id)):
                raise PeerNotFound(f"peer {peer_id} does not exist")
            self.zk.delete(self.paths.peer(peer_id), recursive=True)
        with zk_access(self.paths.peers):
            queues = ReplicationQueueStorage(self.zk, self.paths)
            for server, queue_id in self._queues_of(peer_id):
                queues.delete_queue(server, queue_id)  # journaled (journal.py)
            with contextlib.suppress(NoNodeError):
                self.zk.delete(self.paths.hfile_refs_of(peer_id), recursive=True)
            self._remove_last_pushed_sequence_ids(peer_id)
            for hbrep_node in (self.paths.lag_targets(peer_id), self.paths.replicated_through(peer_id)):
                with contextlib.suppress(NoNodeError):
                    self.zk.delete(hbrep_node)

    def remove_peer_znode(self, peer_id: str) -> bool:
        """Delete only the peer's znode (recursively: its state with it), leaving queues and everything else:
        for a peer written behind a running HBase master's back, which the master never listed
        (``hbrep hbase_peer_doctor --fix``). False when it was gone already."""
        path = self.paths.peer(peer_id)
        with zk_access(path):
            try:
                self.zk.delete(path, recursive=True)
            except NoNodeError:
                return False
        return True

    def _remove_last_pushed_sequence_ids(self, peer_id: str) -> None:
        """Delete the peer's ``regions/../..-<peerId>`` znodes, as HBase's removePeer does
        (ZKReplicationQueueStorage.removeLastSequenceIds): a serial peer of a real HBase source leaves them."""
        suffix = f"-{peer_id}"
        for first in _children(self.zk, self.paths.regions):
            level1 = f"{self.paths.regions}/{first}"
            for second in _children(self.zk, level1):
                level2 = f"{level1}/{second}"
                for name in _children(self.zk, level2):
                    if name.endswith(suffix):
                        with contextlib.suppress(NoNodeError):
                            self.zk.delete(f"{level2}/{name}")

    def set_peer_state(self, peer_id: str, enabled: bool) -> None:
        """Write ENABLED/DISABLED to the peer-state znode (PeerNotFound when there is no such peer)."""
        with zk_access(self.paths.peer(peer_id)):
            try:
                self.zk.set(self.paths.peer_state(peer_id), codec.peer_state_to_bytes(enabled))
            except NoNodeError:
                raise PeerNotFound(f"peer {peer_id} does not exist") from None

    def is_peer_enabled(self, peer_id: str) -> bool:
        """True when the peer-state znode says ENABLED."""
        path = self.paths.peer_state(peer_id)
        with zk_access(path):
            try:
                data, _ = self.zk.get(path)
            except NoNodeError:
                raise PeerNotFound(f"peer {peer_id} does not exist") from None
        return codec.parse_peer_state(data, path)

    def get_peer_config(self, peer_id: str) -> ReplicationPeerConfig:
        """The peer's configuration (PeerNotFound when there is no such peer)."""
        path = self.paths.peer(peer_id)
        with zk_access(path):
            try:
                data, _ = self.zk.get(path)
            except NoNodeError:
                raise PeerNotFound(f"peer {peer_id} does not exist") from None
        return ReplicationPeerConfig.from_bytes(data, path)

    def peer_exists(self, peer_id: str) -> bool:
        """True when the peer znode exists (a denied check names that znode)."""
        with zk_access(self.paths.peer(peer_id)):
            return self.zk.exists(self.paths.peer(peer_id)) is not None

    def list_peer_ids(self) -> list[str]:
        """Every peer id, sorted ([] when the peers znode does not exist yet)."""
        with zk_access(self.paths.peers):
            try:
                return sorted(self.zk.get_children(self.paths.peers))
            except NoNodeError:
                return []

    def _queues_of(self, peer_id: str) -> list[tuple[str, str]]:
        found = []
        try:
            servers = self.zk.get_children(self.paths.queues)
        except NoNodeError:
            return []
        for server in servers:
            try:
                queue_ids = self.zk.get_children(self.paths.replicator(server))
            except NoNodeError:
                continue
            for queue_id in queue_ids:
                if queue_id != "lock" and ReplicationQueueInfo.parse(queue_id).peer_id == peer_id:
                    found.append((server, queue_id))
        return found


def _children(zk: KazooClient, path: str) -> list[str]:
    """The children of ``path``, none when it does not exist."""
    try:
        return zk.get_children(path)
    except NoNodeError:
        return []
