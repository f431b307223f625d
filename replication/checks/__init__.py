"""Checks of replicated tables: HBase's VerifyReplication (``verify.py``), the Great Expectations
checks and their Data Docs (``quality.py``, ``quality_docs.py``), and both checks for one (peer, table)
resolved from ZooKeeper and recorded (``peer_checks.py``)."""
