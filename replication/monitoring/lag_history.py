"""The lag chart's series of the Replication view: per peer and per table, (time, lag ms) points from the
stored replicated-through samples (``MetricsStore.record_lag_sample``), the recent cycles and the status
of now, and the lag target of each series that has one."""

from __future__ import annotations

from replication.monitoring.status_models import ReplicationStatus


def lag_history(status: ReplicationStatus) -> dict[str, list[list[int]]]:
    """Per series, ``[[time_ms, lag_ms], ...]`` oldest first, ending with the current status: a peer's
    series is named by its id, a table's ``<peer>/<table>``. The points are the peer's stored
    replicated-through samples (the last hours, ``MetricsStore.record_lag_sample``); a peer without
    samples falls back to its recent cycles."""
    history: dict[str, list[list[int]]] = {pid: [] for pid in status.peers}
    samples = status.lag_samples or {}
    for pid, points in samples.items():
        for sample in points:
            at, through = int(sample["at_ms"]), int(sample["through_ms"])
            history.setdefault(pid, []).append([at, max(0, at - through)])
            for table, table_through in (sample.get("tables") or {}).items():
                history.setdefault(f"{pid}/{table}", []).append([at, max(0, at - int(table_through))])
    for cycle in status.recent_cycles:
        at = int(cycle.get("finished_ms", 0))
        for pid, peer in (cycle.get("peers") or {}).items():
            if pid not in samples and isinstance(peer, dict) and peer.get("lag_ms") is not None:
                history.setdefault(pid, []).append([at, int(peer["lag_ms"])])
    now = int(status.now_ms)
    for pid, peer in status.peers.items():
        history.setdefault(pid, []).append([now, int(peer.replicationLag)])
        for table, row in peer.tables.items():
            history.setdefault(f"{pid}/{table}", []).append([now, int(row.lag_ms)])
    for points in history.values():
        points.sort()
    return history


def lag_history_targets(status: ReplicationStatus) -> dict[str, int]:
    """The lag target of each series of :func:`lag_history` that has one (drawn as a line)."""
    targets: dict[str, int] = {}
    for pid, peer in status.peers.items():
        if peer.lag_target_ms:
            targets[pid] = int(peer.lag_target_ms)
        for table, row in peer.tables.items():
            if row.lag_target_ms:
                targets[f"{pid}/{table}"] = int(row.lag_target_ms)
    return targets
