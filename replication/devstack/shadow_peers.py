"""Moved to ``replication/hbase/shadow_peers.py`` (issue 43: no JDK needed). This re-export stays only until
``replication/seed.py`` and ``bench/hbase_native.py`` import the new place; then delete it."""

from replication.hbase.shadow_peers import add_shadow_peer, remove_shadow_peer

__all__ = ["add_shadow_peer", "remove_shadow_peer"]
