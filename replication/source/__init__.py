"""The source side of replication, one queue at a time: read → filter → batch → ship → positions.

Names follow HBase's classes (``ReplicationSource``, ``ReplicationSourceWALReader``, ``WALEntryStream``,
``ReplicationSourceShipper``, ``ReplicationSinkManager``, ``ReplicationThrottler``, the ``*WALEntryFilter``s),
so an HBase engineer finds their way. Nothing here imports Spark or Airflow: ``replication.jobs.ship``
runs :func:`replication.source.replication_source.ship_queue` inside Spark tasks.
"""
