"""The Airflow 3 plugin: mounts the Replication FastAPI app at ``/hbrep`` and adds a "Replication" nav entry."""

from __future__ import annotations

from typing import Any, ClassVar

from airflow.plugins_manager import AirflowPlugin

from hbrep_airflow.ui.app import create_app

URL_PREFIX = "/hbrep"


class HbrepPlugin(AirflowPlugin):
    """Replication view (peers, queue tree, lag, stuck queues, failovers) in the Airflow UI."""

    name = "hbrep"
    fastapi_apps: ClassVar[list[dict[str, Any]]] = [
        {"app": create_app(), "url_prefix": URL_PREFIX, "name": "hbrep replication"}
    ]
    external_views: ClassVar[list[dict[str, Any]]] = [
        {
            "name": "Replication",
            "href": f"{URL_PREFIX}/",
            "destination": "nav",
            "category": "browse",
            "url_route": "replication",
        }
    ]
