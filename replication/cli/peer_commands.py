"""Peers, queues and queue claims: ``add_peer``, ``remove_peer``, ``enable_peer``, ``disable_peer``,
``list_peers``, ``list_peer_configs``, ``peer_modification_enabled``, ``peer_modification_switch``,
``hbase_peer_doctor``, ``queues`` and ``failover claim`` (names from the HBase shell).

The peer commands act the same on hbrep's clusters and on a real HBase 2.x (``peer_storage``): when the
cluster key names a real HBase (no hbrep cluster recorded under the parent, and HBase's master,
``running`` or ``meta-region-server`` znode), every change is one of its master's procedures over
HBase's RPC (``replication/hbase``), applied at once by the master and its region servers; hbrep
never writes a real HBase's peer znodes itself (issue 49). A real HBase whose master is down refuses
the command with one line ("no active HBase master at <key>").
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import click
from kazoo.client import KazooClient

from replication.cli.common import CliContext, emit_json, json_option, pass_context
from replication.config import replication_disabled_reason
from replication.errors import HbrepError
from replication.hbase.master_admin import master_admin
from replication.hbase.master_peers import MasterPeerStorage
from replication.hbase.registry import names_real_hbase
from replication.hbase.shadow_peers import add_shadow_peer
from replication.secrets import refuse_plain_secrets
from replication.source.peer_protocol import configured_protocol
from replication.zk.client import connect, zk_options
from replication.zk.layout import ZNodePaths
from replication.zk.peer_config_edits import check_peer_config
from replication.zk.peer_storage import (
    ReplicationPeerConfig,
    ReplicationPeerStorage,
    hbase_table_cfs_string,
    parse_namespaces,
    parse_table_cfs,
)
from replication.zk.shadow_peer import is_shadow_peer

PEER_COLUMNS = (
    "PEER_ID",
    "CLUSTER_KEY",
    "ENDPOINT_CLASSNAME",
    "STATE",
    "REPLICATE_ALL",
    "NAMESPACES",
    "TABLE_CFS",
    "BANDWIDTH",
    "SERIAL",
)


@contextlib.contextmanager
def zk_session(ctx: CliContext) -> Iterator[tuple[KazooClient, ZNodePaths]]:
    """A connected client for the command's cluster (closed afterwards) and its znode paths."""
    zk = connect(ctx.cluster, **zk_options(ctx.conf))
    try:
        yield zk, ZNodePaths(ctx.conf, parent=ctx.cluster.znode_parent)
    finally:
        zk.stop()
        zk.close()


PeerStorage = ReplicationPeerStorage | MasterPeerStorage


@contextlib.contextmanager
def peer_storage(ctx: CliContext) -> Iterator[PeerStorage]:
    """The peers of the command's cluster: a real HBase's through its master's procedures, else hbrep's
    znodes (``ReplicationPeerStorage``). NoActiveMaster when the cluster is a real HBase whose master is down."""
    with zk_session(ctx) as (zk, paths):
        if names_real_hbase(zk, paths, ctx.conf):
            with master_admin(zk, paths, ctx.cluster, ctx.conf) as admin:
                yield MasterPeerStorage(admin)
        else:
            yield ReplicationPeerStorage(zk, paths)


def parse_config_items(peer_id: str, items: tuple[str, ...]) -> dict[str, str]:
    """``--config KEY=VALUE`` entries as a dict; one-line HbrepError for an entry without '=' (values are
    never echoed), a secret given in plain text, or a bad ``hbrep.peer.protocol``."""
    configuration = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise HbrepError("--config takes KEY=VALUE entries; one has no '=' (values are not echoed)")
        configuration[key.strip()] = value.strip()
    refuse_plain_secrets(configuration)
    configured_protocol(peer_id, configuration)  # UnknownPeerProtocol for a bad hbrep.peer.protocol
    return configuration


