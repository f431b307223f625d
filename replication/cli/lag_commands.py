"""``hbrep set_lag_target PEER [TABLE] MS`` and ``hbrep replicated_through PEER``: per-table lag of a peer.

The lag of a table is now − the write time before which all its edits are on the peer
(replication/monitoring/replicated_through.py); a target is kept in hbrep's znodes
(replication/monitoring/lag_targets.py) and
checked by the ship DAG's lag check, ``hbrep status replication`` and the Replication view.
"""

from __future__ import annotations

import click

from replication.cli.common import CliContext, emit_json, json_option, pass_context


def _zk(ctx: CliContext):
    from replication.zk.client import connected, zk_options

    return connected(ctx.cluster, **zk_options(ctx.conf))


def _paths(ctx: CliContext):
    from replication.zk.layout import ZNodePaths

    return ZNodePaths(ctx.conf, parent=ctx.cluster.znode_parent)


@click.command("set_lag_target")
@click.argument("peer")
@click.argument("args", nargs=-1, required=True, metavar="[TABLE] MS")
@json_option
@pass_context
def set_lag_target(ctx: CliContext, peer: str, args: tuple[str, ...], as_json: bool) -> None:
    """The most a peer (or one of its tables) may lag, in ms (0 clears it); missed targets fail the ship
    DAG's lag check, raise an alert and show in status and the Replication view."""
    from replication.monitoring.lag_targets import set_lag_target as store
    from replication.zk.peer_storage import PeerNotFound, ReplicationPeerStorage

    if len(args) > 2:
        raise click.UsageError("give [TABLE] MS")
    table, raw = (args[0], args[1]) if len(args) == 2 else (None, args[0])
    try:
        ms = int(raw)
    except ValueError:
        raise click.BadParameter(f"{raw!r} is not a whole number of milliseconds", param_hint="MS") from None
    with _zk(ctx) as zk:
        storage = ReplicationPeerStorage(zk, _paths(ctx))
        if not storage.peer_exists(peer):
            raise PeerNotFound(f"peer {peer} does not exist")
        targets = store(zk, _paths(ctx), peer, table, ms, ctx.conf.get_int("hbrep.replicated.through.margin.ms"))
    if as_json:
        emit_json(targets.to_json())
    else:
        click.echo(f"peer {peer}: lag target {targets.peer or '-'} ms; tables {targets.tables or '-'}")


@click.command("replicated_through")
@click.argument("peer")
@json_option
@pass_context
def replicated_through(ctx: CliContext, peer: str, as_json: bool) -> None:
    """The write time before which every edit of PEER's tables is on the peer, per table, and the lag."""
    import time

    from replication.monitoring.replicated_through import replicated_through as compute
    from replication.zk.peer_storage import PeerNotFound, ReplicationPeerStorage

    with _zk(ctx) as zk:
        if not ReplicationPeerStorage(zk, _paths(ctx)).peer_exists(peer):
            raise PeerNotFound(f"peer {peer} does not exist")
        value = compute(zk, ctx.cluster, ctx.conf, peer)
    now = int(time.time() * 1000)
    if as_json:
        emit_json({**value.as_dict(), "lag_ms": value.lag_ms(now)})
        return
    click.echo(f"peer {peer}: replicated through {value.through_ms} (lag {value.lag_ms(now)} ms)")
    for table, through in sorted(value.tables.items()):
        click.echo(f"  {table}: replicated through {through} (lag {max(0, now - through)} ms)")


COMMANDS = (set_lag_target, replicated_through)
