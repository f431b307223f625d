"""Peers, queues and queue claims: ``add_peer``, ``remove_peer``, ``enable_peer``, ``disable_peer``,
``list_peers``, ``queues`` and ``failover claim`` (names from the HBase shell)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import click
from kazoo.client import KazooClient

from replication.cli.common import CliContext, emit_json, json_option, pass_context
from replication.config import replication_disabled_reason
from replication.devstack.shadow_peers import add_shadow_peer, remove_shadow_peer
from replication.errors import HbrepError
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
    help="--cluster is a real HBase: add the peer there through HBase's Admin, DISABLED and marked "
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
            recorded = add_shadow_peer(ctx.cluster, zk, paths, peer_id, config, rootdir, thrift)
        click.echo(
            f"peer {peer_id} added to HBase at {ctx.cluster} as a shadow peer ({cluster_key}, DISABLED in HBase; "
            f"hbrep ships it from {recorded})"
        )
        return
    with zk_session(ctx) as (zk, paths):
        ReplicationPeerStorage(zk, paths).add_peer(peer_id, config, enabled=state.upper() == "ENABLED")
    click.echo(f"peer {peer_id} added ({cluster_key}, {state.upper()})")
    disabled = replication_disabled_reason(ctx.conf)
    if disabled:
        click.echo(f"warning: {disabled}; nothing is shipped to peer {peer_id} until it is true", err=True)


def _is_shadow(storage: ReplicationPeerStorage, peer_id: str) -> bool:
    """True for an existing shadow peer (zk/shadow_peer.py), which only HBase's Admin may change."""
    return storage.peer_exists(peer_id) and is_shadow_peer(storage.get_peer_config(peer_id))


@click.command("remove_peer")
@click.argument("peer_id")
@pass_context
def remove_peer(ctx: CliContext, peer_id: str) -> None:
    """Remove a peer and every queue (normal and recovered) kept for it (a shadow peer through HBase's Admin)."""
    with zk_session(ctx) as (zk, paths):
        storage = ReplicationPeerStorage(zk, paths)
        shadow = _is_shadow(storage, peer_id)
        if not shadow:
            storage.remove_peer(peer_id)
    if shadow:
        remove_shadow_peer(ctx.cluster, peer_id)
    click.echo(f"peer {peer_id} removed")


def _set_state(ctx: CliContext, peer_id: str, enabled: bool) -> None:
    with zk_session(ctx) as (zk, paths):
        storage = ReplicationPeerStorage(zk, paths)
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


@click.command("list_peers")
@json_option
@pass_context
def list_peers(ctx: CliContext, as_json: bool) -> None:
    """The peers, as the HBase shell lists them."""
    with zk_session(ctx) as (zk, paths):
        storage = ReplicationPeerStorage(zk, paths)
        rows = [
            _peer_row(pid, storage.get_peer_config(pid), storage.is_peer_enabled(pid))
            for pid in storage.list_peer_ids()
        ]
    if as_json:
        emit_json(rows)
        return
    table = [list(PEER_COLUMNS)] + [[str(row[c]) for c in PEER_COLUMNS] for row in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(PEER_COLUMNS))]
    for line in table:
        click.echo(" ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip())
    click.echo(f"{len(rows)} row(s)")


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


COMMANDS = (add_peer, remove_peer, enable_peer, disable_peer, list_peers, queues, failover)
