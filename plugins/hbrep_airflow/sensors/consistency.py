"""WaitForConsistency: wait until everything written before a consistency token was taken is on its peer.

For cut-over and DR-drill DAGs: take a token (``operators.consistency.ConsistencyTokenOperator``, or
``hbrep consistency_token``), stop the writers or not, and wait here. Deferrable by default: the wait
runs in the triggerer (``ConsistencyTrigger``) and holds no worker slot. A malformed, unknown or expired
token fails the task at once (no retry), with the library's one-line error.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from airflow.sdk.bases.sensor import BaseSensorOperator
from airflow.sdk.exceptions import AirflowFailException

from hbrep_airflow.hooks.replication import ReplicationHook
from hbrep_airflow.hooks.zookeeper import ZooKeeperHook
from hbrep_airflow.triggers.consistency import ConsistencyTrigger


class WaitForConsistency(BaseSensorOperator):
    """Succeed once every position recorded by ``token`` is shipped; returns the last check for XCom."""

    template_fields: Sequence[str] = ("token",)

    def __init__(
        self,
        *,
        token: str,
        zookeeper_conn_id: str = ZooKeeperHook.default_conn_name,
        conf_overrides: dict[str, Any] | None = None,
        deferrable: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.token = token
        self.zookeeper_conn_id = zookeeper_conn_id
        self.conf_overrides = conf_overrides or {}
        self.deferrable = deferrable

    @property
    def hook(self) -> ReplicationHook:
        return ReplicationHook(self.zookeeper_conn_id, self.conf_overrides)

    def _check(self) -> dict[str, Any]:
        from replication.errors import HbrepError  # not at the top: DAG parsing must not load the library

        try:
            return self.hook.check_consistency(self.token)
        except HbrepError as exc:
            raise AirflowFailException(str(exc)) from None

    def poke(self, context: Any) -> bool:
        """True when the token is met (the non-deferrable path)."""
        result = self._check()
        if not result["consistent"]:
            self.log.info("token %s: %d bytes still to ship", self.token, result["pending_bytes"])
        return bool(result["consistent"])

    def execute(self, context: Any) -> Any:
        if not self.deferrable:
            return super().execute(context)
        result = self._check()  # met already (or a bad token): no deferral
        if result["consistent"]:
            return {**result, "checks": 1}
        self.defer(
            trigger=ConsistencyTrigger(
                token=self.token,
                zookeeper_conn_id=self.zookeeper_conn_id,
                poll_interval=float(self.poke_interval),
                conf_overrides=self.conf_overrides,
            ),
            method_name="execute_complete",
            timeout=timedelta(seconds=float(self.timeout)),
        )

    def execute_complete(self, context: Any, event: dict[str, Any] | None = None) -> dict[str, Any]:
        """Resume after the trigger fired: the check's result, or the token's error as a failure."""
        if not event or event.get("status") != "consistent":
            raise AirflowFailException((event or {}).get("message") or f"token {self.token}: no event from the trigger")
        self.log.info("token %s: consistent after %d check(s) in the triggerer", self.token, event["checks"])
        return {**event, "checks": int(event["checks"]) + 1}
