"""Moving hbrep's znodes out of HBase's replication tree (issue 23), once, on first start.

Until issue 23 hbrep kept its leases, dead-server marks, queue journal and consistency tokens inside
``<parent>/replication`` as ``hbrep-*`` children, beside HBase's peers and queues. They now live under
hbrep's own root (``replication.zk.layout``). :func:`migrate_legacy_znodes` copies every persistent znode
of the old places to the new ones (create-if-absent, data kept) and then deletes the old trees. The
journal is not copied: a new journal node has a new czxid, which makes every snapshot cache read the
queues in full once (``queue_snapshot``), so no change can be missed.

It is idempotent and safe to run in several processes at once: copies skip what exists, deletes skip
what is gone, and a process deletes an old tree only after its own copy of it finished. Ephemeral znodes
of the old places (waiters of a process started before the upgrade) are not copied; their sessions end
with those processes. Stop hbrep's DAGs while upgrading, so that no process of the older version still
writes the old places.
"""

from __future__ import annotations

import contextlib
import logging

from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError, NoNodeError, NotEmptyError

from replication.zk.acl import acl_for
from replication.zk.layout import ZNodePaths

log = logging.getLogger(__name__)


def migrate_legacy_znodes(zk: KazooClient, paths: ZNodePaths) -> list[str]:
    """Move hbrep's pre-issue-23 znodes to hbrep's root; return the old paths that were there (moved now)."""
    moved = []
    for old, new, copy_children in paths.legacy_moves():
        if zk.exists(old) is None:
            continue
        if copy_children:
            copied = _copy_tree(zk, old, new)
            log.warning("moved %d znode(s) from %s to %s (hbrep's own root)", copied, old, new)
        else:
            log.warning("dropped %s: hbrep keeps it under %s now (a new one starts there)", old, new)
        _delete_tree(zk, old)
        moved.append(old)
    return moved


def _copy_tree(zk: KazooClient, source: str, target: str) -> int:
    """Copy the persistent znodes under ``source`` to ``target`` (data kept, nothing overwritten)."""
    copied = 0
    try:
        children = zk.get_children(source)
    except NoNodeError:
        return 0
    with contextlib.suppress(NodeExistsError):
        zk.ensure_path(target, acl=acl_for(zk))
    for child in children:
        path = f"{source}/{child}"
        try:
            data, stat = zk.get(path)
        except NoNodeError:
            continue  # another process moved it already
        if stat.ephemeralOwner:
            continue
        with contextlib.suppress(NodeExistsError):
            zk.create(f"{target}/{child}", data, acl=acl_for(zk))
            copied += 1
        copied += _copy_tree(zk, path, f"{target}/{child}") if stat.numChildren else 0
    return copied


def _delete_tree(zk: KazooClient, path: str) -> None:
    """Delete ``path`` and everything under it; what another process deletes meanwhile is fine."""
    for _ in range(5):
        try:
            zk.delete(path, recursive=True)
            return
        except NoNodeError:
            return
        except NotEmptyError:
            continue  # a child appeared while deleting (an old process still writing): try again
    log.warning("could not delete %s: something keeps writing into it", path)