@click.command("add_peer")
@click.argument("peer_id")
@click.argument("cluster_key")
@click.option(
    "--state",
    type=click.Choice(["ENABLED", "DISABLED"], case_sensitive=False),
    default=None,
    help="ENABLED (default) or DISABLED; a --shadow peer is always DISABLED in HBase.",
)
@click.option("--table-cfs", default=None, help="Replicate only these: 't1:cf1,cf2;ns:t2:' (sets REPLICATE_ALL false).")
@click.option("--namespaces", default=None, help="Replicate whole namespaces: 'ns1,ns2' (sets REPLICATE_ALL false).")
@click.option("--bandwidth", type=click.IntRange(0), default=0, help="Bytes per second, 0 = unthrottled.")
@click.option("--serial", is_flag=True, help="Serial replication peer.")
@click.option(
    "--config",
    "config_items",
    multiple=True,
    metavar="KEY=VALUE",
    help="Peer configuration entry (repeatable). Secrets by reference only: "
    "hbrep.cluster.token.secret=env:NAME|file:/path|airflow-var:NAME|airflow-conn:ID (and hbrep.zk.auth.secret); "
    "hbrep.peer.protocol=hbase|hbrep names the protocol of the peer's region servers (found when not set).",
)
@click.option(
    "--shadow",
    is_flag=True,
    help="--cluster is a real HBase: add the peer there through its master's procedure, DISABLED and marked "
    "hbrep.peer.shadow=true, so HBase queues and keeps every WAL for it and hbrep's DAGs ship them.",
)
@click.option(
    "--rootdir",
    default=None,
    metavar="URI",
    help="With --shadow: HBase's hbase.rootdir as hbrep reads it (/path, file:///path or "
    "webhdfs://namenode:9870/hbase); needed once per HBase cluster.",
)
@click.option(
    "--thrift",
    default=None,
    metavar="HOST:PORT",
    help="With --shadow: the HBase cluster's Thrift server, through which verify and the GX checks read its tables.",
)
@pass_context
def add_peer(
    ctx: CliContext,
    peer_id: str,
    cluster_key: str,
    state: str | None,
    table_cfs: str | None,
    namespaces: str | None,
    bandwidth: int,
    serial: bool,
    config_items: tuple[str, ...],
    shadow: bool,
    rootdir: str | None,
    thrift: str | None,
) -> None:
    """Add a peer cluster; queues then track edits for it (refused when its id's old queues remain)."""
    if (rootdir or thrift) and not shadow:
        raise HbrepError("--rootdir and --thrift go with --shadow (they say where a real HBase source keeps its WALs)")
    if shadow and (state or "").upper() == "ENABLED":
        raise HbrepError("a --shadow peer is held DISABLED in HBase (HBase's own sources would ship it otherwise)")
    state = state or "ENABLED"
    configuration = parse_config_items(peer_id, config_items)
    cfs = parse_table_cfs(table_cfs) if table_cfs else None
    spaces = parse_namespaces(namespaces) if namespaces else None
    config = ReplicationPeerConfig(
        cluster_key=cluster_key,
        replicate_all=cfs is None and spaces is None,
        table_cfs=cfs,
        namespaces=spaces,
        bandwidth=bandwidth,
        serial=serial,
        configuration=configuration,
    )
    check_peer_config(config)  # HBase's checkPeerConfig: namespaces and table-cfs may not overlap
    if shadow:
        with zk_session(ctx) as (zk, paths):
            recorded = add_shadow_peer(ctx.cluster, zk, paths, peer_id, config, rootdir, thrift, ctx.conf)
        click.echo(
            f"peer {peer_id} added to HBase at {ctx.cluster} as a shadow peer ({cluster_key}, DISABLED in HBase; "
            f"hbrep ships it from {recorded})"
        )
        return
    with peer_storage(ctx) as storage:
        storage.add_peer(peer_id, config, enabled=state.upper() == "ENABLED")
    click.echo(f"peer {peer_id} added ({cluster_key}, {state.upper()})")
    disabled = replication_disabled_reason(ctx.conf) if isinstance(storage, ReplicationPeerStorage) else None
    if disabled:
        click.echo(f"warning: {disabled}; nothing is shipped to peer {peer_id} until it is true", err=True)


def _is_shadow(storage: PeerStorage, peer_id: str) -> bool:
    """True for an existing shadow peer (zk/shadow_peer.py), which only HBase's master may change."""
    return storage.peer_exists(peer_id) and is_shadow_peer(storage.get_peer_config(peer_id))


