"""Event triggers (asset watchers) on ZooKeeper: RegionServerRemovedTrigger fires when region servers die,
EditsQueuedTrigger when new edits are queued for a peer whose ship DAG has no run active (its lease free).

RegionServerRemovedTrigger runs in Airflow's triggerer for as long as the asset it watches is scheduled on.
It holds one ZooKeeper session (retried without end, so an outage does not stop it) and a
:class:`replication.zk.replication_tracker.ReplicationTracker`, whose kazoo watch callbacks (kazoo's
threads) hand each :class:`RegionServersRemoved` to the event loop with ``call_soon_threadsafe``; each
becomes one ``TriggerEvent``, i.e. one asset event, i.e. one ``hbrep_failover`` run.

What it promises (see the tracker): a server whose ``rs`` znode is removed is reported; a death while the
trigger's session was lost is reported once the new session has read the servers again; a trigger started
after a death (a restarted triggerer) reports the dead servers that still hold queues. Several reports
of one death are harmless: the claim lock in ZooKeeper lets one failover run claim the queues.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from airflow.triggers.base import BaseEventTrigger, TriggerEvent

from hbrep_airflow.hooks.zookeeper import ZooKeeperHook


class RegionServerRemovedTrigger(BaseEventTrigger):
    """Yield ``{"servers": [...], "reason": ..., "seen_ms": ..., "live": [...]}`` per death seen on the
    cluster of ``zookeeper_conn_id``."""

    def __init__(self, zookeeper_conn_id: str = ZooKeeperHook.default_conn_name) -> None:
        super().__init__()
        self.zookeeper_conn_id = zookeeper_conn_id

    def serialize(self) -> tuple[str, dict[str, Any]]:
        """Classpath and keyword arguments, as the triggerer re-creates the trigger from them."""
        return (f"{type(self).__module__}.{type(self).__qualname__}", {"zookeeper_conn_id": self.zookeeper_conn_id})

    async def run(self) -> AsyncIterator[TriggerEvent]:
        """Watch until cancelled; one event per look at ZooKeeper that found servers dead."""
        # not at the top: DAG parsing must not load the library
        from replication.config import Config
        from replication.zk.layout import ZNodePaths
        from replication.zk.replication_tracker import RegionServersRemoved, ReplicationTracker

        hook = ZooKeeperHook(self.zookeeper_conn_id)
        hook.use_connection(await ZooKeeperHook.aget_connection(self.zookeeper_conn_id))
        loop = asyncio.get_running_loop()
        events: asyncio.Queue[RegionServersRemoved] = asyncio.Queue()

        def hand_over(event: RegionServersRemoved) -> None:  # kazoo's thread
            loop.call_soon_threadsafe(events.put_nowait, event)

        zk = await asyncio.to_thread(hook.get_conn, reconnect_for=None)
        paths = ZNodePaths(Config.load(), parent=hook.cluster_key.znode_parent)
        tracker = ReplicationTracker(zk, paths, hand_over)
        try:
            await asyncio.to_thread(tracker.start)
            self.log.info("watching the region servers of %s", hook.cluster_key)
            while True:
                event = await events.get()
                yield TriggerEvent(event.as_dict())
        finally:
            tracker.stop()
            await asyncio.to_thread(_close, zk)


def _close(zk: Any) -> None:
    zk.stop()
    zk.close()


class EditsQueuedTrigger(BaseEventTrigger):
    """Yield ``{"peer_id", "queues", "pending_bytes", "seen_ms"}`` when new edits are queued for a peer of the
    cluster of ``zookeeper_conn_id`` while no ship run holds the peer's lease (once per backlog).

    The look (:class:`replication.source.pending_edits.PendingEditsTracker`) runs every
    ``poll_interval_s`` (edits appended to an open WAL change nothing in ZooKeeper, so the WALs' lengths are
    polled), and at once when its ZooKeeper watches fire (a new WAL queued at a roll, a commit, a claim).
    Its session is retried without end; a look that fails (ZooKeeper or the filesystem away) is logged and
    the next one reads everything again."""

    def __init__(self, zookeeper_conn_id: str = ZooKeeperHook.default_conn_name, poll_interval_s: float = 1.0) -> None:
        super().__init__()
        self.zookeeper_conn_id = zookeeper_conn_id
        self.poll_interval_s = poll_interval_s

    def serialize(self) -> tuple[str, dict[str, Any]]:
        """Classpath and keyword arguments, as the triggerer re-creates the trigger from them."""
        return (
            f"{type(self).__module__}.{type(self).__qualname__}",
            {"zookeeper_conn_id": self.zookeeper_conn_id, "poll_interval_s": self.poll_interval_s},
        )

    async def run(self) -> AsyncIterator[TriggerEvent]:
        """Look until cancelled; one event per peer whose new backlog was seen with its lease free."""
        from replication.cluster.source_cluster import open_source
        from replication.config import Config
        from replication.source.pending_edits import PendingEditsTracker

        hook = ZooKeeperHook(self.zookeeper_conn_id)
        hook.use_connection(await ZooKeeperHook.aget_connection(self.zookeeper_conn_id))
        zk = await asyncio.to_thread(hook.get_conn, reconnect_for=None)
        tracker = None
        try:
            source = await asyncio.to_thread(open_source, zk, hook.cluster_key, Config.load())
            tracker = PendingEditsTracker(zk, source)
            await asyncio.to_thread(tracker.start)
            self.log.info("watching the queued edits of %s", hook.cluster_key)
            while True:
                try:
                    found = await asyncio.to_thread(tracker.poll)
                except Exception as exc:  # ZooKeeper or the filesystem away: read everything on the next look
                    self.log.warning("could not look at the queued edits: %s", exc)
                    tracker.changed.set()
                    found = []
                for event in found:
                    yield TriggerEvent(event.as_dict())
                await asyncio.to_thread(tracker.changed.wait, self.poll_interval_s)
        finally:
            if tracker is not None:
                tracker.stop()
            await asyncio.to_thread(_close, zk)
