"""HBase's Java tools run as hbrep's Kerberos identity (``devstack/hbase_admin.py``, ``kerberos_login``): what the
tool's hbase-site, JVM options and environment get from hbrep's configuration. The tools at work on a Kerberized
HBase are run by the secure demo (tests/devstack/test_demo_hbase_secure.py: the seed by HBase's snapshot tools)."""

from __future__ import annotations

import pytest

from replication.config import Config
from replication.devstack.hbase_admin import kerberos_login
from replication.kerberos import KerberosError

SERVERS = {
    "hbase.master.kerberos.principal": "hbase/_HOST@R.TEST",
    "hbase.regionserver.kerberos.principal": "hbase/_HOST@R.TEST",
    "hbase.rpc.protection": "privacy",
}


def test_without_kerberos_a_tool_gets_nothing(tmp_path):
    assert kerberos_login(Config.load(env={}), tmp_path) == ({}, [], {})
    assert kerberos_login(None, tmp_path) == ({}, [], {})
    assert list(tmp_path.iterdir()) == []


def test_with_the_ticket_cache_the_tool_reads_it_and_gets_the_servers_keys(tmp_path, monkeypatch):
    monkeypatch.delenv("KRB5_CONFIG", raising=False)
    conf = Config.load(env={}, overrides={"hbase.security.authentication": "kerberos",
                                          "hbrep.kerberos.krb5.conf": "/etc/r.conf", **SERVERS})  # fmt: skip
    site, options, env = kerberos_login(conf, tmp_path)
    assert site == {"hbase.security.authentication": "kerberos", "hadoop.security.authentication": "kerberos",
                    **SERVERS}  # fmt: skip
    assert "-Djava.security.krb5.conf=/etc/r.conf" in options
    assert f"-Djava.security.auth.login.config={tmp_path / 'jaas.conf'}" in options
    assert "useTicketCache=true" in (tmp_path / "jaas.conf").read_text()
    assert env == {"KRB5_CONFIG": "/etc/r.conf"}  # KRB5CCNAME stays the process's own


def test_a_keytab_that_cannot_be_read_is_one_line_naming_it(tmp_path):
    missing = tmp_path / "none.keytab"
    conf = Config.load(env={}, overrides={"hbase.security.authentication": "kerberos",
                                          "hbase.client.kerberos.principal": "hbrep@R.TEST",
                                          "hbase.client.keytab.file": str(missing)})  # fmt: skip
    with pytest.raises(KerberosError) as raised:
        kerberos_login(conf, tmp_path)
    assert str(missing) in str(raised.value) and "\n" not in str(raised.value)
