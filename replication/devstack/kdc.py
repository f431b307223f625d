"""A Kerberos KDC for the dev stack and the tests: MIT krb5 (Debian's ``krb5-kdc``, ``make krb5``) on loopback.

One realm per state folder, made anew by ``start`` (the database is created with a random master
password), served by ``krb5kdc`` on a free loopback port (TCP and UDP, clients told to use TCP)::

    <state>/krb5.conf       the clients' configuration (KRB5_CONFIG of every process of the run; Java's
                            -Djava.security.krb5.conf), never /etc/krb5.conf
    <state>/kdc.conf        the KDC's profile (KRB5_KDC_PROFILE): database, stash, ticket lifetimes
    <state>/db/             the principal database and its stash
    <state>/keytabs/        keytabs written by :meth:`MitKdc.add_principal` (mode 0600)
    <state>/krb5kdc.log     the KDC's own log; <state>/krb5kdc.pid while it runs

Ticket lifetimes (``ticket_lifetime_s``, the realm's and every principal's maximum, and the clients'
default) are set per run, so a test can run through several short lifetimes. ``stop`` leaves no process.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from replication.errors import HbrepError
from replication.net import LOOPBACK, free_port, port_in_use
from replication.processes import dies_with_parent, pid_alive, read_pid_file, stop_recorded, write_pid_file

DEFAULT_REALM = "HBREP.TEST"
ENCTYPES = "aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96"
SBIN = ("/usr/sbin", "/sbin")
PRINCIPAL_NAME = re.compile(r"[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)?(@[A-Z0-9.-]+)?")


class KdcError(HbrepError):
    """The KDC could not be set up, started, reached or asked for a principal."""


def krb5_tool(name: str) -> str:
    """The path of an MIT krb5 program (``krb5kdc``, ``kdb5_util``, ``kadmin.local``, ``kinit``, ``klist``).

    KdcError naming ``make krb5`` when it is not installed."""
    path = shutil.which(name) or next((f"{d}/{name}" for d in SBIN if os.access(f"{d}/{name}", os.X_OK)), None)
    if path is None:
        raise KdcError(f"{name} not found (MIT Kerberos is not installed: run `make krb5`)")
    return path


def jaas_keytab_login(section: str, keytab: str | Path, principal: str) -> str:
    """A JAAS file's ``section`` (``Client``, ``Server``) logging in as ``principal`` from ``keytab`` (Java's
    Krb5LoginModule, no ticket cache): what a Kerberized ZooKeeper server and its Java clients read."""
    return (
        f"{section} {{\n  com.sun.security.auth.module.Krb5LoginModule required\n"
        f'  useKeyTab=true\n  keyTab="{keytab}"\n  storeKey=true\n  useTicketCache=false\n'
        f'  principal="{principal}";\n}};\n'
    )


@dataclass(frozen=True)
class Keytab:
    """A principal and the keytab file holding its keys."""

    principal: str
    path: Path


class MitKdc:
    """One MIT KDC and its realm, owned through a state folder (see the module docstring)."""

    def __init__(
        self,
        state_dir: str | os.PathLike[str],
        realm: str = DEFAULT_REALM,
        *,
        port: int | None = None,
        ticket_lifetime_s: int = 3600,
        renew_lifetime_s: int = 7 * 24 * 3600,
    ):
        if ticket_lifetime_s < 60:
            raise KdcError(f"ticket lifetime must be at least 60 s, not {ticket_lifetime_s}")
        self.state_dir = Path(state_dir).resolve()
        self.realm = realm
        self.port = port if port is not None else free_port()
        self.ticket_lifetime_s = ticket_lifetime_s
        self.renew_lifetime_s = max(renew_lifetime_s, ticket_lifetime_s)

    # -- files ----------------------------------------------------------------------------------
    @property
    def krb5_conf(self) -> Path:
        return self.state_dir / "krb5.conf"

    @property
    def kdc_conf(self) -> Path:
        return self.state_dir / "kdc.conf"

    @property
    def keytab_dir(self) -> Path:
        return self.state_dir / "keytabs"

    @property
    def pid_file(self) -> Path:
        return self.state_dir / "krb5kdc.pid"

    @property
    def log_file(self) -> Path:
        return self.state_dir / "krb5kdc.log"

    def env(self) -> dict[str, str]:
        """The environment every process of the run needs to use this realm (``KRB5_CONFIG``), and the
        KDC tools need to find its database (``KRB5_KDC_PROFILE``)."""
        return {"KRB5_CONFIG": str(self.krb5_conf), "KRB5_KDC_PROFILE": str(self.kdc_conf)}

    def write_config(self) -> None:
        """Write krb5.conf (clients: this realm's KDC over TCP, no DNS, no reverse lookups) and kdc.conf."""
        life = f"{self.ticket_lifetime_s}s"
        renew = f"{self.renew_lifetime_s}s"
        self.krb5_conf.write_text(
            "[libdefaults]\n"
            f"  default_realm = {self.realm}\n"
            "  dns_lookup_kdc = false\n  dns_lookup_realm = false\n"
            "  dns_canonicalize_hostname = false\n  rdns = false\n"
            "  udp_preference_limit = 1\n"
            f"  ticket_lifetime = {life}\n  renew_lifetime = {renew}\n"
            "  forwardable = true\n"
            f"  default_tkt_enctypes = {ENCTYPES}\n  default_tgs_enctypes = {ENCTYPES}\n"
            f"  permitted_enctypes = {ENCTYPES}\n"
            "[realms]\n"
            f"  {self.realm} = {{\n    kdc = {LOOPBACK}:{self.port}\n  }}\n"
            "[domain_realm]\n"
            f"  {LOOPBACK} = {self.realm}\n  localhost = {self.realm}\n"
        )
        db = self.state_dir / "db"
        self.kdc_conf.write_text(
            "[kdcdefaults]\n"
            f"  kdc_listen = {LOOPBACK}:{self.port}\n  kdc_tcp_listen = {LOOPBACK}:{self.port}\n"
            "[realms]\n"
            f"  {self.realm} = {{\n"
            f"    database_name = {db / 'principal'}\n"
            f"    key_stash_file = {db / 'stash'}\n"
            f"    acl_file = {self.state_dir / 'kadm5.acl'}\n"
            f"    max_life = {life}\n    max_renewable_life = {renew}\n"
            f"    supported_enctypes = {' '.join(e + ':normal' for e in ENCTYPES.split())}\n"
            "  }\n"
            "[logging]\n"
            f"  kdc = FILE:{self.log_file}\n"
        )
        (self.state_dir / "kadm5.acl").write_text("")

    # -- lifecycle ------------------------------------------------------------------------------
    def running(self) -> bool:
        """True while the recorded krb5kdc process is alive."""
        pid = read_pid_file(self.pid_file)
        return pid is not None and pid_alive(pid)

    def start(self, timeout: float = 20.0) -> int:
        """Create the realm's database and start ``krb5kdc`` on ``port``; return its pid once it accepts
        TCP connections. KdcError (one line, plus the log tail) when a KDC already runs from this folder,
        the port is taken, MIT krb5 is missing or the KDC does not serve within ``timeout``."""
        krb5kdc = krb5_tool("krb5kdc")
        if self.running():
            raise KdcError(f"a KDC already runs from {self.state_dir} (pid {read_pid_file(self.pid_file)})")
        if port_in_use(self.port):
            raise KdcError(f"port {self.port} on {LOOPBACK} is already in use")
        shutil.rmtree(self.state_dir / "db", ignore_errors=True)
        (self.state_dir / "db").mkdir(parents=True, mode=0o700)
        self.keytab_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.write_config()
        self._run([krb5_tool("kdb5_util"), "create", "-s", "-r", self.realm, "-P", secrets.token_hex(16)], "create")
        with open(self.log_file, "ab") as log:
            process = subprocess.Popen(
                [krb5kdc, "-n", "-r", self.realm],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**os.environ, **self.env()},
                start_new_session=True,
                preexec_fn=dies_with_parent(),  # a killed test run leaves no KDC behind
            )
        write_pid_file(self.pid_file, process.pid)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                self.pid_file.unlink(missing_ok=True)
                raise KdcError(f"krb5kdc exited with code {process.returncode} during start-up{self._log_tail()}")
            if port_in_use(self.port):
                return process.pid
            time.sleep(0.05)
        self.stop()
        raise KdcError(f"krb5kdc did not listen on {LOOPBACK}:{self.port} within {timeout:.0f}s{self._log_tail()}")

    def stop(self, timeout: float = 10.0) -> bool:
        """SIGTERM the KDC, then SIGKILL after ``timeout``; True if it was running. The pid file goes."""
        return stop_recorded(self.pid_file, signal.SIGTERM, timeout)

    # -- principals -----------------------------------------------------------------------------
    def principal(self, name: str) -> str:
        """``name`` with this realm (``hbrep`` -> ``hbrep@HBREP.TEST``), unchanged if it names a realm."""
        return name if "@" in name else f"{name}@{self.realm}"

    def add_principal(self, name: str, keytab: str | os.PathLike[str] | None = None) -> Keytab:
        """Create ``name`` with a random key (ticket lifetime: the run's) and export its keys to a keytab
        (default ``<state>/keytabs/<name with / as _>.keytab``, mode 0600). Several principals may share one
        keytab file (a server's JAAS takes one)."""
        if not PRINCIPAL_NAME.fullmatch(name):
            raise KdcError(f"{name!r} is not a Kerberos principal name (primary[/instance][@REALM])")
        principal = self.principal(name)
        path = (
            Path(keytab)
            if keytab is not None
            else self.keytab_dir / (principal.split("@")[0].replace("/", "_") + ".keytab")
        )
        life = f"{self.ticket_lifetime_s} seconds"
        renew = f"{self.renew_lifetime_s} seconds"
        self.kadmin(f'addprinc -randkey -maxlife "{life}" -maxrenewlife "{renew}" {principal}')
        self.kadmin(f"ktadd -norandkey -k {path} {principal}")
        if not path.exists():
            raise KdcError(f"kadmin.local wrote no keytab {path} for {principal}")
        path.chmod(0o600)
        return Keytab(principal, path)

    def kadmin(self, query: str) -> str:
        """Run one ``kadmin.local`` query on this realm's database; KdcError with its message on failure."""
        done = self._run([krb5_tool("kadmin.local"), "-r", self.realm, "-q", query], query.split()[0])
        return done.stdout

    def kinit(self, keytab: Keytab, ccache: str | os.PathLike[str], *, renewable: bool = False) -> None:
        """Get a ticket for ``keytab``'s principal into the credential cache ``ccache`` (``kinit -kt``)."""
        command = [krb5_tool("kinit"), "-kt", str(keytab.path), "-c", f"FILE:{ccache}"]
        if renewable:
            command += ["-r", f"{self.renew_lifetime_s}s"]
        self._run([*command, keytab.principal], "kinit")

    def _run(
        self, command: list[str], what: str, extra_env: Mapping[str, str] | None = None
    ) -> subprocess.CompletedProcess:
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            env={**os.environ, **self.env(), **(extra_env or {})},
            timeout=60,
        )
        # kadmin.local exits 0 after a failed query: anything on stderr but its policy notice is an error
        errors = [line for line in done.stderr.splitlines() if line.strip() and "No policy specified" not in line]
        if done.returncode != 0 or errors:
            detail = errors[0].strip() if errors else f"exit {done.returncode}"
            raise KdcError(f"{Path(command[0]).name} {what} failed for realm {self.realm}: {detail}")
        return done

    def _log_tail(self, lines: int = 10) -> str:
        try:
            tail = "\n".join(self.log_file.read_text(errors="replace").splitlines()[-lines:])
        except FileNotFoundError:
            return ""
        return f"; log tail ({self.log_file}):\n{tail}" if tail else ""
