"""A small client of Airflow's REST API (``/api/v2``), as users and scripts drive a running Airflow.

It logs in through the auth manager's token endpoint (``POST /auth/token``) and sends the JWT as a
bearer token; it triggers runs, creates backfills, waits for runs, reads task instances, XComs and logs,
and clears task instances. Plain HTTP (httpx): nothing here imports Airflow.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from datetime import datetime
from typing import Any
from urllib.parse import quote

import httpx

FINISHED = frozenset({"success", "failed"})
ACTIVE = ("queued", "running")  # a run in either state may still start or run tasks


class AirflowApiError(RuntimeError):
    """A REST call answered with an error status, or a wait ran out of time (the message says which)."""


def _q(part: str) -> str:
    return quote(part, safe="")


class AirflowApi:
    """One API server (``base_url`` like ``http://127.0.0.1:8080``) and one logged-in user."""

    def __init__(self, base_url: str, username: str, password: str, *, timeout: float = 60.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.http = httpx.Client(base_url=self.base_url, timeout=timeout)
        self.token = self.login(username, password)
        self.http.headers["Authorization"] = f"Bearer {self.token}"

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self.http.close()

    def __enter__(self) -> AirflowApi:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- plumbing -------------------------------------------------------------------------------
    def login(self, username: str, password: str) -> str:
        """A JWT access token for ``username`` from the auth manager's login endpoint."""
        response = self.http.post("/auth/token", json={"username": username, "password": password})
        if response.status_code not in (200, 201):
            raise AirflowApiError(
                f"login as {username} at {self.base_url}: HTTP {response.status_code} {response.text}"
            )
        return str(response.json()["access_token"])

    def call(self, method: str, path: str, **kwargs: Any) -> Any:
        """One ``/api/v2`` call; its JSON body (or text for non-JSON answers); AirflowApiError on HTTP >= 400."""
        response = self.http.request(method, "/api/v2" + path, **kwargs)
        if response.status_code >= 400:
            raise AirflowApiError(f"{method} /api/v2{path}: HTTP {response.status_code} {response.text[:500]}")
        if "json" in response.headers.get("content-type", ""):
            return response.json()
        return response.text

    # -- DAGs and runs --------------------------------------------------------------------------
    def dag(self, dag_id: str) -> dict[str, Any]:
        """The DAG's record (``is_paused``, ``next_dagrun_*``, ...)."""
        return self.call("GET", f"/dags/{_q(dag_id)}")

    def set_pool(self, name: str, slots: int, description: str) -> dict[str, Any]:
        """Create pool ``name``, or set its slots and description when it exists (``airflow pools set``)."""
        body = {"name": name, "slots": slots, "description": description, "include_deferred": False}
        try:
            return self.call("PATCH", f"/pools/{_q(name)}", json=body)
        except AirflowApiError as exc:
            if "HTTP 404" not in str(exc):
                raise
        return self.call("POST", "/pools", json=body)

    def set_paused(self, dag_id: str, paused: bool) -> dict[str, Any]:
        """Pause or unpause a DAG (the scheduler only runs unpaused DAGs)."""
        return self.call("PATCH", f"/dags/{_q(dag_id)}", json={"is_paused": paused})

    def wait_for_dag(self, dag_id: str, timeout: float = 120.0) -> dict[str, Any]:
        """Wait until the DAG processor has parsed and stored ``dag_id``."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                return self.dag(dag_id)
            except AirflowApiError:
                if time.monotonic() > deadline:
                    raise AirflowApiError(f"DAG {dag_id} not parsed within {timeout:.0f}s") from None
                time.sleep(1)

    def trigger(self, dag_id: str, conf: dict[str, Any] | None = None, *, logical_date: datetime | None = None) -> str:
        """Trigger a run (manual); returns its run id."""
        body = {"logical_date": logical_date.isoformat() if logical_date else None, "conf": conf or {}}
        return str(self.call("POST", f"/dags/{_q(dag_id)}/dagRuns", json=body)["dag_run_id"])

    def run(self, dag_id: str, run_id: str) -> dict[str, Any]:
        """One DAG run (``state``, ``run_type``, ``logical_date``, ``data_interval_start``/``end``, ``conf``)."""
        return self.call("GET", f"/dags/{_q(dag_id)}/dagRuns/{_q(run_id)}")

    def runs(
        self, dag_id: str, *, run_type: str | None = None, states: Iterable[str] = (), page_size: int = 100
    ) -> list[dict[str, Any]]:
        """Every run of ``dag_id`` (all pages), oldest run-after first; ``run_type`` (``scheduled``, ``backfill``,
        ``manual``, ``asset_triggered``) and ``states`` (``queued``, ``running``, ...) filter. The API answers at
        most ``[api] maximum_page_limit`` runs (100) a call, so this reads page after page until the
        ``total_entries`` it reports: a DAG that runs every minute has more than 100 runs within two hours. The
        pages are read one after another, so with ``states`` a run that changes state meanwhile may be missed:
        a caller that waits for runs to end reads again until none is left."""
        params: dict[str, Any] = {"limit": page_size, "order_by": "run_after"}
        if run_type:
            params["run_type"] = run_type
        if states:
            params["state"] = list(states)
        runs: list[dict[str, Any]] = []
        while True:
            page = self.call("GET", f"/dags/{_q(dag_id)}/dagRuns", params={**params, "offset": len(runs)})
            runs.extend(page["dag_runs"])
            if not page["dag_runs"] or len(runs) >= int(page["total_entries"]):
                return runs

    def wait_for_run(self, dag_id: str, run_id: str, timeout: float = 600.0) -> dict[str, Any]:
        """Wait until the run is ``success`` or ``failed``; returns it. AirflowApiError after ``timeout``."""
        deadline = time.monotonic() + timeout
        while True:
            run = self.run(dag_id, run_id)
            if run["state"] in FINISHED:
                return run
            if time.monotonic() > deadline:
                raise AirflowApiError(f"{dag_id} run {run_id} still {run['state']} after {timeout:.0f}s")
            time.sleep(2)

    def wait_for_runs(
        self, dag_id: str, count: int, *, run_type: str | None = None, timeout: float = 600.0
    ) -> list[dict[str, Any]]:
        """Wait until at least ``count`` runs (of ``run_type``) exist and all of them finished; returns them."""
        deadline = time.monotonic() + timeout
        while True:
            runs = self.runs(dag_id, run_type=run_type)
            if len(runs) >= count and all(r["state"] in FINISHED for r in runs):
                return runs
            if time.monotonic() > deadline:
                states = [(r["dag_run_id"], r["state"]) for r in runs]
                raise AirflowApiError(f"{dag_id}: wanted {count} finished {run_type or ''} run(s) in "
                                      f"{timeout:.0f}s, have {states}")  # fmt: skip
            time.sleep(2)

    def backfill(
        self,
        dag_id: str,
        from_date: datetime,
        to_date: datetime,
        *,
        reprocess_behavior: str = "none",
        max_active_runs: int = 1,
        conf: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Create a backfill over logical dates [from_date, to_date]; returns the backfill record."""
        body = {
            "dag_id": dag_id,
            "from_date": from_date.isoformat(),
            "to_date": to_date.isoformat(),
            "reprocess_behavior": reprocess_behavior,
            "max_active_runs": max_active_runs,
            "dag_run_conf": conf,
        }
        return self.call("POST", "/backfills", json=body)

    # -- task instances -------------------------------------------------------------------------
    def task_instances(self, dag_id: str, run_id: str) -> list[dict[str, Any]]:
        """Every task instance of a run (mapped ones per map index)."""
        path = f"/dags/{_q(dag_id)}/dagRuns/{_q(run_id)}/taskInstances"
        return list(self.call("GET", path, params={"limit": 1000})["task_instances"])

    def task_instances_in_state(self, state: str) -> list[dict[str, Any]]:
        """Every task instance of every DAG and run in ``state`` (``running``, ``queued``...)."""
        params = {"state": state, "limit": 1000}
        return list(self.call("GET", "/dags/~/dagRuns/~/taskInstances", params=params)["task_instances"])

    def set_task_instance_state(
        self, dag_id: str, run_id: str, task_id: str, state: str, *, map_index: int = -1, note: str | None = None
    ) -> None:
        """Set one task instance's state (``success``, ``failed`` or ``skipped``, what Airflow's API allows) and
        its note, as the UI's "Mark as" does; its upstream and downstream are left alone."""
        path = f"/dags/{_q(dag_id)}/dagRuns/{_q(run_id)}/taskInstances/{_q(task_id)}"
        params = {"map_index": map_index} if map_index >= 0 else {}
        self.call("PATCH", path, params=params, json={"new_state": state, "note": note})

    def xcom(self, dag_id: str, run_id: str, task_id: str, *, map_index: int = -1, key: str = "return_value") -> Any:
        """The value a task instance pushed under ``key`` (its return value by default)."""
        path = f"/dags/{_q(dag_id)}/dagRuns/{_q(run_id)}/taskInstances/{_q(task_id)}/xcomEntries/{_q(key)}"
        return self.call("GET", path, params={"map_index": map_index, "deserialize": True})["value"]

    def task_log(self, dag_id: str, run_id: str, task_id: str, try_number: int, *, map_index: int = -1) -> str:
        """The log of one try of a task instance, as text (one line per event)."""
        path = f"/dags/{_q(dag_id)}/dagRuns/{_q(run_id)}/taskInstances/{_q(task_id)}/logs/{try_number}"
        body = self.call("GET", path, params={"map_index": map_index, "full_content": True})
        content = body.get("content", body) if isinstance(body, dict) else body
        if isinstance(content, str):
            return content
        return "\n".join(_log_line(item) for item in content)

    def clear(
        self, dag_id: str, run_id: str, task_ids: Iterable[str], *, only_failed: bool = True, downstream: bool = True
    ) -> list[dict[str, Any]]:
        """Clear task instances of one run (and their downstream) so the scheduler runs them again."""
        body = {
            "dry_run": False,
            "dag_run_id": run_id,
            "task_ids": list(task_ids),
            "only_failed": only_failed,
            "include_downstream": downstream,
        }
        return list(self.call("POST", f"/dags/{_q(dag_id)}/clearTaskInstances", json=body)["task_instances"])


def _log_line(item: Any) -> str:
    if isinstance(item, dict):
        extra = {k: v for k, v in item.items() if k not in ("event", "timestamp", "level", "logger")}
        return " ".join(str(x) for x in (item.get("timestamp", ""), item.get("level", ""), item.get("event", ""))) + (
            f" {extra}" if extra else ""
        )
    return str(item)
