"""Queue ids ``peerId[-dead1-dead2...]`` (``ReplicationQueueInfo``, spec §3.3)."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

log = logging.getLogger(__name__)

# ServerName.SERVERNAME_PATTERN: hostname, port, startcode.
SERVER_NAME_PATTERN = re.compile(r"[^,]+,[0-9]+,[0-9]+")


def live_server_names(children: list[str]) -> list[str]:
    """The children of a cluster's ``rs`` znode that are server names (``ServerName.parseServerName``
    form ``host,port,startcode``, as HBase and hbrep name them), sorted; anything else is no server."""
    return sorted(name for name in children if SERVER_NAME_PATTERN.fullmatch(name))


def recovered_queue_id(queue_id: str, dead_server: str) -> str:
    """The id a claimer gives a queue of ``dead_server``: ``queueId + "-" + dead`` (claimQueue)."""
    return f"{queue_id}-{dead_server}"


@dataclass
class ReplicationQueueInfo:
    """The parts of a queue id: the peer, whether it was recovered, and the dead servers in order."""

    queue_id: str
    peer_id: str
    is_recovered: bool
    dead_region_servers: list[str] = field(default_factory=list)

    @classmethod
    def parse(cls, queue_id: str) -> ReplicationQueueInfo:
        """Split at the first "-"; a later "-" separates servers only after 2 commas (hyphenated hosts).

        Parts that do not match host,port,startcode are logged and skipped, as HBase does.
        """
        peer_id, sep, rest = queue_id.partition("-")
        dead: list[str] = []
        if sep:
            start, commas = 0, 0
            for i, char in enumerate(rest):
                if char == ",":
                    commas += 1
                elif char == "-" and commas >= 2:
                    if i > start:
                        _add_server(dead, rest[start:i], queue_id)
                        start = i + 1
                    commas = 0
            if len(rest) - start >= 2:
                _add_server(dead, rest[start:], queue_id)
        return cls(queue_id, peer_id, bool(sep), dead)

    @property
    def owner_of_wals(self) -> str | None:
        """The WALs' original owner: the first dead server (None for a normal queue)."""
        return self.dead_region_servers[0] if self.dead_region_servers else None


def _add_server(dead: list[str], candidate: str, queue_id: str) -> None:
    if SERVER_NAME_PATTERN.fullmatch(candidate):
        dead.append(candidate)
    else:
        log.warning("queue id %s: skipping %r, not a server name", queue_id, candidate)
