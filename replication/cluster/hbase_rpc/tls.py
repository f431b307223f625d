"""HBase's RPC TLS on hbrep's HBase RPC client, configured with HBase's own keys (X509Util, NettyRpcConnection).

- ``hbase.client.netty.tls.enabled``: connect to HBase servers with TLS (the handshake comes before the
  connection preamble, as HBase's NettyRpcConnection does);
- ``hbase.rpc.tls.truststore.location`` / ``.type`` / ``.password``: the CA(s) trusted to sign the servers'
  certificates (PEM or PKCS12; empty location = the system's default roots);
- ``hbase.rpc.tls.keystore.location`` / ``.type`` / ``.password``: this client's certificate and key, presented
  when the server asks (HBase servers demand one by default: ``hbase.server.netty.tls.client.auth.mode=NEED``);
- ``hbase.client.netty.tls.verify.server.hostname``: the server's certificate must name the host connected
  to (default true, as HBase).

The same stores serve the HBase RPC listener of hbrep's region servers (what a real HBase ships into), with
HBase's server keys: ``hbase.server.netty.tls.enabled`` (TLS on the listener), ``.supportplaintext`` (plain-text
clients still served, HBase's default true), ``.client.auth.mode`` (``NEED``, HBase's default, ``OPTIONAL`` or
``NONE``: client certificates verified against the trust store).

A type left empty is taken from the file's extension (``.jks``, ``.p12``/``.pfx``, ``.bcfks``, else PEM), as
HBase does. JKS and BCFKS stores are Java's formats: hbrep refuses them with one line saying to convert.
"""

from __future__ import annotations

import os
import ssl
import tempfile
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12

from replication.config import Config
from replication.errors import ConfigError

ENABLED = "hbase.client.netty.tls.enabled"
VERIFY_SERVER_HOSTNAME = "hbase.client.netty.tls.verify.server.hostname"
TRUSTSTORE = "hbase.rpc.tls.truststore"
KEYSTORE = "hbase.rpc.tls.keystore"
PLAIN_TEXT_HINT = f"plain text: if the server demands TLS, set {ENABLED}=true"
SERVER_ENABLED = "hbase.server.netty.tls.enabled"
SUPPORT_PLAINTEXT = "hbase.server.netty.tls.supportplaintext"
CLIENT_AUTH_MODE = "hbase.server.netty.tls.client.auth.mode"
_VERIFY_MODES = {"NONE": ssl.CERT_NONE, "OPTIONAL": ssl.CERT_OPTIONAL, "NEED": ssl.CERT_REQUIRED}


def store_type(conf: Config, prefix: str) -> str:
    """``PEM`` / ``PKCS12`` / ``JKS`` / ``BCFKS`` of ``<prefix>.type``, else from the location's extension."""
    configured = conf.get_str(f"{prefix}.type", "").strip().upper()
    if configured:
        return configured
    suffix = Path(conf.get_str(f"{prefix}.location", "")).suffix.lower()
    return {".jks": "JKS", ".p12": "PKCS12", ".pfx": "PKCS12", ".bcfks": "BCFKS"}.get(suffix, "PEM")


def _read(conf: Config, prefix: str) -> bytes:
    path = conf.get_str(f"{prefix}.location", "")
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read {prefix}.location file {path}: {exc.strerror}") from None


def _pkcs12(conf: Config, prefix: str) -> pkcs12.PKCS12KeyAndCertificates:
    password = conf.get_str(f"{prefix}.password", "")
    try:
        return pkcs12.load_pkcs12(_read(conf, prefix), password.encode() or None)
    except ValueError:
        raise ConfigError(
            f"{prefix}.location {conf.get_str(f'{prefix}.location')} is not a PKCS12 store {prefix}.password opens"
        ) from None


def _check_readable_type(conf: Config, prefix: str) -> str:
    kind = store_type(conf, prefix)
    if kind not in ("PEM", "PKCS12"):
        raise ConfigError(
            f"{prefix}.type {kind}: hbrep reads PEM or PKCS12 stores "
            f"(convert with keytool -importkeystore -deststoretype PKCS12)"
        )
    return kind


