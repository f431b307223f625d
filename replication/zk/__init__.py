"""Replication state in ZooKeeper (HBase 2.x layout), the embedded server, and the kazoo client."""
