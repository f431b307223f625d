"""Spark entry points (thin: they call replication.source and replication.verify)."""