def _trust(context: ssl.SSLContext, conf: Config, purpose: ssl.Purpose = ssl.Purpose.SERVER_AUTH) -> None:
    if not conf.get_str(f"{TRUSTSTORE}.location", ""):
        context.load_default_certs(purpose)
        return
    if _check_readable_type(conf, TRUSTSTORE) == "PKCS12":
        store = _pkcs12(conf, TRUSTSTORE)
        certs = [entry.certificate for entry in store.additional_certs]
        if store.cert is not None:
            certs.append(store.cert.certificate)
        pem = b"".join(cert.public_bytes(serialization.Encoding.PEM) for cert in certs).decode()
    else:
        pem = _read(conf, TRUSTSTORE).decode("ascii", "ignore")
    try:
        context.load_verify_locations(cadata=pem)
    except (ssl.SSLError, ValueError, TypeError):
        where = conf.get_str(f"{TRUSTSTORE}.location")
        raise ConfigError(f"{TRUSTSTORE}.location {where} holds no certificate hbrep can read") from None


def _identity(context: ssl.SSLContext, conf: Config) -> None:
    location = conf.get_str(f"{KEYSTORE}.location", "")
    if not location:
        return
    password = conf.get_str(f"{KEYSTORE}.password", "")
    if _check_readable_type(conf, KEYSTORE) == "PEM":
        pem = _read(conf, KEYSTORE)
    else:
        store = _pkcs12(conf, KEYSTORE)
        if store.key is None or store.cert is None:
            raise ConfigError(f"{KEYSTORE}.location {location} holds no private key with its certificate")
        pem = store.key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ) + b"".join(c.public_bytes(serialization.Encoding.PEM) for c in [store.cert.certificate] + [
            entry.certificate for entry in store.additional_certs
        ])  # fmt: skip
        password = ""
    # ssl loads a key only from a file: a private one, removed at once.
    with tempfile.TemporaryDirectory(prefix="hbrep-tls-") as folder:
        path = os.path.join(folder, "identity.pem")
        with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as out:
            out.write(pem)
        try:
            context.load_cert_chain(path, password=password or None)
        except ssl.SSLError:
            raise ConfigError(
                f"{KEYSTORE}.location {location} holds no private key and certificate {KEYSTORE}.password opens"
            ) from None


def client_context(conf: Config) -> ssl.SSLContext | None:
    """The TLS context of connections to HBase servers (None when ``hbase.client.netty.tls.enabled`` is
    false): the server's certificate verified against the trust store, its host name checked unless
    ``hbase.client.netty.tls.verify.server.hostname`` is false; ConfigError naming the key when a store
    cannot be read."""
    if not conf.get_bool(ENABLED, False):
        return None
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_2  # hbase.rpc.tls.protocol's default
    context.check_hostname = conf.get_bool(VERIFY_SERVER_HOSTNAME, True)
    context.verify_mode = ssl.CERT_REQUIRED
    _trust(context, conf)
    _identity(context, conf)
    return context


def server_context(conf: Config) -> ssl.SSLContext | None:
    """The TLS context of the HBase RPC listener (None when ``hbase.server.netty.tls.enabled`` is false): the key
    store's certificate presented, client certificates verified against the trust store as
    ``hbase.server.netty.tls.client.auth.mode`` says; ConfigError naming the key when a store cannot be read or
    no key store is set."""
    if not conf.get_bool(SERVER_ENABLED, False):
        return None
    if not conf.get_str(f"{KEYSTORE}.location", ""):
        raise ConfigError(f"{SERVER_ENABLED}=true needs {KEYSTORE}.location: the listener's certificate and key")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    mode = conf.get_str(CLIENT_AUTH_MODE, "NEED").strip().upper()
    context.verify_mode = _VERIFY_MODES[mode]
    if mode != "NONE":
        _trust(context, conf, ssl.Purpose.CLIENT_AUTH)
    _identity(context, conf)
    return context


def handshake_failure(address: str, exc: ssl.SSLError | OSError) -> str:
    """One line naming the server and why its TLS handshake failed (and the key to look at)."""
    if isinstance(exc, ssl.SSLCertVerificationError):
        message = exc.verify_message or str(exc)
        why = f"server certificate not trusted: {message}; check {TRUSTSTORE}.location"
        if "hostname" in message.lower() or "not valid for" in message:
            why += f" and {VERIFY_SERVER_HOSTNAME}"
        return f"{address}: TLS handshake failed: {why}"
    if isinstance(exc, TimeoutError):
        return f"{address}: TLS handshake timed out"
    reason = (exc.reason or str(exc)) if isinstance(exc, ssl.SSLError) else (exc.strerror or str(exc))
    if "CERTIFICATE" in str(reason).upper() and "ALERT" in str(reason).upper():
        hint = f"the server refused this client's certificate; check {KEYSTORE}.location"
    else:
        hint = "is RPC TLS on at the server?"
    return f"{address}: TLS handshake failed: {reason}; {hint}"
