"""Peer secrets by reference: a peer's configuration names where its secret lives, never the secret.

A peer's token and ZooKeeper credentials (``hbrep.cluster.token``, ``hbrep.zk.auth``) are given in the
peer configuration, which is stored in ZooKeeper (the peer znode). So the peer configuration holds a
*reference* under ``<key>.secret`` and the secret is resolved by the process that ships (the snapshot
step, which writes it into the owner-only manifest for the executors):

- ``env:NAME``: the environment variable ``NAME``;
- ``file:/path``: the file's content (trailing whitespace stripped); the file must be a regular file
  owned by this user and readable by nobody else (mode ``0600`` or ``0400``);
- ``airflow-var:NAME``: Airflow variable ``NAME``; ``airflow-conn:ID``: the password of Airflow
  connection ``ID``. The Airflow plugin resolves these through Airflow (any secrets backend) and hands
  them in as a :data:`SecretLookup`; elsewhere Airflow's environment form is read: ``AIRFLOW_VAR_<NAME>``,
  ``AIRFLOW_CONN_<ID>`` (JSON with ``password``, or a URI ``scheme://user:password@host``).

A peer configuration holding a secret itself is refused when the peer is added (see
:func:`refuse_plain_secrets`). This module never imports Airflow.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Mapping
from urllib.parse import unquote, urlsplit

from replication.errors import HbrepError

SECRET_KEYS = ("hbrep.cluster.token", "hbrep.zk.auth")
"""The peer configuration keys whose values are secrets."""
REF_SUFFIX = ".secret"
KINDS = ("env", "file", "airflow-var", "airflow-conn")

SecretLookup = Callable[[str, str], "str | None"]
"""``(kind, name) -> value``, or None to fall back to the default resolution (Airflow kinds only)."""


class SecretError(HbrepError):
    """A secret reference is malformed, or what it names is missing, empty or not owner-only."""


def ref_key(key: str) -> str:
    """``hbrep.cluster.token`` -> ``hbrep.cluster.token.secret``: the key holding the reference."""
    return key + REF_SUFFIX


def parse_ref(ref: str) -> tuple[str, str]:
    """``kind:name`` split and checked; SecretError naming the reference (it holds no secret) otherwise."""
    kind, sep, name = ref.partition(":")
    if not sep or kind not in KINDS or not name.strip():
        raise SecretError(f"bad secret reference {ref!r}: expected one of {', '.join(k + ':NAME' for k in KINDS)}")
    return kind, name.strip()


def resolve_secret(ref: str, lookup: SecretLookup | None = None, env: Mapping[str, str] | None = None) -> str:
    """The secret ``ref`` names (see module doc); SecretError naming the reference when it cannot be had.

    The message never contains the secret itself.
    """
    kind, name = parse_ref(ref)
    env = os.environ if env is None else env
    if kind in ("airflow-var", "airflow-conn") and lookup is not None:
        value = lookup(kind, name)
        if value is not None:
            return _non_empty(value, ref)
    if kind == "env":
        if name not in env:
            raise SecretError(f"secret {ref}: environment variable {name} is not set")
        return _non_empty(env[name], ref)
    if kind == "file":
        return _non_empty(_read_owner_only(name, ref), ref)
    if kind == "airflow-var":
        var = "AIRFLOW_VAR_" + name.upper()
        if var not in env:
            raise SecretError(f"secret {ref}: no Airflow variable {name} (nor {var} in the environment)")
        return _non_empty(env[var], ref)
    var = "AIRFLOW_CONN_" + name.upper()
    if var not in env:
        raise SecretError(f"secret {ref}: no Airflow connection {name} (nor {var} in the environment)")
    return _non_empty(_connection_password(env[var], ref), ref)


def _non_empty(value: str, ref: str) -> str:
    value = value.strip()
    if not value:
        raise SecretError(f"secret {ref} is empty")
    return value


def _read_owner_only(path: str, ref: str) -> str:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as exc:
        raise SecretError(f"secret {ref}: cannot open {path} ({exc.strerror})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SecretError(f"secret {ref}: {path} is not a regular file")
        if info.st_uid != os.getuid():
            raise SecretError(f"secret {ref}: {path} belongs to uid {info.st_uid}, not to this user")
        if info.st_mode & 0o077:
            mode = stat.S_IMODE(info.st_mode)
            raise SecretError(f"secret {ref}: {path} is readable by others (mode {mode:04o}); chmod 600 it")
        data = os.read(fd, 1 << 16)
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise SecretError(f"secret {ref}: {path} is not UTF-8 text") from None


def _connection_password(value: str, ref: str) -> str:
    text = value.strip()
    if text.startswith("{"):
        try:
            password = json.loads(text).get("password")
        except (ValueError, AttributeError):
            raise SecretError(f"secret {ref}: the connection is neither JSON nor a URI") from None
    else:
        try:
            password = urlsplit(text).password
        except ValueError:
            raise SecretError(f"secret {ref}: the connection is neither JSON nor a URI") from None
        password = unquote(password) if password is not None else None
    if not isinstance(password, str):
        raise SecretError(f"secret {ref}: the connection has no password")
    return password


def refuse_plain_secrets(configuration: Mapping[str, str]) -> None:
    """SecretError when a peer configuration holds a secret itself, or a malformed reference.

    The message names the key and the reference form to use, never the value.
    """
    for key in SECRET_KEYS:
        if configuration.get(key):
            raise SecretError(
                f"peer configuration {key} would store a secret in ZooKeeper: set {ref_key(key)} to a "
                f"reference instead ({', '.join(k + ':NAME' for k in KINDS)})"
            )
        if ref_key(key) in configuration:
            parse_ref(configuration[ref_key(key)])


def resolve_peer_secrets(configuration: Mapping[str, str], lookup: SecretLookup | None = None) -> dict[str, str]:
    """``{key: secret}`` for every ``<key>.secret`` reference in a peer configuration (SecretError if one fails).

    A plain value from an older peer (before references) is passed through so existing peers keep working.
    """
    resolved: dict[str, str] = {}
    for key in SECRET_KEYS:
        ref = configuration.get(ref_key(key))
        if ref:
            resolved[key] = resolve_secret(ref, lookup)
        elif configuration.get(key):
            resolved[key] = configuration[key]
    return resolved
