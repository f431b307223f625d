"""SPNEGO (HTTP ``Negotiate``, RFC 4559) for the WebHDFS client: a ``requests`` auth over MIT's GSSAPI.

What ``requests_kerberos.HTTPKerberosAuth`` does for the ``hdfs`` package's ``KerberosClient``, written here
because neither of its forms installs on this stack: its current releases need ``pyspnego`` with
``python-gssapi`` (no wheel for Linux; a source build against krb5's headers), and 0.12, the last one on
``pykerberos``, pulls that package, which clashes with the ``kerberos`` binding hbrep already uses (both are
the module ``kerberos``). So: the same binding as ZooKeeper's and HBase RPC's SASL (``replication/kerberos.py``).

A request answered ``401`` with ``WWW-Authenticate: Negotiate`` is sent once more with a Kerberos token for
``HTTP@<host of the URL>`` (Hadoop's ``dfs.web.authentication.kerberos.principal``, ``HTTP/<host>@REALM``);
the server's answer token, when it sends one, is checked (mutual authentication). Hadoop then sets its
``hadoop.auth`` cookie, which the session sends on later requests, so the handshake is made once per cookie
lifetime, not per request. The identity is the process's (:func:`replication.kerberos.login`: a keytab login,
or the ticket cache of ``KRB5CCNAME``). A failure is one :class:`~replication.kerberos.KerberosError` line.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse

from requests import PreparedRequest, Response
from requests.auth import AuthBase

from replication.kerberos import KerberosError, KerberosIdentity, explain

SERVICE = "HTTP"
_TRIED = "_hbrep_spnego_tried"


def _negotiate_token(header: str) -> str | None:
    """The token of a ``Negotiate <token>`` challenge in a WWW-Authenticate header ('' when bare); None if
    the header offers no Negotiate."""
    for part in header.split(","):
        words = part.strip().split(None, 1)
        if words and words[0].lower() == "negotiate":
            return words[1].strip() if len(words) > 1 else ""
    return None


class SpnegoAuth(AuthBase):
    """Answer HTTP ``Negotiate`` challenges as ``identity`` (see the module docstring)."""

    def __init__(self, identity: KerberosIdentity | None = None, service: str = SERVICE) -> None:
        self.identity = identity or KerberosIdentity()
        self.service = service

    def __call__(self, request: PreparedRequest) -> PreparedRequest:
        request.register_hook("response", self._on_response)
        return request

    def _on_response(self, response: Response, **kwargs: Any) -> Response:
        """Send the request again with a token when the server asked for one; else the response as it is."""
        challenge = _negotiate_token(response.headers.get("WWW-Authenticate", ""))
        if response.status_code != 401 or challenge is None or getattr(response.request, _TRIED, False):
            return response
        import kerberos  # the GSSAPI binding (C extension) is loaded only by Kerberos users

        host = urlparse(response.url).hostname or ""
        target = f"{self.service}@{host}"
        flags = kerberos.GSS_C_MUTUAL_FLAG | kerberos.GSS_C_SEQUENCE_FLAG
        try:
            _, context = kerberos.authGSSClientInit(target, principal=self.identity.principal or None, gssflags=flags)
        except kerberos.GSSError as exc:
            raise KerberosError(explain(exc, self.identity, target)) from None
        try:
            try:
                kerberos.authGSSClientStep(context, "")
            except kerberos.GSSError as exc:
                raise KerberosError(explain(exc, self.identity, target)) from None
            token = kerberos.authGSSClientResponse(context)
            _ = response.content  # read the 401's body, so that its connection goes back to the pool
            response.raw.release_conn()
            retry = response.request.copy()
            retry.headers["Authorization"] = f"Negotiate {token}"
            setattr(retry, _TRIED, True)
            answered = response.connection.send(retry, **kwargs)
            answered.history.append(response)
            answered.request = retry
            if answered.status_code == 401:
                answered.close()
                raise KerberosError(
                    f"{host} refused the Kerberos (SPNEGO) authentication of {self.identity.describe()}: "
                    f"is {self.service}/{host} its dfs.web.authentication.kerberos.principal?"
                )
            reply = _negotiate_token(answered.headers.get("WWW-Authenticate", ""))
            if answered.status_code < 400 and reply:
                try:
                    kerberos.authGSSClientStep(context, reply)
                except kerberos.GSSError as exc:
                    raise KerberosError(
                        f"{target} did not prove it is {self.service}/{host} (mutual authentication): "
                        f"{explain(exc, self.identity, target)}"
                    ) from None
            return answered
        finally:
            kerberos.authGSSClientClean(context)
