"""ConsistencyTokenOperator: take a consistency token (``replication.consistency``) for ``WaitForConsistency``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from airflow.sdk import BaseOperator
from airflow.sdk.exceptions import AirflowFailException

from hbrep_airflow.hooks.replication import ReplicationHook
from hbrep_airflow.hooks.zookeeper import ZooKeeperHook
from replication.errors import HbrepError


class ConsistencyTokenOperator(BaseOperator):
    """Take a consistency token for ``peer_id`` (optionally only ``tables``); returns the token's summary
    (``token``, ``peer_id``, ``created_ms``, ``expires_ms``, ``pending_wals``, ``pending_bytes``) for XCom."""

    template_fields: Sequence[str] = ("peer_id", "tables")

    def __init__(
        self,
        *,
        peer_id: str,
        tables: list[str] | None = None,
        zookeeper_conn_id: str = ZooKeeperHook.default_conn_name,
        conf_overrides: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.peer_id = peer_id
        self.tables = tables
        self.zookeeper_conn_id = zookeeper_conn_id
        self.conf_overrides = conf_overrides or {}

    def execute(self, context: Any) -> dict[str, Any]:
        hook = ReplicationHook(self.zookeeper_conn_id, self.conf_overrides)
        try:
            record = hook.consistency_token(self.peer_id, list(self.tables) if self.tables else None)
        except HbrepError as exc:
            raise AirflowFailException(str(exc)) from None
        self.log.info("Consistency token %s for peer %s: %s", record["token"], self.peer_id, record)
        return record
