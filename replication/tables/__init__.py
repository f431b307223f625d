"""Tables: descriptors (families, REPLICATION_SCOPE), Parquet table files, and their read semantics.

- ``names``: table and family names validated as HBase validates them.
- ``descriptors``: ``TableDescriptor``/``ColumnFamilyDescriptor`` and the ``TableRegistry`` under the root.
- ``table_files``: one flush = one Parquet file of cells with their sequence ids, written atomically.
- ``semantics``: the pure-Python reference of what an HBase scan returns.
- ``spark_views``: the same semantics on Spark over the table files.
"""
