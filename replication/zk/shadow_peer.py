"""Shadow peers: a real HBase cluster's peer that HBase keeps DISABLED and hbrep ships (issue 21).

HBase keeps a queue for every peer, enabled or not: its region servers add each new WAL to the
peer's queue, its ReplicationLogCleaner keeps every queued WAL, and its master moves a dead server's
queues to a live one. Only the shipping waits for ENABLED (ReplicationSourceWALReader sleeps while
``isPeerEnabled()`` is false). A shadow peer uses exactly that: HBase holds it DISABLED and so
retains everything; hbrep's ship DAG reads the queues, ships, advances the positions and drops the
finished WALs as HBase's own source would.

The mark is an entry of the peer's own configuration (``ReplicationPeerConfig.configuration``, which
HBase stores and otherwise ignores), so the peer is self-describing in HBase's tree and
``hbase shell> list_peers`` shows it: ``hbrep.peer.shadow=true``.
"""

from __future__ import annotations

from collections.abc import Mapping

from replication.zk.peer_storage import ReplicationPeerConfig

SHADOW_KEY = "hbrep.peer.shadow"


def shadow_value(config: ReplicationPeerConfig | Mapping[str, str]) -> bool:
    """True when the peer's configuration (or that mapping itself) says ``hbrep.peer.shadow=true``;
    ValueError naming the key for anything but true/false."""
    configuration = config.configuration if isinstance(config, ReplicationPeerConfig) else config
    raw = str(configuration.get(SHADOW_KEY, "false")).strip().lower()
    if raw not in ("true", "false"):
        raise ValueError(f"{SHADOW_KEY} must be true or false, not {raw!r}")
    return raw == "true"


def is_shadow_peer(config: ReplicationPeerConfig | Mapping[str, str]) -> bool:
    """True for a shadow peer; False for a plain one or an unreadable mark (which hbrep_ships reports)."""
    try:
        return shadow_value(config)
    except ValueError:
        return False


def hbrep_ships(peer_id: str, config: ReplicationPeerConfig, enabled_in_zk: bool) -> tuple[bool, str]:
    """Whether hbrep ships the peer, and the one-line error that fails its queues ('' when none).

    A plain peer ships while its peer-state is ENABLED. A shadow peer ships while HBase holds it
    DISABLED; ENABLED means HBase's own sources ship it too, so hbrep does not, and says why on every
    queue rather than skipping them quietly.
    """
    try:
        shadow = shadow_value(config)
    except ValueError as exc:
        return True, f"peer {peer_id}: {exc}"
    if not shadow:
        return enabled_in_zk, ""
    if enabled_in_zk:
        return True, (
            f"peer {peer_id} is a shadow peer ({SHADOW_KEY}=true) but ENABLED in HBase, whose own sources "
            "then ship it: hbrep ships it only while HBase keeps it DISABLED (disable_peer in HBase's shell)"
        )
    return True, ""
