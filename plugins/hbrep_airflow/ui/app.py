"""FastAPI app of the Replication view: ``GET /`` the page, ``GET /api/status`` the data it draws, and
``GET /metrics`` the same status in Prometheus text format (a scraper sends an Airflow token as a bearer).

Every route answers only a logged-in Airflow user whom Airflow's auth manager lets read every hbrep DAG:
the routes depend on Airflow's own ``requires_access_dag("GET", param_dag_id=...)`` (the check Airflow's
public API uses), so the token (``Authorization: Bearer`` or the ``_token`` cookie set by Airflow's login
page) is checked by the configured auth manager (simple, FAB, Keycloak...). No token: 401 (the page
redirects the browser to Airflow's login page instead); a token of a user without DAG access: 403.

The data is ``replication.monitoring.status.replication_status`` of the source cluster (peers and state, the queue
tree with positions and lag, stuck queues, recent failovers and cycles; its ``to_json()``) plus ``lag_history``
and ``lag_targets`` (``replication.monitoring.lag_history``): per peer and table, (time, lag ms) points from the
stored samples and the current reading, and the lag targets, for the lag chart.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from airflow.api_fastapi.app import get_auth_manager
from airflow.api_fastapi.core_api.security import requires_access_dag
from fastapi import Depends, FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exception_handlers import http_exception_handler
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

if TYPE_CHECKING:  # the library loads on the first request, not when Airflow loads its plugins
    from replication.monitoring.status_models import ReplicationStatus

PAGE = Path(__file__).resolve().parent / "static" / "replication.html"
StatusProvider = Callable[[], "ReplicationStatus"]
HBREP_DAG_IDS = ("hbrep_ship", "hbrep_failover", "hbrep_log_cleaner", "hbrep_verify")
"""The DAGs the view reports on: a user must be allowed to read each of them."""
ACCESS_CHECKS = [Depends(requires_access_dag("GET", param_dag_id=dag_id)) for dag_id in HBREP_DAG_IDS]


def default_status_provider() -> ReplicationStatus:
    """Status of the cluster named by ``HBREP_CLUSTER`` (a cluster key), else the ``hbrep_source`` connection."""
    # the library (kazoo, Spark) loads on the first request, not when Airflow loads its plugins
    from replication.config import Config

    cluster = os.environ.get("HBREP_CLUSTER")
    if cluster:
        from replication.monitoring.status import replication_status
        from replication.zk.client import connected, zk_options
        from replication.zk.cluster_key import ClusterKey

        conf = Config.load()
        key = ClusterKey.parse(cluster)
        with connected(key, **zk_options(conf)) as zk:
            return replication_status(zk, key, conf)
    from hbrep_airflow.hooks.replication import ReplicationHook

    return ReplicationHook(os.environ.get("HBREP_ZK_CONN_ID", "hbrep_source")).status()


def create_app(status_provider: StatusProvider | None = None) -> FastAPI:
    """The Replication view's app; ``status_provider`` defaults to :func:`default_status_provider`."""
    provider = status_provider or default_status_provider
    app = FastAPI(
        title="hbrep replication", docs_url=None, redoc_url=None, openapi_url=None, dependencies=ACCESS_CHECKS
    )

    @app.exception_handler(StarletteHTTPException)
    async def login_redirect(request: Request, exc: StarletteHTTPException) -> Response:
        """A browser navigating to a page without a login goes to Airflow's login page, then comes back.

        Everything else (``fetch``, curl: no ``text/html`` in ``Accept``) gets the plain 401/403 JSON.
        """
        if exc.status_code == 401 and "text/html" in request.headers.get("accept", ""):
            return RedirectResponse(get_auth_manager().get_url_login(next_url=str(request.url)), status_code=303)
        return await http_exception_handler(request, exc)

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
        from replication.monitoring.lag_history import lag_history, lag_history_targets

        body = data.to_json()
        body["lag_history"] = lag_history(data)
        body["lag_targets"] = lag_history_targets(data)
        return JSONResponse(jsonable_encoder(body))

    @app.get("/metrics")
    def metrics() -> Response:
        """The status in Prometheus text format; ``hbrep_status_up 0`` when it cannot be read."""
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        from replication.monitoring.status import status_registry

        return Response(generate_latest(status_registry(provider)), media_type=CONTENT_TYPE_LATEST)

    return app
