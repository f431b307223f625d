"""Observation: what replication is doing, read without changing it.

The status of peers, tables and queues (``status.py``, typed in ``status_models.py``, a dict only by their
``to_json()``) with HBase's metric meanings, the lag chart's series (``lag_history.py``), the per-peer
replicated-through time (``replicated_through.py``), lag targets (``lag_targets.py``) and alerts
(``alerts.py``), the metrics store of counters and cycle history (``metrics.py``) and their HTTP
endpoints (``metrics_http.py``). It reads queues (zk/), WALs (wal/), tables and the source cluster
(cluster/); the replication cycle (source/) records its counters here, so nothing here imports source/.
"""
