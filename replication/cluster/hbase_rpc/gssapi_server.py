"""The GSSAPI (Kerberos) SASL mechanism of hbrep's HBase RPC listener, over MIT's GSSAPI (the ``gssapi`` binding).

What the JDK's ``GssKrb5Server`` does for HBase's ``ServerRpcConnection`` when a client's preamble says KERBEROS:

1. the client's first token (the Kerberos AP-REQ for the listener's principal, ``hbase/<host>@REALM``) is
   accepted with the listener's keys (``hbase.regionserver.keytab.file``); the answer is the AP-REP (mutual
   authentication);
2. the client's next token (empty) is answered with the security-layer offer, wrapped without encryption:
   the layers ``hbase.rpc.protection`` allows and the largest packet the listener takes (RFC 4752 3.1);
3. the client's wrapped answer names one offered layer and, optionally, an authorization id, which must be
   the authenticated principal itself (HBase's ``SaslGssCallbackHandler``); the exchange is then complete and
   nothing more is sent.

After it, :meth:`GssapiServer.wrap` and :meth:`GssapiServer.unwrap` protect every packet when the chosen layer is
integrity or privacy. Every failure is a :class:`SaslRefused` carrying one line for the client and the log.
"""

from __future__ import annotations

from dataclasses import dataclass

from replication.cluster.hbase_rpc.rpc_kerberos import CRYPTO_AES_KEY, REGIONSERVER_PRINCIPAL_KEY, server_principal
from replication.cluster.hbase_rpc.sasl import (
    SaslFrameError,
    decode_answer,
    sasl_qops,
    security_layer_offer,
)
from replication.config import Config
from replication.errors import ConfigError
from replication.kerberos import AUTHENTICATION_KEY, PROTECTION_KEY, KerberosError, check_keytab

KEYTAB_KEY = "hbase.regionserver.keytab.file"
SERVER_FALLBACK_KEY = "hbase.ipc.server.fallback-to-simple-auth-allowed"

SASL_EXCEPTION = "javax.security.sasl.SaslException"
NAMES = {"auth": "authentication", "auth-int": "integrity", "auth-conf": "privacy"}


class SaslRefused(Exception):
    """The SASL exchange of one connection failed; the message is one line saying why."""


@dataclass(frozen=True)
class ListenerKerberos:
    """How hbrep's HBase RPC listener authenticates clients: its principal and keytab, the layers it offers."""

    principal: str
    keytab: str
    qops: tuple[str, ...]
    fallback_to_simple: bool = False  # hbase.ipc.server.fallback-to-simple-auth-allowed: SIMPLE clients served
    crypto_aes: bool = False  # hbase.rpc.crypto.encryption.aes.enabled: AES for clients asking it under privacy

    def credentials(self):
        """The acceptor credentials of :attr:`principal` from :attr:`keytab`; KerberosError with one line when the
        keytab cannot be read or holds no key of the principal."""
        import gssapi  # the GSSAPI binding (C extension) is loaded only by Kerberos users

        check_keytab(self.keytab)
        try:
            name = gssapi.Name(self.principal, gssapi.NameType.kerberos_principal)
            credentials = gssapi.Credentials(name=name, usage="accept", store={"keytab": self.keytab})
            credentials.inquire()  # fails here, not at the first client, when the keytab has no key for the name
        except gssapi.exceptions.GSSError as exc:
            raise KerberosError(
                f"the HBase RPC listener cannot accept as {self.principal} with keytab {self.keytab} "
                f"(hbase.regionserver.keytab.file): {_gss_line(exc)}"
            ) from None
        return credentials


def listener_kerberos(conf: Config, host: str) -> ListenerKerberos | None:
    """The Kerberos settings of the HBase RPC listener advertised as ``host``; None when
    ``hbase.security.authentication`` is simple. ConfigError naming the key when the principal or the keytab is
    not set, or ``hbase.rpc.protection`` is not one HBase knows."""
    if conf.get_str(AUTHENTICATION_KEY, "simple").strip().lower() != "kerberos":
        return None
    pattern = conf.get_str(REGIONSERVER_PRINCIPAL_KEY, "").strip()
    principal = server_principal(pattern, host)
    parts = principal.replace("@", "/").split("/")
    if not pattern or len(parts) != 3 or not all(parts):
        raise ConfigError(
            f"hbase.security.authentication=kerberos: the HBase RPC listener needs {REGIONSERVER_PRINCIPAL_KEY} "
            f"as primary/instance@REALM (e.g. hbase/_HOST@REALM), not {pattern!r}"
        )
    keytab = conf.get_str(KEYTAB_KEY, "").strip()
    if not keytab:
        raise ConfigError(f"hbase.security.authentication=kerberos: the HBase RPC listener needs {KEYTAB_KEY}")
    try:
        qops = sasl_qops(conf.get_str(PROTECTION_KEY, "authentication"))
    except ValueError as exc:
        raise ConfigError(f"{PROTECTION_KEY}: {exc}") from None
    return ListenerKerberos(
        principal, keytab, qops, conf.get_bool(SERVER_FALLBACK_KEY, False), conf.get_bool(CRYPTO_AES_KEY, False)
    )


