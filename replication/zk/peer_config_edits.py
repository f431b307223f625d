"""Changes to a peer's configuration with the HBase shell's names and HBase's rules.

Each function takes a :class:`ReplicationPeerConfig` and returns a new one; :func:`check_peer_config`
applies ``ReplicationPeerManager.checkPeerConfig``'s rules, and :meth:`ReplicationPeerStorage.update_peer_config`
stores the result (refusing a changed cluster key or endpoint, as ``preUpdatePeerConfig`` does). The
table-cfs merges follow ``ReplicationPeerConfigUtil.appendTableCFsToReplicationPeerConfig`` and
``removeTableCFsFromReplicationPeerConfig``: an empty family list means "every family".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from kazoo.exceptions import BadVersionError, NoNodeError

from replication.errors import HbrepError
from replication.zk.peer_storage import (
    PeerNotFound,
    ReplicationPeerConfig,
    ReplicationPeerStorage,
    hbase_table_cfs_string,
    normalize_table,
    split_table,
)

TableCfs = dict[str, list[str]]


class BadPeerConfig(HbrepError):
    """A peer configuration HBase would refuse (the message is HBase's reason)."""


def _norm(table_cfs: TableCfs | None) -> TableCfs:
    return {normalize_table(t): list(cfs) for t, cfs in (table_cfs or {}).items()}


def check_peer_config(config: ReplicationPeerConfig) -> None:
    """``ReplicationPeerManager.checkPeerConfig``: BadPeerConfig with HBase's reason when the lists clash."""
    if config.bandwidth < 0:
        raise BadPeerConfig(f"bandwidth must be at least 0, not {config.bandwidth}")
    if config.replicate_all:
        if config.namespaces or config.table_cfs:
            raise BadPeerConfig("Need clean namespaces or table-cfs config firstly when you want replicate all cluster")
        _check_conflict(config.exclude_namespaces, config.exclude_table_cfs, "exclude-")
    else:
        if config.exclude_namespaces or config.exclude_table_cfs:
            raise BadPeerConfig(
                "Need clean exclude-namespaces or exclude-table-cfs config firstly when replicate_all flag is false"
            )
        _check_conflict(config.namespaces, config.table_cfs, "")


def _check_conflict(namespaces: set[str] | None, table_cfs: TableCfs | None, prefix: str) -> None:
    """``checkNamespacesAndTableCfsConfigConflict``: a table may not be listed when its namespace is."""
    for table in sorted(_norm(table_cfs)):
        namespace = split_table(table)[0]
        if namespaces and namespace in namespaces:
            raise BadPeerConfig(
                f"Table-cfs {table} is conflict with namespaces {namespace} in peer config ({prefix}lists)"
            )


def set_table_cfs(config: ReplicationPeerConfig, table_cfs: TableCfs | None) -> ReplicationPeerConfig:
    """``set_peer_tableCFs``: replace the peer's table-cfs (None or empty clears them)."""
    return replace(config, table_cfs=_norm(table_cfs) or None)


def append_table_cfs(config: ReplicationPeerConfig, table_cfs: TableCfs) -> ReplicationPeerConfig:
    """``append_peer_tableCFs``: merge; a table with no family list (every family) stays or becomes one."""
    merged = _norm(config.table_cfs)
    for table, cfs in _norm(table_cfs).items():
        if table in merged and merged[table] and cfs:
            merged[table] = sorted(set(merged[table]) | set(cfs))
        else:
            merged[table] = [] if table in merged or not cfs else list(cfs)
    return replace(config, table_cfs=merged or None)


def remove_table_cfs(config: ReplicationPeerConfig, table_cfs: TableCfs, peer_id: str) -> ReplicationPeerConfig:
    """``remove_peer_tableCFs``, with HBase's refusals for a table or family that is not there."""
    current = _norm(config.table_cfs)
    for table, cfs in _norm(table_cfs).items():
        if table not in current:
            raise BadPeerConfig(f"No table: {table} in table-cfs config of peer: {peer_id}")
        have = current[table]
        if not cfs and have:
            raise BadPeerConfig(
                f"Cannot remove table: {table} which has specified cfs from table-cfs config in peer: {peer_id}"
            )
        if cfs and not have:
            raise BadPeerConfig(
                f"Cannot remove cf of table: {table} which doesn't specify cfs from table-cfs config in peer: {peer_id}"
            )
        left = [cf for cf in have if cf not in cfs]
        missing = [cf for cf in cfs if cf not in have]
        if missing:
            raise BadPeerConfig(f"No cf: {missing[0]} of table: {table} in table-cfs config of peer: {peer_id}")
        if left:
            current[table] = left
        else:
            del current[table]
    return replace(config, table_cfs=current or None)


def set_namespaces(config: ReplicationPeerConfig, namespaces: set[str] | None) -> ReplicationPeerConfig:
    """``set_peer_namespaces``: replace the peer's namespaces."""
    return replace(config, namespaces=set(namespaces or ()) or None)


def append_namespaces(config: ReplicationPeerConfig, namespaces: set[str]) -> ReplicationPeerConfig:
    """``append_peer_namespaces``."""
    return replace(config, namespaces=(set(config.namespaces or ()) | namespaces) or None)


def remove_namespaces(config: ReplicationPeerConfig, namespaces: set[str]) -> ReplicationPeerConfig:
    """``remove_peer_namespaces`` (a namespace that is not there is ignored, as HBase does)."""
    return replace(config, namespaces=(set(config.namespaces or ()) - namespaces) or None)


def set_exclude_table_cfs(config: ReplicationPeerConfig, table_cfs: TableCfs | None) -> ReplicationPeerConfig:
    """``set_peer_exclude_tableCFs`` (only meaningful with replicate_all)."""
    return replace(config, exclude_table_cfs=_norm(table_cfs) or None)


def set_exclude_namespaces(config: ReplicationPeerConfig, namespaces: set[str] | None) -> ReplicationPeerConfig:
    """``set_peer_exclude_namespaces`` (only meaningful with replicate_all)."""
    return replace(config, exclude_namespaces=set(namespaces or ()) or None)


def set_replicate_all(config: ReplicationPeerConfig, replicate_all: bool) -> ReplicationPeerConfig:
    """``set_peer_replicate_all``; the lists of the other mode must be cleared first (checkPeerConfig)."""
    return replace(config, replicate_all=replicate_all)


def set_bandwidth(config: ReplicationPeerConfig, bandwidth: int) -> ReplicationPeerConfig:
    """``set_peer_bandwidth``: bytes per second, 0 = unthrottled."""
    return replace(config, bandwidth=bandwidth)


def set_serial(config: ReplicationPeerConfig, serial: bool) -> ReplicationPeerConfig:
    """``set_peer_serial``."""
    return replace(config, serial=serial)


def update_configuration(config: ReplicationPeerConfig, entries: dict[str, str]) -> ReplicationPeerConfig:
    """``update_peer_config``'s CONFIG: entries added or replaced, the others kept."""
    return replace(config, configuration={**config.configuration, **entries})


def peer_config_string(config: ReplicationPeerConfig) -> str:
    """What the HBase shell's ``get_peer_config`` prints (ReplicationPeerConfig.toString's fields)."""
    parts = [f"clusterKey={config.cluster_key}", f"replicationEndpointImpl={config.replication_endpoint_impl or ''}"]
    parts.append(f"replicateAllUserTables={str(config.replicate_all).lower()}")
    if config.replicate_all:
        parts.append(f"excludeNamespaces={','.join(sorted(config.exclude_namespaces or ()))}")
        parts.append(f"excludeTableCFsMap={hbase_table_cfs_string(config.exclude_table_cfs)}")
    else:
        parts.append(f"namespaces={','.join(sorted(config.namespaces or ()))}")
        parts.append(f"tableCFs={hbase_table_cfs_string(config.table_cfs)}")
    parts.append(f"bandwidth={config.bandwidth}")
    parts.append(f"serial={str(config.serial).lower()}")
    return ",".join(parts)


def edit_peer_config(
    storage: ReplicationPeerStorage, peer_id: str, edit: Callable[[ReplicationPeerConfig], ReplicationPeerConfig]
) -> ReplicationPeerConfig:
    """Read the peer's configuration, apply ``edit``, check it and write it back (version-guarded: a
    concurrent change makes this read and apply again). Refuses, as ``preUpdatePeerConfig`` does, a
    changed cluster key or endpoint. Returns what was stored."""
    path = storage.paths.peer(peer_id)
    for _ in range(5):
        try:
            data, stat = storage.zk.get(path)
        except NoNodeError:
            raise PeerNotFound(f"peer {peer_id} does not exist") from None
        old = ReplicationPeerConfig.from_bytes(data, path)
        new = edit(old)
        if new.cluster_key != old.cluster_key:
            raise BadPeerConfig("Changing the cluster key on an existing peer is not allowed")
        if new.replication_endpoint_impl != old.replication_endpoint_impl:
            raise BadPeerConfig("Changing the replication endpoint implementation class is not allowed")
        check_peer_config(new)
        try:
            storage.zk.set(path, new.to_bytes(), version=stat.version)
            return new
        except BadVersionError:
            continue
        except NoNodeError:
            raise PeerNotFound(f"peer {peer_id} does not exist") from None
    raise HbrepError(f"peer {peer_id}: its configuration kept changing; try again")
