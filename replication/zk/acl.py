"""Optional ZooKeeper ACLs: with digest credentials or Kerberos, every znode we create is creator-only.

``hbrep.zk.auth`` / ``--zk-auth user:password`` adds digest auth to the session
(:func:`replication.zk.client.connect`); :func:`acl_for` then gives ``CREATOR_ALL_ACL`` so only that
identity can read or change the replication state. Without credentials znodes are open, as HBase
leaves them when security is off. :func:`zk_access` turns ZooKeeper's NoAuth into one clear error.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from kazoo.client import KazooClient
from kazoo.exceptions import NoAuthError
from kazoo.security import ACL, CREATOR_ALL_ACL, OPEN_ACL_UNSAFE, READ_ACL_UNSAFE

from replication.errors import HbrepError


class ZooKeeperAccessDenied(HbrepError):
    """ZooKeeper refused an operation because of a znode's ACL."""


def has_digest_auth(zk: KazooClient) -> bool:
    """True when the client session carries digest credentials."""
    return any(scheme == "digest" for scheme, _ in (zk.auth_data or ()))


def has_sasl_auth(zk: KazooClient) -> bool:
    """True when the client session authenticates with SASL (Kerberos, ``hbase.security.authentication``)."""
    return getattr(getattr(zk, "_connection", None), "sasl_options", None) is not None


def acl_for(zk: KazooClient) -> list[ACL]:
    """The ACL for znodes this client creates: creator-only with digest or SASL auth, else open.

    ZooKeeper turns the creator (``auth`` scheme) into the session's authenticated ids: ``digest:user:...``
    and/or ``sasl:<the Kerberos short name>``, so only that identity can read or change the znode."""
    return list(CREATOR_ALL_ACL) if has_digest_auth(zk) or has_sasl_auth(zk) else list(OPEN_ACL_UNSAFE)


def client_readable_acl_for(zk: KazooClient) -> list[ACL]:
    """The ACL for znodes every client must read to find the cluster (HBase's ``ZNodePaths.isClientReadable``:
    ``hbaseid``, the ``rs`` parent): creator-only plus world READ with digest or SASL auth, else open
    (``ZKUtil.createACL``'s ``CREATOR_ALL_AND_WORLD_READABLE``). A peer's HBase reads them as its own identity."""
    if has_digest_auth(zk) or has_sasl_auth(zk):
        return list(CREATOR_ALL_ACL) + list(READ_ACL_UNSAFE)
    return list(OPEN_ACL_UNSAFE)


@contextlib.contextmanager
def zk_access(what: str) -> Iterator[None]:
    """Raise ZooKeeperAccessDenied naming ``what`` when ZooKeeper answers NoAuth inside the block."""
    try:
        yield
    except NoAuthError:
        raise ZooKeeperAccessDenied(
            f"ZooKeeper denied access to {what} (ACL): give the owner's credentials with --zk-auth user:password"
            " (or its Kerberos identity, hbase.client.kerberos.principal)"
        ) from None
