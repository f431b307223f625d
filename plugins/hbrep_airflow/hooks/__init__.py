"""Hooks: ZooKeeperHook (connection type ``zookeeper``) and ReplicationHook (the library's steps)."""
