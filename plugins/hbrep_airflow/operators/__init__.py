"""Thin operators: each one calls one step of the ``replication`` library through ReplicationHook."""