@click.command("remove_peer")
@click.argument("peer_id")
@pass_context
def remove_peer(ctx: CliContext, peer_id: str) -> None:
    """Remove a peer and every queue (normal and recovered) kept for it (on a real HBase, a shadow peer
    included, through its master's RemoveReplicationPeer procedure)."""
    with peer_storage(ctx) as storage:
        storage.remove_peer(peer_id)
    click.echo(f"peer {peer_id} removed")


def _set_state(ctx: CliContext, peer_id: str, enabled: bool) -> None:
    with peer_storage(ctx) as storage:
        if _is_shadow(storage, peer_id):
            raise HbrepError(
                f"peer {peer_id} is a shadow peer: HBase holds it DISABLED and hbrep ships it; to stop shipping, "
                "pause its ship DAG (or remove_peer)"
            )
        storage.set_peer_state(peer_id, enabled)
    click.echo(f"peer {peer_id} {'enabled' if enabled else 'disabled'}")


@click.command("enable_peer")
@click.argument("peer_id")
@pass_context
def enable_peer(ctx: CliContext, peer_id: str) -> None:
    """Resume shipping to a peer."""
    _set_state(ctx, peer_id, True)


@click.command("disable_peer")
@click.argument("peer_id")
@pass_context
def disable_peer(ctx: CliContext, peer_id: str) -> None:
    """Stop shipping to a peer (queues keep tracking its edits)."""
    _set_state(ctx, peer_id, False)


def _peer_row(peer_id: str, config: ReplicationPeerConfig, enabled: bool) -> dict[str, object]:
    """The HBase shell's list_peers row: with REPLICATE_ALL the exclude lists stand in NAMESPACES and
    TABLE_CFS (list_peers.rb); namespaces sorted and joined by ';'."""
    namespaces = config.exclude_namespaces if config.replicate_all else config.namespaces
    return {
        "PEER_ID": peer_id,
        "CLUSTER_KEY": config.cluster_key,
        "ENDPOINT_CLASSNAME": config.replication_endpoint_impl or "",
        "STATE": "ENABLED" if enabled else "DISABLED",
        "REPLICATE_ALL": str(config.replicate_all).lower(),
        "NAMESPACES": ";".join(sorted(namespaces or ())),
        "TABLE_CFS": hbase_table_cfs_string(config.exclude_table_cfs if config.replicate_all else config.table_cfs),
        "BANDWIDTH": config.bandwidth,
        "SERIAL": str(config.serial).lower(),
    }


def _peers(ctx: CliContext) -> list[tuple[str, ReplicationPeerConfig, bool]]:
    """Every peer with its config and state, sorted by id (a real HBase's from ListReplicationPeers)."""
    with peer_storage(ctx) as storage:
        if isinstance(storage, MasterPeerStorage):
            return [(p.peer_id, p.config, p.enabled) for p in storage.list_peers()]
        return [(pid, storage.get_peer_config(pid), storage.is_peer_enabled(pid)) for pid in storage.list_peer_ids()]


