"""Tickets that run out: a process logged in from its keytab keeps authenticating past its tickets' lifetime
(MIT's GSSAPI gets new ones from the keytab); so does one that uses the ticket cache Airflow's own renewer
(``airflow kerberos``, as the Airflow stack runs it with ``[core] security = kerberos``) keeps renewed, as
hbrep's tasks do in Airflow; and a process holding only an expired ticket cache is refused with one line,
nothing written. Tickets live 60 s here (the KDC's shortest)."""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from replication.devstack.airflow_stack import airflow_bin
from replication.processes import dies_with_parent
from replication.zk.client import connected, zk_options
from tests.badinput.helpers import error_line, hbrep

pytestmark = pytest.mark.slow

TICKET_LIFETIME_S = 60
RENEW_EVERY_S = 20  # Airflow's [kerberos] reinit_frequency: three renewals within the test's wait


@pytest.fixture
def airflow_renewer(kerberized_zk, tmp_path) -> Iterator[tuple[subprocess.Popen, dict[str, str]]]:
    """Airflow's ticket renewer for hbrep's principal, started as the Airflow stack starts it (its metadata
    database migrated first: the CLI records its run there), output in ``renewer.log`` of its home; and the
    environment of an Airflow task of that configuration (KRB5CCNAME = the renewer's cache, as every
    Airflow process sets it; hbrep's Kerberos keys without a keytab of its own). Stopped at the end."""
    home = tmp_path / "airflow"
    home.mkdir()
    airflow = {
        "AIRFLOW_HOME": str(home),
        "AIRFLOW__CORE__SECURITY": "kerberos",
        "AIRFLOW__KERBEROS__KEYTAB": str(kerberized_zk.hbrep.path),
        "AIRFLOW__KERBEROS__PRINCIPAL": kerberized_zk.hbrep.principal,
        "AIRFLOW__KERBEROS__CCACHE": str(home / "krb5cc_airflow"),
        "AIRFLOW__KERBEROS__REINIT_FREQUENCY": str(RENEW_EVERY_S),
        # Airflow's default (tickets bound to this host's addresses) makes the renewal it runs after each
        # kinit (its Kerberos 1.8.1 work-around) fail with "Incorrect net address" here: docs/security.md
        "AIRFLOW__KERBEROS__INCLUDE_IP": "False",
        "KRB5_CONFIG": str(kerberized_zk.kdc.krb5_conf),
    }
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW")} | airflow
    script = '"$AIRFLOW" db migrate >/dev/null && "$AIRFLOW" kerberos --one-time && exec "$AIRFLOW" kerberos'
    with open(home / "renewer.log", "wb") as log:
        renewer = subprocess.Popen(["bash", "-c", script], env={**env, "AIRFLOW": airflow_bin()}, stdout=log,
                                   stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   preexec_fn=dies_with_parent())  # fmt: skip
    task = kerberized_zk.cli_env(hbase_client_kerberos_principal="", hbase_client_keytab_file="")
    task["KRB5CCNAME"] = airflow["AIRFLOW__KERBEROS__CCACHE"]
    try:
        yield renewer, task
    finally:
        renewer.terminate()
        renewer.wait(30)


def test_a_keytab_login_and_airflows_renewer_outlive_the_tickets_and_an_expired_cache_is_refused(
    kerberized_zk, airflow_renewer, tmp_path
):
    key = f"127.0.0.1:{kerberized_zk.zookeeper.port}:/hbase-{uuid.uuid4().hex[:8]}"
    conf = kerberized_zk.conf()
    renewer, as_airflow_task = airflow_renewer
    renewer_log = tmp_path / "airflow" / "renewer.log"
    cache = tmp_path / "kinit-cache"
    kerberized_zk.kdc.kinit(kerberized_zk.hbrep, cache)  # as a user's `kinit -kt`, with no renewer after it
    by_cache = kerberized_zk.cli_env(hbase_client_kerberos_principal="", hbase_client_keytab_file="")
    by_cache["KRB5CCNAME"] = f"FILE:{cache}"
    added = hbrep("--cluster", key, "add_peer", "1", "zk9:2181:/hbase-b", env=by_cache)
    assert added.returncode == 0, added.stderr
    with connected(key, **zk_options(conf)) as zk:  # this process logs in from the keytab
        assert zk.get_children(f"{key.rsplit(':', 1)[1]}/replication/peers") == ["1"]
    logged_in = time.monotonic()  # after kinit too: every ticket of both caches has run out 65 s from now
    renewer_cache = Path(as_airflow_task["KRB5CCNAME"])
    first_renewal = None  # when the renewer's cache first held tickets: those have run out 65 s after
    while first_renewal is None or time.monotonic() < max(logged_in, first_renewal) + TICKET_LIFETIME_S + 5:
        if first_renewal is None and renewer_cache.exists():
            first_renewal = time.monotonic()
        assert first_renewal is not None or renewer.poll() is None, renewer_log.read_text()
        time.sleep(0.5)

    refused = hbrep("--cluster", key, "add_peer", "2", "zk9:2181:/hbase-c", env=by_cache)
    assert error_line(refused) == (
        f"hbrep: error: the Kerberos ticket of the default principal from FILE:{cache} has expired: "
        "renew it (kinit) or log in from a keytab (hbase.client.keytab.file)"
    )
    with connected(key, **zk_options(conf)) as zk:  # same process, same in-memory cache: tickets renewed
        assert zk.get_children(f"{key.rsplit(':', 1)[1]}/replication/peers") == ["1"]
    # the cache Airflow's renewer keeps: its first tickets have run out too, its latest have not
    logged = renewer_log.read_text()
    assert renewer.poll() is None, logged[-3000:]
    assert logged.count("Re-initialising kerberos from keytab") >= 3, logged[-3000:]  # one-time, then each 20 s
    added = hbrep("--cluster", key, "add_peer", "3", "zk9:2181:/hbase-d", env=as_airflow_task)
    assert added.returncode == 0, added.stderr
    with connected(key, **zk_options(conf)) as zk:
        assert sorted(zk.get_children(f"{key.rsplit(':', 1)[1]}/replication/peers")) == ["1", "3"]
