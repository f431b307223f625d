"""Talking to a real, running HBase 2.x cluster as HBase's own client does.

hbrep's own clusters are reached through ZooKeeper and hbrep's gRPC; a real HBase learns about
peers, tables and their states only through its master's RPC services. This package is the room for
that: it speaks HBase's RPC (``replication/cluster/hbase_rpc``) to the active master found the way
HBase's ``ZKConnectionRegistry`` finds it. One concept per module:

- ``registry``: the active master (``<parent>/master``, or ``hbase.masters``) and the cluster id;
- ``procedures``: waiting on a master procedure (``getProcedureResult`` with backoff and a timeout);
- ``master_errors``: HBase's remote exceptions as one-line HbrepErrors;
- ``peer_convert``: hbrep's ReplicationPeerConfig as HBase's ReplicationPeer message and back;
- ``master_admin``: MasterService calls (replication peers, table DDL, procedures);
- ``master_peers``: a real HBase's peers with ``ReplicationPeerStorage``'s interface (the CLI uses either);
- ``table_schemas``: TableSchema / ColumnFamilySchema as the master sends and takes them;
- ``table_replication``: list/enable/disable_table_replication through the master;
- ``shadow_peers``: ``add_peer --shadow`` / ``remove_peer`` of a shadow peer through ``master_admin``;
- ``peer_doctor``: peer znodes a running master does not know (issue 49), and how to recover;
- the ClientService half (``meta_locator``, ``client_service``, ``table_client`` and their helpers):
  reading and writing a real HBase's tables through its region servers;
- ``replication_barriers``: hbase:meta's ``rep_barrier`` family, for serial peers of a real HBase source.

It may import cluster/, zk/, tables/, config and errors; nothing in cluster/, zk/, wal/ or tables/ imports
it. source/ sits above it: its snapshot reads a real HBase source's replication barriers through it.
"""
