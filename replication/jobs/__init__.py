"""Spark entry points (thin: they call replication.source and replication.checks.verify)."""
