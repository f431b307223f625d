"""The WAL format: HBase's protobuf WAL (PWAL ... LAWP) and the 0.94 SequenceFile HLog (spec §1, §2, §10).

- ``model``: Cell, WALKey, Entry.
- ``cell_codec`` / ``key_codec``: the bytes of cells (KeyValue framing) and of the WALKey protobuf.
- ``writer``: ProtobufLogWriter. ``reader``: open_wal / WALReader (both formats, positions, trailer,
  truncated tails, ship-path raw entries). ``legacy``: the SequenceFile HLog parser.
  ``compression``: compressed WALs (has_compression, tag compression included), read from the first
  entry and written by the writer; ``value_codecs``: the codecs of value compression.
- ``names``: server names, WAL file names, WALs/ and oldWALs/ layout, find_wal.
"""
