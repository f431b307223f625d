"""A real ``airflow api-server`` (this repo's plugin mounted at /hbrep) with known simple-auth-manager users.

Users: ``admin`` (role ADMIN), ``viewer`` (role VIEWER: may read DAGs) and ``nobody`` (no role: Airflow's
simple auth manager gives such a user no permission at all). Their passwords are in ``PASSWORDS``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from replication.devstack.airflow_stack import airflow_environment, metadata_database
from replication.net import free_port
from replication.processes import dies_with_parent

PASSWORDS = {"admin": "admin-secret-1", "viewer": "viewer-secret-2", "nobody": "nobody-secret-3"}
USERS = "admin:admin,viewer:viewer,nobody:"


@dataclass(frozen=True)
class ApiServer:
    """Where the server listens and its log."""

    url: str  # http://127.0.0.1:PORT (no trailing slash)
    log: Path


def _airflow_bin() -> str:
    return str(Path(sys.executable).parent / "airflow")


@contextlib.contextmanager
def api_server(home: Path, cluster_key: str, extra: dict[str, str] | None = None) -> Iterator[ApiServer]:
    """Migrate a fresh metadata database (on a PostgreSQL server of its own in ``home``) and run
    ``airflow api-server`` on a free port until the block ends."""
    home.mkdir(parents=True, exist_ok=True)
    passwords = home / "passwords.json"
    passwords.write_text(json.dumps(PASSWORDS))
    port = free_port()
    database, postgres = metadata_database(home / "postgres", home)
    env = airflow_environment(
        home,
        cluster_key,
        database=database,
        api_port=port,
        extra={
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_USERS": USERS,
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_PASSWORDS_FILE": str(passwords),
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "False",
            **(extra or {}),
        },
    )
    proc = None
    try:
        subprocess.run([_airflow_bin(), "db", "migrate"], env=env, check=True, capture_output=True, timeout=300)
        log = home / "api-server.log"
        with open(log, "ab") as out:
            proc = subprocess.Popen([_airflow_bin(), "api-server", "--host", "127.0.0.1", "--port", str(port),
                                     "--workers", "1"], env=env, stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True,
                                    preexec_fn=dies_with_parent(signal.SIGTERM))  # fmt: skip
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 180
        while True:
            with contextlib.suppress(OSError), urllib.request.urlopen(url + "/api/v2/monitor/health", timeout=5):
                break
            assert proc.poll() is None, f"airflow api-server exited: {log.read_text()[-3000:]}"
            assert time.monotonic() < deadline, f"airflow api-server did not answer: {log.read_text()[-3000:]}"
            time.sleep(1)
        yield ApiServer(url, log)
    finally:
        if proc is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        if postgres is not None:
            postgres.stop()


def login_token(server: ApiServer, user: str) -> str:
    """A JWT from Airflow's real login endpoint (``POST /auth/token``) for one of ``PASSWORDS``' users."""
    body = json.dumps({"username": user, "password": PASSWORDS[user]}).encode()
    headers = {"Content-Type": "application/json"}
    request = urllib.request.Request(server.url + "/auth/token", data=body, headers=headers)
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())["access_token"]


def get(url: str, token: str | None = None, accept: str = "application/json") -> tuple[int, str, dict[str, str]]:
    """``GET url`` without following redirects: (status, body, headers)."""

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    headers = {"Accept": accept}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(urllib.request.Request(url, headers=headers), timeout=60) as response:
            return response.status, response.read().decode(), dict(response.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(), dict(exc.headers)
