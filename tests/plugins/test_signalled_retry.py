"""hbrep_airflow.compat.signalled_retry: installed once on Airflow's own supervisor class (its behaviour is
tested on a real stack: tests/devstack/test_stack_restart.py stops a ship task in its first second)."""

from __future__ import annotations

from hbrep_airflow.compat.signalled_retry import install


def test_install_patches_the_supervisor_once_and_keeps_the_original_path():
    from airflow.sdk.execution_time.supervisor import ActivitySubprocess

    before = ActivitySubprocess.update_task_state_if_needed
    try:
        assert install() is True
        patched = ActivitySubprocess.update_task_state_if_needed
        assert patched is not before and getattr(patched, "hbrep_signalled_retry", False)
        assert install() is True and ActivitySubprocess.update_task_state_if_needed is patched  # once only
    finally:
        ActivitySubprocess.update_task_state_if_needed = before
