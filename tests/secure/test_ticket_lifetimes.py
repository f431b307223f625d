"""Tickets that run out: a process logged in from its keytab keeps authenticating past its tickets' lifetime
(MIT's GSSAPI gets new ones from the keytab), and a process holding only an expired ticket cache is refused
with one line, nothing written. Tickets live 60 s here (the KDC's shortest)."""

from __future__ import annotations

import time
import uuid

import pytest

from replication.zk.client import connected, zk_options
from tests.badinput.helpers import error_line, hbrep

pytestmark = pytest.mark.slow

TICKET_LIFETIME_S = 60


def test_a_keytab_login_outlives_its_tickets_and_an_expired_cache_is_refused(kerberized_zk, tmp_path):
    key = f"127.0.0.1:{kerberized_zk.zookeeper.port}:/hbase-{uuid.uuid4().hex[:8]}"
    conf = kerberized_zk.conf()
    cache = tmp_path / "kinit-cache"
    kerberized_zk.kdc.kinit(kerberized_zk.hbrep, cache)  # as a user's `kinit -kt`, with no renewer after it
    by_cache = kerberized_zk.cli_env(hbase_client_kerberos_principal="", hbase_client_keytab_file="")
    by_cache["KRB5CCNAME"] = f"FILE:{cache}"
    added = hbrep("--cluster", key, "add_peer", "1", "zk9:2181:/hbase-b", env=by_cache)
    assert added.returncode == 0, added.stderr
    with connected(key, **zk_options(conf)) as zk:  # this process logs in from the keytab
        assert zk.get_children(f"{key.rsplit(':', 1)[1]}/replication/peers") == ["1"]
    logged_in = time.monotonic()  # after kinit too: every ticket of both caches has run out 65 s from now

    time.sleep(TICKET_LIFETIME_S + 5 - (time.monotonic() - logged_in))

    refused = hbrep("--cluster", key, "add_peer", "2", "zk9:2181:/hbase-c", env=by_cache)
    assert error_line(refused) == (
        f"hbrep: error: the Kerberos ticket of the default principal from FILE:{cache} has expired: "
        "renew it (kinit) or log in from a keytab (hbase.client.keytab.file)"
    )
    with connected(key, **zk_options(conf)) as zk:  # same process, same in-memory cache: tickets renewed
        assert zk.get_children(f"{key.rsplit(':', 1)[1]}/replication/peers") == ["1"]
