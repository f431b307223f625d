"""FastAPI app of the Replication view: ``GET /`` the page, ``GET /api/status`` the data it draws.

The data is ``replication.status.replication_status`` of the source cluster (peers and state, the queue
tree with positions and lag, stuck queues, recent failovers and cycles) plus ``lag_history``: per peer,
(time, lag ms) points from the recorded cycles and the current reading, for the lag chart.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.encoders import jsonable_encoder
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse

PAGE = Path(__file__).resolve().parent / "static" / "replication.html"
StatusProvider = Callable[[], dict[str, Any]]


def default_status_provider() -> dict[str, Any]:
    """Status of the cluster named by ``HBREP_CLUSTER`` (a cluster key), else the ``hbrep_source`` connection."""
    from replication.config import Config

    cluster = os.environ.get("HBREP_CLUSTER")
    if cluster:
        from replication.status import replication_status
        from replication.zk.client import connected
        from replication.zk.cluster_key import ClusterKey

        conf = Config.load()
        key = ClusterKey.parse(cluster)
        with connected(key, auth=conf.get_str("hbrep.zk.auth", "") or None) as zk:
            return replication_status(zk, key, conf)
    from hbrep_airflow.hooks.replication import ReplicationHook

    return ReplicationHook(os.environ.get("HBREP_ZK_CONN_ID", "hbrep_source")).status()


def lag_history(status: dict[str, Any]) -> dict[str, list[list[int]]]:
    """Per peer, ``[[time_ms, lag_ms], ...]`` from the recent cycles (oldest first) and the current status."""
    history: dict[str, list[list[int]]] = {pid: [] for pid in status.get("peers", {})}
    for cycle in status.get("recent_cycles", []):
        at = int(cycle.get("finished_ms", 0))
        for pid, peer in (cycle.get("peers") or {}).items():
            if isinstance(peer, dict) and peer.get("lag_ms") is not None:
                history.setdefault(pid, []).append([at, int(peer["lag_ms"])])
    for pid, peer in status.get("peers", {}).items():
        history.setdefault(pid, []).append([int(status.get("now_ms", 0)), int(peer.get("replicationLag", 0))])
    for points in history.values():
        points.sort()
    return history


def create_app(status_provider: StatusProvider | None = None) -> FastAPI:
    """The Replication view's app; ``status_provider`` defaults to :func:`default_status_provider`."""
    provider = status_provider or default_status_provider
    app = FastAPI(title="hbrep replication", docs_url=None, redoc_url=None, openapi_url=None)

    @app.get("/", response_class=HTMLResponse)
    def page() -> HTMLResponse:
        return HTMLResponse(PAGE.read_text(encoding="utf-8"))

    @app.get("/replication")
    def page_alias() -> RedirectResponse:
        return RedirectResponse("./")

    @app.get("/api/status")
    def status() -> JSONResponse:
        try:
            data = provider()
        except Exception as exc:  # shown on the page, one line, instead of a bare 500
            return JSONResponse({"error": f"{type(exc).__name__}: {exc}"}, status_code=503)
        data = dict(data)
        data["lag_history"] = lag_history(data)
        return JSONResponse(jsonable_encoder(data))

    return app
