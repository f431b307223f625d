"""ConsistencyTokenOperator: take a consistency token (``operations.consistency``) for ``WaitForConsistency``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from airflow.sdk import BaseOperator
from airflow.sdk.exceptions import AirflowFailException

from hbrep_airflow.hooks.replication import ReplicationHook
from hbrep_airflow.hooks.zookeeper import ZooKeeperHook


def _table_list(tables: list[str] | str | None) -> list[str] | None:
    """The tables as a list (a rendered template may give "a,b"); None for all tables."""
    if isinstance(tables, str):
        tables = [t.strip() for t in tables.split(",") if t.strip()]
    return list(tables) if tables else None


class ConsistencyTokenOperator(BaseOperator):
    """Take a consistency token for ``peer_id`` (optionally only ``tables``); returns the token's summary
    (``token``, ``peer_id``, ``created_ms``, ``expires_ms``, ``pending_wals``, ``pending_bytes``) for XCom."""

    template_fields: Sequence[str] = ("peer_id", "tables")

    def __init__(
        self,
        *,
        peer_id: str,
        tables: list[str] | str | None = None,
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
        from replication.errors import HbrepError  # not at the top: DAG parsing must not load the library

        hook = ReplicationHook(self.zookeeper_conn_id, self.conf_overrides)
        try:
            record = hook.consistency_token(str(self.peer_id), _table_list(self.tables))
        except HbrepError as exc:
            raise AirflowFailException(str(exc)) from None
        self.log.info("Consistency token %s for peer %s: %s", record["token"], self.peer_id, record)
        return record
