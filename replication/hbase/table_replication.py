"""``list_replicated_tables``, ``enable_table_replication``, ``disable_table_replication`` on a real HBase,
through its master (GetTableDescriptors, ModifyTable), as HBase's ``ReplicationAdmin`` does them.

enable first makes sure every peer has the table with the same families and VERSIONS
(``compareForReplication``): a peer lacking it gets it (an hbrep peer through its descriptor files, a
real HBase peer through its master's CreateTable); a peer whose table differs refuses the whole command
before anything is changed. Then every family of the source's table gets REPLICATION_SCOPE 1.
"""

from __future__ import annotations

from replication.cluster.errors import NoClusterInfo
from replication.config import Config
from replication.errors import HbrepError
from replication.fs import get_filesystem
from replication.hbase.master_admin import MasterAdmin, master_admin, table_name_str
from replication.hbase.registry import names_real_hbase
from replication.hbase.table_schemas import descriptor_of, schema_of, scope_of, with_scope
from replication.kerberos import kerberos_identity
from replication.tables.descriptors import TableDescriptor, TableRegistry
from replication.tls import zk_client_tls
from replication.zk.client import connected
from replication.zk.cluster_key import ClusterKey
from replication.zk.layout import ZNodePaths


class TableDiffersOnPeer(HbrepError):
    """The peer's table has other families or VERSIONS than the source's."""


def replicated_families(admin: MasterAdmin) -> list[tuple[str, str, int]]:
    """(table, family, scope) of every user family whose REPLICATION_SCOPE is not 0, sorted."""
    rows = []
    for schema in admin.get_table_descriptors():
        for family in schema.column_families:
            scope = scope_of(family)
            if scope:
                rows.append((table_name_str(schema.table_name), family.name.decode(), scope))
    return sorted(rows)


def set_table_scope(admin: MasterAdmin, table: str, scope: int) -> None:
    """ModifyTable with REPLICATION_SCOPE ``scope`` on every family (other settings kept)."""
    admin.modify_table(with_scope(admin.get_table_descriptor(table), scope))


def _same_schema(ours: TableDescriptor, theirs: TableDescriptor) -> bool:
    return {n: f.max_versions for n, f in ours.families.items()} == {
        n: f.max_versions for n, f in theirs.families.items()
    }


def _differs(table: str, peer_id: str) -> TableDiffersOnPeer:
    return TableDiffersOnPeer(
        f"Table {table} exists in peer cluster {peer_id}, but the table descriptors are not same when "
        "compared with source cluster. Thus can not enable the table's replication switch."
    )


def _peer_needs_table(peer_id: str, key: ClusterKey, conf: Config, desc: TableDescriptor) -> bool:
    """True when the peer at ``key`` lacks the table; TableDiffersOnPeer when its table differs."""
    with connected(key, timeout=15.0, tls=zk_client_tls(conf), kerberos=kerberos_identity(conf)) as zk:
        paths = ZNodePaths(conf, parent=key.znode_parent)
        if names_real_hbase(zk, paths, conf):
            with master_admin(zk, paths, key, conf) as peer:
                if not peer.table_exists(desc.name):
                    return True
                theirs = descriptor_of(peer.get_table_descriptor(desc.name))
        else:
            registry = _hbrep_registry(zk, paths, peer_id, key, desc.name)
            if not registry.exists(desc.name):
                return True
            theirs = registry.get(desc.name)
    if not _same_schema(desc, theirs):
        raise _differs(desc.name, peer_id)
    return False


def _hbrep_registry(zk, paths: ZNodePaths, peer_id: str, key: ClusterKey, table: str) -> TableRegistry:  # type: ignore[no-untyped-def]
    from replication.cluster.info import read_cluster_info

    try:
        info = read_cluster_info(zk, paths)
    except NoClusterInfo:
        raise HbrepError(
            f"peer {peer_id} at {key} is neither an hbrep cluster nor a real HBase: create table {table} there, "
            "or remove the peer, then run enable_table_replication again"
        ) from None
    fs, root = get_filesystem(info.root)
    return TableRegistry(fs, root)


def _create_on_peer(key: ClusterKey, conf: Config, desc: TableDescriptor, peer_id: str) -> bool:
    """Create the table on the peer unless it has it by now (two peers may name one cluster); True if created."""
    with connected(key, timeout=15.0, tls=zk_client_tls(conf), kerberos=kerberos_identity(conf)) as zk:
        paths = ZNodePaths(conf, parent=key.znode_parent)
        if names_real_hbase(zk, paths, conf):
            with master_admin(zk, paths, key, conf) as peer:
                if peer.table_exists(desc.name):
                    return False
                peer.create_table(schema_of(desc))
                return True
        registry = _hbrep_registry(zk, paths, peer_id, key, desc.name)
        if registry.exists(desc.name):
            return False
        registry.create(desc)
        return True


def enable_table_replication(admin: MasterAdmin, conf: Config, table: str) -> list[str]:
    """Create ``table`` on every peer lacking it, then scope 1 on all its families; the peers it was created on."""
    schema = admin.get_table_descriptor(table)
    desc = descriptor_of(schema)
    missing = []
    for peer in admin.list_replication_peers():
        key = ClusterKey.parse(peer.config.cluster_key)
        if _peer_needs_table(peer.peer_id, key, conf, desc):
            missing.append((peer.peer_id, key))
    created = [peer_id for peer_id, key in missing if _create_on_peer(key, conf, desc, peer_id)]
    admin.modify_table(with_scope(schema, 1))
    return created