def _gss_line(exc: Exception) -> str:
    """The GSSAPI failure in one line: its minor (mechanism) message when there is one, which says what is wrong
    ("Cannot decrypt ticket for ..."), else the whole message."""
    gen = getattr(exc, "gen_message", None)
    text = " ".join((gen() if callable(gen) else str(exc)).split())
    return text.rsplit("): ", 1)[-1] if "Minor (" in text else text


class GssapiServer:
    """One SASL GSSAPI exchange, then the security layer, on one connection (see the module docstring)."""

    def __init__(self, settings: ListenerKerberos, credentials):
        import gssapi

        self._gss = gssapi
        self.settings = settings
        self.qop = ""  # the layer agreed, once complete
        self.user = ""  # the client's principal, once authenticated
        self.complete = False
        self._stage = 0  # 0: accepting the context, 1: offer sent, awaiting the answer
        self._context = gssapi.SecurityContext(creds=credentials, usage="accept")

    def evaluate(self, token: bytes) -> bytes | None:
        """The answer to one client token (None once complete: the server sends nothing more);
        SaslRefused with one line when the client cannot be authenticated or chooses a layer not offered."""
        if self._stage == 0:
            try:  # python-gssapi keeps a failed step's error (and its token) and raises it at the next use
                answer = self._context.step(token)
                if not self._context.complete:
                    return answer or b""
                self.user = str(self._context.initiator_name)
            except self._gss.exceptions.GSSError as exc:
                raise SaslRefused(f"GSS initiate failed: {_gss_line(exc)}") from None
            self._stage = 1
            return answer if answer else self._offer()
        if self._stage == 1:
            if token:
                raise SaslRefused("the client's token after the Kerberos handshake is not empty (RFC 4752 3.1)")
            return self._offer()
        return self._take_answer(token)

    def _offer(self) -> bytes:
        self._stage = 2
        return self.wrap_raw(security_layer_offer(self.settings.qops), confidential=False)

    def _take_answer(self, token: bytes) -> None:
        try:
            answer = decode_answer(self.unwrap_raw(token))
        except SaslFrameError as exc:
            raise SaslRefused(str(exc)) from None
        if answer.qop not in self.settings.qops:
            offered = ", ".join(NAMES[q] for q in self.settings.qops)
            raise SaslRefused(
                f"{self.user} chose hbase.rpc.protection {NAMES[answer.qop]}, which this server does not offer "
                f"({offered})"
            )
        if answer.authorization_id and answer.authorization_id != self.user:
            raise SaslRefused(f"{self.user} may not act as {answer.authorization_id} (authorization id refused)")
        self.qop, self.complete = answer.qop, True
        return None

    def wrap_raw(self, data: bytes, confidential: bool) -> bytes:
        """GSS_Wrap of ``data`` (encrypted when ``confidential``)."""
        try:
            return self._context.wrap(data, confidential).message
        except self._gss.exceptions.GSSError as exc:
            raise SaslRefused(f"GSS wrap failed: {_gss_line(exc)}") from None

    def unwrap_raw(self, data: bytes) -> bytes:
        """GSS_Unwrap of ``data``; SaslRefused when its integrity check fails."""
        return self._unwrap(data)[0]

    def _unwrap(self, data: bytes) -> tuple[bytes, bool]:
        try:
            result = self._context.unwrap(data)
        except self._gss.exceptions.GSSError as exc:
            raise SaslRefused(f"GSS unwrap failed: {_gss_line(exc)}") from None
        return result.message, result.encrypted

    def wrap(self, data: bytes) -> bytes:
        """One packet to the client protected with the agreed layer (signed, or signed and encrypted)."""
        return self.wrap_raw(data, confidential=self.qop == "auth-conf")

    def unwrap(self, data: bytes) -> bytes:
        """One packet from the client, checked (and decrypted); SaslRefused when privacy was agreed and the
        packet came unencrypted."""
        plain, encrypted = self._unwrap(data)
        if self.qop == "auth-conf" and not encrypted:
            raise SaslRefused("the client sent an unencrypted packet although privacy was agreed")
        return plain
