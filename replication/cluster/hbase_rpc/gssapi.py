"""The GSSAPI (Kerberos) SASL mechanism of hbrep's HBase RPC client, over MIT's GSSAPI (the ``kerberos`` binding).

What the JDK's ``GssKrb5Client`` does for HBase's Java client: a Kerberos context with the server's principal
(``service@host``, host-based as ``Sasl.createSaslClient(.., protocol, serverName, ..)``), mutual authentication,
then the security-layer negotiation of RFC 4752 (``sasl.py``), after which :meth:`GssapiClient.wrap` and
:meth:`GssapiClient.unwrap` protect every packet when the negotiated qop is ``auth-int`` or ``auth-conf``.
GSSAPI failures become one-line KerberosErrors (``replication.kerberos.explain``).
"""

from __future__ import annotations

import base64
import contextlib

from replication.cluster.hbase_rpc.sasl import (
    SaslFrameError,
    choose_qop,
    decode_offer,
    security_layer_answer,
)
from replication.kerberos import KerberosError, KerberosIdentity, explain, login, protection_refused


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: str | None) -> bytes:
    return base64.b64decode(text) if text else b""


class GssapiClient:
    """One SASL GSSAPI client for one connection to ``service/host`` as ``identity``, accepting ``qops``."""

    def __init__(self, service: str, host: str, identity: KerberosIdentity, qops: tuple[str, ...]):
        import kerberos  # the GSSAPI binding (C extension) is loaded only by Kerberos users

        self._gss = kerberos
        self.identity, self.qops = identity, qops
        self.target = f"{service}@{host}"
        self.qop = ""  # negotiated once complete
        self.user = ""  # the authenticated client principal, once the context is set up
        self.complete = False
        self._established = False
        login(identity)
        flags = (
            kerberos.GSS_C_MUTUAL_FLAG | kerberos.GSS_C_SEQUENCE_FLAG | kerberos.GSS_C_INTEG_FLAG
            | kerberos.GSS_C_CONF_FLAG
        )  # fmt: skip
        try:
            _, self._context = kerberos.authGSSClientInit(
                self.target, principal=identity.principal or None, gssflags=flags
            )
        except kerberos.GSSError as exc:
            raise KerberosError(explain(exc, identity, self.target)) from None

    def initial_response(self) -> bytes:
        """The first token (the Kerberos AP-REQ); KerberosError when no service ticket can be had."""
        return self._step(b"")

    def _step(self, challenge: bytes) -> bytes:
        try:
            result = self._gss.authGSSClientStep(self._context, _b64(challenge))
            token = _unb64(self._gss.authGSSClientResponse(self._context))
            if result == self._gss.AUTH_GSS_COMPLETE:
                self._established = True
                self.user = self._gss.authGSSClientUserName(self._context) or ""
        except self._gss.GSSError as exc:
            raise KerberosError(explain(exc, self.identity, self.target)) from None
        return token

    def evaluate(self, challenge: bytes) -> bytes:
        """The answer to a server challenge (empty once the context is set up, as the JDK's client sends);
        after the security layer is agreed :attr:`complete` is True. KerberosError when the server offers
        no layer of ``hbase.rpc.protection``; SaslFrameError for a malformed offer."""
        if not self._established:
            return self._step(challenge)
        offer = decode_offer(self.unwrap_raw(challenge))
        qop = choose_qop(self.qops, offer)
        if qop is None:
            raise KerberosError(protection_refused(self.target, self.qops, offer.qops))
        answer = self.wrap_raw(security_layer_answer(qop), confidential=False)
        self.qop, self.complete = qop, True
        return answer

    def wrap_raw(self, data: bytes, confidential: bool) -> bytes:
        """GSS_Wrap of ``data`` (encrypted when ``confidential``)."""
        try:
            self._gss.authGSSClientWrap(self._context, _b64(data), None, 1 if confidential else 0)
            return _unb64(self._gss.authGSSClientResponse(self._context))
        except self._gss.GSSError as exc:
            raise KerberosError(explain(exc, self.identity, self.target)) from None

    def unwrap_raw(self, data: bytes) -> bytes:
        """GSS_Unwrap of ``data``; KerberosError when its integrity check fails."""
        try:
            self._gss.authGSSClientUnwrap(self._context, _b64(data))
            return _unb64(self._gss.authGSSClientResponse(self._context))
        except self._gss.GSSError as exc:
            raise KerberosError(explain(exc, self.identity, self.target)) from None

    def wrap(self, data: bytes) -> bytes:
        """One packet's bytes protected with the negotiated qop (signed, or signed and encrypted)."""
        return self.wrap_raw(data, confidential=self.qop == "auth-conf")

    def unwrap(self, data: bytes) -> bytes:
        """One packet from the server, checked (and decrypted); SaslFrameError when privacy was agreed and the
        packet came unencrypted."""
        plain = self.unwrap_raw(data)
        if self.qop == "auth-conf" and not self._gss.authGSSClientResponseConf(self._context):
            raise SaslFrameError("the server sent an unencrypted packet although privacy was agreed")
        return plain

    def dispose(self) -> None:
        """Free the GSSAPI context."""
        with contextlib.suppress(self._gss.GSSError):
            self._gss.authGSSClientClean(self._context)
