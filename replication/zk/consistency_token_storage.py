"""Consistency-token records in ZooKeeper (``ConsistencyTokenStorage``): ``<hbrep root>/consistency/<token>``.

One znode per token, holding the record's bytes (zlib'd JSON, :class:`replication.operations.consistency.
TokenRecord`); what a token means and when it expires is :mod:`replication.operations.consistency`. A record
is created once, with :func:`replication.zk.acl.acl_for` (creator-only under ``--zk-auth``), never changed,
and deleted when it expires.
"""

from __future__ import annotations

from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError, NoNodeError

from replication.zk.acl import acl_for
from replication.zk.layout import ZNodePaths


class ConsistencyTokenStorage:
    """The token records of one cluster."""

    def __init__(self, zk: KazooClient, paths: ZNodePaths):
        self.zk = zk
        self.paths = paths

    def path(self, token: str) -> str:
        """``<hbrep root>/consistency/<token>``."""
        return self.paths.consistency_token(token)

    def list_tokens(self) -> list[str]:
        """The names of every stored record (tokens, or whatever else sits there); [] when none was ever
        stored."""
        try:
            return self.zk.get_children(self.paths.consistency_tokens)
        except NoNodeError:
            return []

    def create(self, token: str, data: bytes) -> bool:
        """Store a new record (parents created as needed); False, storing nothing, when a record of that
        name exists already."""
        try:
            self.zk.create(self.path(token), data, acl=acl_for(self.zk), makepath=True)
        except NodeExistsError:
            return False
        return True

    def read(self, token: str) -> bytes | None:
        """The record's bytes; None when there is none."""
        try:
            data, _ = self.zk.get(self.path(token))
        except NoNodeError:
            return None
        return data

    def delete(self, token: str) -> bool:
        """Delete the record; True when this call deleted it (False: there was none, e.g. another sweeper
        got it first)."""
        try:
            self.zk.delete(self.path(token))
        except NoNodeError:
            return False
        return True
