"""The dev stack's KDC (MIT krb5 from Debian): a realm per run, principals and keytabs, configured lifetimes."""

from __future__ import annotations

import datetime
import os
import subprocess

import pytest

from replication.devstack.kdc import KdcError, Keytab, MitKdc, krb5_tool
from replication.net import free_port, port_in_use
from replication.processes import pid_alive, read_pid_file

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def kdc(tmp_path_factory):
    server = MitKdc(tmp_path_factory.mktemp("kdc"), ticket_lifetime_s=120, renew_lifetime_s=600)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def _tickets(kdc: MitKdc, ccache) -> list[tuple[datetime.datetime, datetime.datetime, str]]:
    """(valid from, expires, service principal) of each ticket in ``ccache``, read with klist."""
    listed = subprocess.run(
        [krb5_tool("klist"), "-c", f"FILE:{ccache}"],
        capture_output=True,
        text=True,
        env={**os.environ, **kdc.env(), "LC_ALL": "C"},
        check=True,
    ).stdout
    rows = []
    for line in listed.splitlines():
        parts = line.split()
        if len(parts) == 5 and parts[0].count("/") == 2:
            start, end = (
                datetime.datetime.strptime(f"{d} {t}", "%m/%d/%y %H:%M:%S") for d, t in (parts[:2], parts[2:4])
            )
            rows.append((start, end, parts[4]))
    return rows


def test_a_principal_gets_tickets_of_the_runs_lifetime_from_its_keytab(kdc, tmp_path):
    keytab = kdc.add_principal("hbrep/127.0.0.1")
    assert keytab.principal == "hbrep/127.0.0.1@HBREP.TEST"
    assert keytab.path.parent == kdc.keytab_dir and keytab.path.stat().st_mode & 0o777 == 0o600
    kdc.kinit(keytab, tmp_path / "cc")
    ((start, end, service),) = _tickets(kdc, tmp_path / "cc")
    assert service == "krbtgt/HBREP.TEST@HBREP.TEST"
    assert (end - start).total_seconds() == 120


def test_the_realm_is_the_runs_own_on_a_loopback_port(kdc):
    assert kdc.env()["KRB5_CONFIG"] == str(kdc.krb5_conf) and kdc.krb5_conf.parent == kdc.state_dir
    conf = kdc.krb5_conf.read_text()
    assert f"kdc = 127.0.0.1:{kdc.port}" in conf and "default_realm = HBREP.TEST" in conf
    assert port_in_use(kdc.port)


def test_several_principals_share_one_keytab_and_each_gets_a_ticket(kdc, tmp_path):
    shared = tmp_path / "service.keytab"
    first = kdc.add_principal("hbase/127.0.0.1", shared)
    second = kdc.add_principal("HTTP/127.0.0.1", shared)
    for index, keytab in enumerate((first, second)):
        kdc.kinit(keytab, tmp_path / f"cc{index}")
        assert _tickets(kdc, tmp_path / f"cc{index}")


def test_bad_requests_are_one_line_errors(kdc, tmp_path):
    with pytest.raises(KdcError, match=r"^'bad name' is not a Kerberos principal name"):
        kdc.add_principal("bad name")
    somebody = kdc.add_principal("somebody")
    with pytest.raises(KdcError, match=r"^kinit kinit failed for realm HBREP.TEST: .*nobody@HBREP.TEST"):
        kdc.kinit(Keytab("nobody@HBREP.TEST", somebody.path), tmp_path / "c")
    with pytest.raises(KdcError, match=r"^a KDC already runs from"):
        kdc.start()
    taken = MitKdc(tmp_path / "other", port=kdc.port)
    with pytest.raises(KdcError, match=rf"^port {kdc.port} on 127.0.0.1 is already in use$"):
        taken.start()
    with pytest.raises(KdcError, match="at least 60 s"):
        MitKdc(tmp_path / "short", ticket_lifetime_s=10)


def test_stop_leaves_no_process_and_frees_the_port(tmp_path):
    server = MitKdc(tmp_path / "kdc", port=free_port())
    pid = server.start()
    assert read_pid_file(server.pid_file) == pid and pid_alive(pid)
    assert server.stop() is True
    assert not pid_alive(pid) and not server.pid_file.exists() and not port_in_use(server.port)
    assert server.stop() is False
