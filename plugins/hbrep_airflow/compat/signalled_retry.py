"""A task process killed by a signal before it reported a state is recorded ``up_for_retry``, not left running.

Airflow's task supervisor (task-sdk 1.3.2, ``ActivitySubprocess``) gives a task process that died by a
signal, with retries left, the final state UP_FOR_RETRY, but sends that state only when the task process
itself sent it (``STATES_SENT_DIRECTLY``); a process killed before its ``execute`` (while it parses the DAG
file) sent nothing, so its task instance stays ``running`` until the scheduler's heartbeat timeout finds
it. ``make down`` hits this when it stops the next ship run's task in its first second (hbrep's ship DAG
starts the next window's task while a window is open): tests/devstack/test_stack_restart.py saw it.
Upstream: apache/airflow#73142 (open) names this case ("returns UP_FOR_RETRY and skips the write
entirely, leaving the row running"). :func:`install` makes the supervisor send it through the Execution
API's retry call, as the task process would have; drop it once the task SDK sends the state itself.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

LOG = logging.getLogger(__name__)


def install() -> bool:
    """Patch ``ActivitySubprocess.update_task_state_if_needed`` once in this process (the LocalExecutor's
    workers, forked after it, inherit it); False when the task SDK is not importable. A supervisor without
    the private fields read here (another task SDK) takes the original path."""
    try:
        from airflow.sdk.execution_time.supervisor import ActivitySubprocess
        from airflow.utils.state import TaskInstanceState
    except ImportError:
        return False
    original = ActivitySubprocess.update_task_state_if_needed
    if getattr(original, "hbrep_signalled_retry", False):
        return True

    def update_task_state_if_needed(self) -> None:
        unreported = (
            getattr(self, "_pending_terminal_state_msg", None) is None
            and getattr(self, "_terminal_state", "?") is None
            and getattr(self, "_exit_code", 0) not in (None, 0)
            and hasattr(self, "_rendered_map_index")
        )
        if unreported and self.final_state == TaskInstanceState.UP_FOR_RETRY:
            LOG.info("hbrep: task %s ended by exit code %s before it reported a state: up_for_retry", self.id,
                     self._exit_code)  # fmt: skip
            self.client.task_instances.retry(
                id=self.id, end_date=datetime.now(tz=UTC), rendered_map_index=self._rendered_map_index
            )
            return
        original(self)

    update_task_state_if_needed.hbrep_signalled_retry = True  # type: ignore[attr-defined]
    ActivitySubprocess.update_task_state_if_needed = update_task_state_if_needed
    return True
