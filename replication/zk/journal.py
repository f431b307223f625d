"""The queue change journal: ``<hbrep root>/journal/q-<seq>`` (hbrep's own; HBase has none).

HBase re-reads every queue of every replicator when it needs them; a batch ship cycle that runs every
minute cannot afford that for 10,000 queues. So every hbrep writer of a queue (add WAL, set position,
remove WALs or queues, claim moves, peer removal, the ship commit) adds, IN THE SAME MULTI as its
change, one PERSISTENT_SEQUENTIAL entry naming what it changed. A reader that remembers the highest
sequence it has seen re-reads only the queues named by newer entries (:mod:`queue_snapshot`).

Entry data (UTF-8 lines): ``rs <delta>`` first when the change added/removed children of the queues
root (replicator nodes, the claim's ``cversion_*`` markers), so a reader can tell whether the root's
cversion moved only by journaled changes; then one ``<server>/<queueId>`` per changed queue, or
``<server>/`` when the replicator itself (its set of queues) changed.

Trimming: :func:`trim` deletes the oldest entries once there are more than ``2 * keep`` (down to
``keep``), and in the SAME multi records the highest deleted sequence as the journal node's data. A
reader lists the entries first and reads that mark second; if the mark is past the sequence it last
saw, entries it never read are gone and it falls back to a full read (see queue_snapshot).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

from kazoo.client import KazooClient, TransactionRequest
from kazoo.exceptions import NodeExistsError, NoNodeError

from replication.zk.acl import acl_for
from replication.zk.codec import BadZNodeData
from replication.zk.layout import JOURNAL_ENTRY_PREFIX as ENTRY_PREFIX
from replication.zk.layout import ZNodePaths

DEFAULT_KEEP = 5_000
_COUNT = re.compile(r"-?[0-9]{1,18}")
_DELETES_PER_MULTI = 2_000  # ~100 bytes per delete op: ~200 KB, far below jute.maxbuffer


def journal_root(paths: ZNodePaths) -> str:
    """``<hbrep root>/journal`` (``<parent>/hbrep/journal`` by default)."""
    return paths.journal


def entry_prefix(paths: ZNodePaths) -> str:
    """The path a sequential entry is created at (ZooKeeper appends the 10-digit sequence)."""
    return paths.journal_entry_prefix()


def entry_seq(name: str) -> int | None:
    """The sequence number of an entry name ``q-0000000042`` (None for anything else)."""
    if not name.startswith(ENTRY_PREFIX):
        return None
    tail = name[len(ENTRY_PREFIX) :]
    return int(tail) if tail.isdigit() else None


def queue_ref(server: str, queue_id: str) -> str:
    """``<server>/<queueId>``: how an entry names a changed queue."""
    return f"{server}/{queue_id}"


def replicator_ref(server: str) -> str:
    """``<server>/``: how an entry names a replicator whose set of queues changed."""
    return f"{server}/"


def encode(refs: Iterable[str], rs_delta: int = 0) -> bytes:
    """The entry data for these refs (and the queues root's child-change count ``rs_delta``)."""
    lines = [f"rs {rs_delta}"] if rs_delta else []
    lines.extend(refs)
    return "\n".join(lines).encode("utf-8")


@dataclass(frozen=True)
class Entry:
    """A decoded journal entry."""

    seq: int
    rs_delta: int
    refs: tuple[str, ...]


def decode(seq: int, data: bytes) -> Entry:
    """Parse an entry's data (see module doc); unknown lines are kept as refs.

    A ``rs`` line whose count is not an integer raises BadZNodeData naming the entry (found by fuzzing).
    """
    delta = 0
    refs = []
    for line in data.decode("utf-8", "replace").splitlines():
        if line.startswith("rs "):
            count = line[3:].strip()
            if not _COUNT.fullmatch(count):
                raise BadZNodeData(f"journal entry {ENTRY_PREFIX}{seq:010d}: bad 'rs' count {count[:20]!r}")
            delta += int(count)
        elif line:
            refs.append(line)
    return Entry(seq, delta, tuple(refs))


def add_entry(tx: TransactionRequest, zk: KazooClient, paths: ZNodePaths, refs: Iterable[str], rs_delta: int = 0):
    """Add the journal entry op to a multi (the multi fails with NoNode if the journal root is missing)."""
    tx.create(entry_prefix(paths), encode(refs, rs_delta), acl=acl_for(zk), sequence=True)


def ensure_root(zk: KazooClient, paths: ZNodePaths) -> None:
    """Create the journal root (and its parents) if missing."""
    with contextlib.suppress(NodeExistsError):
        zk.ensure_path(journal_root(paths), acl=acl_for(zk))


def commit(zk: KazooClient, paths: ZNodePaths, build, refs: Iterable[str], rs_delta: int = 0) -> list:
    """Run ``build(tx)`` + a journal entry as one multi; creates a missing journal root and retries once.

    Returns the multi's outcome list without the journal op's result. The journal op is last, so a
    failure of the caller's own ops shows in their slots as usual.
    """
    refs = list(refs)
    for attempt in range(2):
        tx = zk.transaction()
        build(tx)
        add_entry(tx, zk, paths, refs, rs_delta)
        outcome = tx.commit()
        journal_failed = isinstance(outcome[-1], NoNodeError) and not any(
            isinstance(r, Exception) and type(r).__name__ != "RolledBackError" for r in outcome[:-1]
        )
        if journal_failed and attempt == 0:
            ensure_root(zk, paths)
            continue
        return outcome[:-1]
    return outcome[:-1]


def trim(zk: KazooClient, paths: ZNodePaths, names: list[str], keep: int = DEFAULT_KEEP) -> int:
    """Delete the oldest entries when more than ``2 * keep`` exist, keeping the newest ``keep``.

    Each multi deletes a chunk and sets the journal root's data to the highest deleted sequence
    (version-guarded, so two trimmers cannot interleave). Returns how many entries were deleted.
    """
    entries = sorted((s, n) for n in names if (s := entry_seq(n)) is not None)
    if len(entries) <= 2 * keep:
        return 0
    doomed = entries[: len(entries) - keep]
    root = journal_root(paths)
    deleted = 0
    for start in range(0, len(doomed), _DELETES_PER_MULTI):
        chunk = doomed[start : start + _DELETES_PER_MULTI]
        try:
            _, stat = zk.get(root)
        except NoNodeError:
            return deleted
        tx = zk.transaction()
        tx.set_data(root, str(chunk[-1][0]).encode("ascii"), version=stat.version)
        for _, name in chunk:
            tx.delete(paths.journal_entry(name))
        if any(isinstance(r, Exception) for r in tx.commit()):
            return deleted  # another trimmer is at work; it finishes the job
        deleted += len(chunk)
    return deleted


def trimmed_through(data: bytes) -> int:
    """The highest trimmed sequence recorded in the journal root's data (-1 when none)."""
    text = data.decode("ascii", "replace").strip() if data else ""
    return int(text) if text.isdigit() else -1
