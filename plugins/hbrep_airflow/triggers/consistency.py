"""ConsistencyTrigger: polls a consistency token (``operations.consistency``) in the triggerer until it is met.

Fires one event: ``{"status": "consistent", ...the check...}`` once everything the token recorded is on
the peer, or ``{"status": "error", "message": ...}`` for a malformed, unknown or expired token (or a peer
removed since), so the deferred task fails with that one line instead of waiting for its timeout.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from airflow.triggers.base import BaseTrigger, TriggerEvent

from hbrep_airflow.hooks.replication import ReplicationHook
from hbrep_airflow.hooks.zookeeper import ZooKeeperHook


class ConsistencyTrigger(BaseTrigger):
    """Check ``token`` on the source cluster of ``zookeeper_conn_id`` every ``poll_interval`` seconds."""

    def __init__(
        self,
        token: str,
        zookeeper_conn_id: str = ZooKeeperHook.default_conn_name,
        poll_interval: float = 5.0,
        conf_overrides: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self.token = token
        self.zookeeper_conn_id = zookeeper_conn_id
        self.poll_interval = float(poll_interval)
        self.conf_overrides = dict(conf_overrides or {})

    def serialize(self) -> tuple[str, dict[str, Any]]:
        """Classpath and keyword arguments, as the triggerer re-creates the trigger from them."""
        return (
            f"{type(self).__module__}.{type(self).__qualname__}",
            {
                "token": self.token,
                "zookeeper_conn_id": self.zookeeper_conn_id,
                "poll_interval": self.poll_interval,
                "conf_overrides": self.conf_overrides,
            },
        )

    async def run(self) -> AsyncIterator[TriggerEvent]:
        """Yield one event: consistent (with the number of checks it took) or the token's error."""
        from replication.errors import HbrepError  # not at the top: DAG parsing must not load the library

        hook = ReplicationHook(self.zookeeper_conn_id, self.conf_overrides)
        # The sync connection lookup would block the triggerer's event loop: fetch it async; the
        # ZooKeeper and filesystem reads of each check run in a thread.
        hook.zk_hook.use_connection(await ZooKeeperHook.aget_connection(self.zookeeper_conn_id))
        checks = 0
        while True:
            checks += 1
            try:
                result = await asyncio.to_thread(hook.check_consistency, self.token)
            except HbrepError as exc:
                yield TriggerEvent({"status": "error", "token": self.token, "message": str(exc), "checks": checks})
                return
            if result["consistent"]:
                yield TriggerEvent({**result, "status": "consistent", "checks": checks})
                return
            self.log.info(
                "token %s: %d WAL(s), %d bytes still to ship",
                self.token,
                len(result["pending"]),
                result["pending_bytes"],
            )
            await asyncio.sleep(self.poll_interval)
