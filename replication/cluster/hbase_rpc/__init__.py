"""A client of HBase's own RPC (HBase 2.x region servers), enough to call ``AdminService.ReplicateWALEntry``.

HBase's RPC is not gRPC: one TCP connection starts with a 6-byte preamble and an int32-framed
ConnectionHeader, then carries int32-framed calls, each a delimited RequestHeader, a delimited request
message and an optional cell block. The spec is HBase's RPC.proto (comments at its top), Admin.proto,
WAL.proto and the reference guide's RPC appendix. One concept per module:

- ``preamble``: the connection preamble and the ConnectionHeader;
- ``framing``: request and response frames (RequestHeader / ResponseHeader);
- ``cell_block``: cells in a cell block with HBase's KeyValue codecs;
- ``remote_errors``: HBase's exceptions (ExceptionResponse) as hbrep's sink errors;
- ``connection``: one connection to one server (connect, call, close);
- ``sink_client``: the replication sink client over that connection.
"""
