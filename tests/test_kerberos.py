"""replication/kerberos.py without a KDC: which identity the configuration asks for, keytab checks, messages."""

from __future__ import annotations

import os

import pytest

from replication.config import Config
from replication.errors import ConfigError
from replication.kerberos import (
    KerberosError,
    KerberosIdentity,
    check_keytab,
    explain,
    kerberos_identity,
    spark_login_conf,
)


def _conf(values: dict[str, str] | None = None) -> Config:
    return Config.load(env={}, overrides=values or {})


def test_simple_authentication_asks_for_no_kerberos_identity():
    assert kerberos_identity(_conf()) is None
    assert kerberos_identity(_conf({"hbase.security.authentication": "simple"})) is None


def test_kerberos_takes_hbases_principal_and_keytab_keys():
    conf = _conf(
        {
            "hbase.security.authentication": "kerberos",
            "hbase.client.kerberos.principal": "hbrep/h@R",
            "hbase.client.keytab.file": "/k",
        }
    )
    assert kerberos_identity(conf) == KerberosIdentity("hbrep/h@R", "/k")
    assert kerberos_identity(_conf({"hbase.security.authentication": "KERBEROS"})) == KerberosIdentity()


def test_the_realms_configuration_travels_with_the_configuration(monkeypatch, tmp_path):
    """A Spark Python worker started before the realm existed gets KRB5_CONFIG from the configuration."""
    from replication.kerberos import login

    conf = _conf({"hbase.security.authentication": "kerberos", "hbrep.kerberos.krb5.conf": "/etc/hbrep/krb5.conf"})
    identity = kerberos_identity(conf)
    assert identity == KerberosIdentity("", "", "/etc/hbrep/krb5.conf")
    monkeypatch.setenv("KRB5_CONFIG", "/elsewhere/krb5.conf")
    login(identity)
    assert os.environ["KRB5_CONFIG"] == "/etc/hbrep/krb5.conf"
    monkeypatch.setenv("KRB5_CONFIG", "/elsewhere/krb5.conf")
    login(kerberos_identity(_conf({"hbase.security.authentication": "kerberos"})))  # unset: the process's own
    assert os.environ["KRB5_CONFIG"] == "/elsewhere/krb5.conf"


def test_a_keytab_without_a_principal_and_an_unknown_method_are_refused():
    with pytest.raises(ConfigError, match=r"hbase\.client\.keytab\.file is set but hbase\.client\.kerberos\.principal"):
        kerberos_identity(_conf({"hbase.security.authentication": "kerberos", "hbase.client.keytab.file": "/k"}))
    with pytest.raises(ConfigError, match=r"hbase\.security\.authentication"):
        _conf({"hbase.security.authentication": "digest"})


def test_only_a_readable_keytab_file_passes(tmp_path):
    good = tmp_path / "good.keytab"
    good.write_bytes(b"\x05\x02\x00\x00")
    check_keytab(str(good))
    (tmp_path / "text").write_text("hello")
    with pytest.raises(KerberosError, match=r"text \(hbase.client.keytab.file\) is not a keytab file$"):
        check_keytab(str(tmp_path / "text"))
    with pytest.raises(KerberosError, match=r"^cannot read the keytab .*: Is a directory$"):
        check_keytab(str(tmp_path))


@pytest.mark.parametrize(
    ("minor", "expected"),
    [
        ("Ticket expired", "the Kerberos ticket of a@R from keytab /k (hbase.client.keytab.file) has expired"),
        (
            "Server zookeeper/h@R not found in Kerberos database",
            "the KDC does not know the service principal for zookeeper@h",
        ),
        ("Cannot contact any KDC for realm 'R'", "Kerberos authentication as a@R from keytab /k"),
    ],
)
def test_gssapi_failures_become_one_line_naming_the_cause(minor, expected):
    error = Exception(("Unspecified GSS failure.  Minor code may provide more information", 851968), (minor, -1))
    line = explain(error, KerberosIdentity("a@R", "/k"), "zookeeper@h")
    assert line.startswith(expected) and "\n" not in line


def test_spark_jvms_log_in_as_the_identity_from_its_keytab_with_the_realms_configuration(tmp_path, monkeypatch):
    monkeypatch.delenv("KRB5_CONFIG", raising=False)
    assert spark_login_conf(None) == {}
    keytab = tmp_path / "hbrep.keytab"
    keytab.write_bytes(b"\x05\x02" + b"\0" * 8)
    conf = spark_login_conf(KerberosIdentity("hbrep/h@R", str(keytab), "/etc/realm.conf"))
    assert conf == {
        "spark.hadoop.hadoop.security.authentication": "kerberos",
        "spark.kerberos.principal": "hbrep/h@R",
        "spark.kerberos.keytab": str(keytab),
        "spark.driver.extraJavaOptions": "-Djava.security.krb5.conf=/etc/realm.conf",
        "spark.executor.extraJavaOptions": "-Djava.security.krb5.conf=/etc/realm.conf",
    }
    # the ticket cache: no keytab settings, and the environment's realm configuration
    monkeypatch.setenv("KRB5_CONFIG", "/env/krb5.conf")
    cache = spark_login_conf(KerberosIdentity())
    assert "spark.kerberos.keytab" not in cache
    assert cache["spark.driver.extraJavaOptions"] == "-Djava.security.krb5.conf=/env/krb5.conf"
    with pytest.raises(KerberosError, match="cannot read the keytab"):
        spark_login_conf(KerberosIdentity("hbrep/h@R", str(tmp_path / "missing.keytab")))
