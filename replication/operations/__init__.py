"""Operations on whole tables and peers, run by a user or a DAG once rather than every cycle.

Seeding a peer (``seed.py``, and ``seed_snapshot.py`` with HBase's snapshot tools), repairing a peer's
table against the source (``repair.py``, ``sync_table.py``, ``sync_writer.py``), consistency tokens
(``consistency.py``) and a table's replication switch (``table_replication.py``). They stand on the
replication cycle (source/), the Spark jobs (jobs/), the checks (checks/) and a real HBase's client
(hbase/).
"""