@click.command("list_peers")
@json_option
@pass_context
def list_peers(ctx: CliContext, as_json: bool) -> None:
    """The peers, as the HBase shell lists them."""
    rows = [_peer_row(pid, config, enabled) for pid, config, enabled in _peers(ctx)]
    if as_json:
        emit_json(rows)
        return
    table = [list(PEER_COLUMNS)] + [[str(row[c]) for c in PEER_COLUMNS] for row in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(PEER_COLUMNS))]
    for line in table:
        click.echo(" ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip())
    click.echo(f"{len(rows)} row(s)")


# -- peer modification switch (HBase 2.6) -----------------------------------------------------------------
@click.command("peer_modification_enabled")
@pass_context
def peer_modification_enabled(ctx: CliContext) -> None:
    """Print true or false: may peers be added, removed or changed (HBase 2.6's IsReplicationPeerModificationEnabled).
    An hbrep cluster has no such switch: its peers may always be changed (prints true)."""
    with peer_storage(ctx) as storage:
        enabled = (
            storage.admin.is_replication_peer_modification_enabled() if isinstance(storage, MasterPeerStorage) else True
        )
    click.echo(str(enabled).lower())


@click.command("peer_modification_switch")
@click.argument("on_off", metavar="on|off", type=click.Choice(["on", "off"], case_sensitive=False))
@pass_context
def peer_modification_switch(ctx: CliContext, on_off: str) -> None:
    """Allow (on) or refuse (off) peer changes on a real HBase 2.6 master (ReplicationPeerModificationSwitch);
    prints the previous value. Refused on an hbrep cluster, which has no such switch."""
    with peer_storage(ctx) as storage:
        if not isinstance(storage, MasterPeerStorage):
            raise HbrepError(
                f"peer_modification_switch: {ctx.cluster} is an hbrep cluster, which has no peer modification "
                "switch (its peers change only through hbrep's commands); it applies to a real HBase 2.6 master"
            )
        previous = storage.admin.replication_peer_modification_switch(on_off.lower() == "on")
    click.echo(f"peer modification switch {on_off.lower()} (was {'on' if previous else 'off'})")


# -- issue 49: peer znodes a running master does not know --------------------------------------------------
@click.command("hbase_peer_doctor")
@click.option("--fix", is_flag=True, help="Delete the peer znodes the master does not know (checked again first).")
@json_option
@pass_context
def hbase_peer_doctor(ctx: CliContext, fix: bool, as_json: bool) -> None:
    """On a real HBase: the peer znodes its master's ListReplicationPeers does not know (written behind
    the master's back), its peers without a znode, and its unfinished peer procedures; how to recover.
    Exit 3 while anything is wrong."""
    from replication.hbase.peer_doctor import diagnose, remove_orphans

    with zk_session(ctx) as (zk, paths):
        if not names_real_hbase(zk, paths, ctx.conf):
            raise HbrepError(
                f"hbase_peer_doctor is for a real HBase; {ctx.cluster} is not one (an hbrep cluster's peers are "
                "its znodes: list_peers shows them)"
            )
        with master_admin(zk, paths, ctx.cluster, ctx.conf) as admin:
            found = diagnose(zk, paths, admin)
            if fix and found.orphan_znodes:
                found.removed = remove_orphans(zk, paths, admin, found)
                removed = found.removed
                found = diagnose(zk, paths, admin)
                found.removed = removed
    if as_json:
        emit_json(found.as_dict())
    else:
        _print_diagnosis(found, ctx)
    if not found.healthy:
        raise click.exceptions.Exit(3)


def _print_diagnosis(found, ctx: CliContext) -> None:  # type: ignore[no-untyped-def]
    for peer_id in found.removed:
        click.echo(f"removed peer znode of {peer_id} (the master did not know it)")
    for peer_id, path in sorted(found.orphan_znodes.items()):
        click.echo(
            f"peer znode {path} exists but the master does not know peer {peer_id} (ListReplicationPeers): "
            f"remove it with `hbrep --cluster {ctx.cluster} hbase_peer_doctor --fix`, then add the peer through "
            f"the master (`hbrep add_peer {peer_id} ...`)"
        )
    for peer_id in found.master_only:
        click.echo(f"the master knows peer {peer_id} but its znode is missing: restart the master, or "
                   f"remove_peer {peer_id} and add it again")  # fmt: skip
    for proc in found.unfinished:
        click.echo(
            f"procedure {proc.proc_id} ({proc.class_name}, {proc.state}) is not finished: once the peer znodes "
            "above are removed it finishes at its next retry; if it does not, bypass it with HBCK2 "
            f"(`hbase hbck -j hbase-hbck2.jar bypass -o {proc.proc_id}`)"
        )
    if found.healthy:
        click.echo("every peer znode is known to the master and no peer procedure is pending")


@click.command("queues")
@json_option
@pass_context
def queues(ctx: CliContext, as_json: bool) -> None:
    """Every replicator's queues and WAL positions, laid out as in the HBase reference guide."""
    from replication.zk.queue_storage import ReplicationQueueStorage

    with zk_session(ctx) as (zk, paths):
        snap = ReplicationQueueStorage(zk, paths).snapshot()
    if as_json:
        emit_json(snap.as_dict())
        return
    click.echo(f"{paths.queues}/")
    for server in sorted(snap.replicators):
        click.echo(f"  {server}/")
        for queue_id in sorted(snap.replicators[server]):
            click.echo(f"    {queue_id}/")
            for wal, state in snap.replicators[server][queue_id].wals.items():
                click.echo(f"      {wal}  (position {state.position})")


@click.group(invoke_without_command=True)
@click.option("--once", is_flag=True, help="Claim the queues of every dead region server once.")
@json_option
@click.pass_context
def failover(click_ctx: click.Context, once: bool, as_json: bool) -> None:
    """Move the replication queues of dead region servers to live ones."""
    if click_ctx.invoked_subcommand is not None:
        return
    if not once:
        click.echo(click_ctx.get_help())
        return
    from replication.failover import failover_once

    ctx: CliContext = click_ctx.find_object(CliContext)
    with zk_session(ctx) as (zk, _paths):
        report = failover_once(zk, ctx.cluster, ctx.conf)
    if as_json:
        emit_json(report.as_dict())
        return
    if report.disabled:
        click.echo(f"no replication queue claimed: {report.disabled}")
    if report.mode == "hbase":
        click.echo("hbrep.failover.mode hbase: the source's HMaster moves dead servers' queues; hbrep claims none")
    if not report.servers:
        click.echo("no dead region servers")
    for server in report.servers:
        if server.action == "waiting":
            click.echo(f"{server.server}: dead, waiting {server.wait_ms} ms more (replication.sleep.before.failover)")
        elif server.action == "claimed":
            moves = ", ".join(f"{old} -> {server.claimer}/{new}" for old, new in server.moved.items())
            click.echo(f"{server.server}: {server.wals_moved} WALs moved: {moves or 'none'}")
            for dropped in server.dropped:
                click.echo(f"{server.server}: queue {dropped} dropped (its peer was removed)")
        else:
            click.echo(f"{server.server}: {server.action}" + (f" ({server.error})" if server.error else ""))
    if any(s.action in ("error", "no-live-server") for s in report.servers):
        raise click.exceptions.Exit(3)


@failover.command("claim")
@click.argument("dead_server")
@click.option("--by", "claimer", required=True, metavar="SERVER", help="The claiming server's name.")
@click.option("--wait", type=click.FloatRange(0), default=0.0, help="Seconds to wait for another claimer's lock.")
@click.option("--force", is_flag=True, help="Claim even if the server's live znode exists.")
@json_option
@pass_context
def claim(ctx: CliContext, dead_server: str, claimer: str, wait: float, force: bool, as_json: bool) -> None:
    """Claim DEAD_SERVER's queues for SERVER under the reference guide's lock protocol."""
    from replication.wal.names import ServerName
    from replication.zk.claim import claim_queues, lock_owner

    ServerName.parse(dead_server)  # one line naming a malformed name (InvalidWALName)
    ServerName.parse(claimer)
    with zk_session(ctx) as (zk, paths):
        peers = ReplicationPeerStorage(zk, paths)
        claimed = claim_queues(zk, paths, dead_server, claimer, peers.peer_exists, wait=wait, check_alive=not force)
        owner = None if claimed else lock_owner(zk, paths, dead_server)
    if as_json:
        emit_json(
            {
                "dead_server": dead_server,
                "claimer": claimer,
                "won": bool(claimed),
                "lock_owner": owner,
                "queues": [
                    {"old": q.old_queue_id, "new": q.new_queue_id, "deleted": q.deleted, "wals": q.wals}
                    for q in claimed
                ],
            }
        )
        return
    if not claimed:
        held = f" (lock held by {owner})" if owner else ""
        click.echo(f"nothing claimed from {dead_server}{held}")
    for q in claimed:
        if q.deleted:
            click.echo(f"deleted {q.old_queue_id} (peer {q.peer_id} no longer exists): {len(q.wals)} WAL(s)")
        else:
            click.echo(f"claimed {q.old_queue_id} -> {claimer}/{q.new_queue_id}: {len(q.wals)} WAL(s)")


COMMANDS = (
    add_peer, remove_peer, enable_peer, disable_peer, list_peers, peer_modification_enabled,
    peer_modification_switch, hbase_peer_doctor, queues, failover,
)  # fmt: skip
