from . import HBase_pb2 as _HBase_pb2
from . import WAL_pb2 as _WAL_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class WALEntry(_message.Message):
    __slots__ = ("key", "key_value_bytes", "associated_cell_count")
    KEY_FIELD_NUMBER: _ClassVar[int]
    KEY_VALUE_BYTES_FIELD_NUMBER: _ClassVar[int]
    ASSOCIATED_CELL_COUNT_FIELD_NUMBER: _ClassVar[int]
    key: _WAL_pb2.WALKey
    key_value_bytes: _containers.RepeatedScalarFieldContainer[bytes]
    associated_cell_count: int
    def __init__(self, key: _Optional[_Union[_WAL_pb2.WALKey, _Mapping]] = ..., key_value_bytes: _Optional[_Iterable[bytes]] = ..., associated_cell_count: _Optional[int] = ...) -> None: ...

class ReplicateWALEntryRequest(_message.Message):
    __slots__ = ("entry", "replicationClusterId", "sourceBaseNamespaceDirPath", "sourceHFileArchiveDirPath", "cell_block")
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    REPLICATIONCLUSTERID_FIELD_NUMBER: _ClassVar[int]
    SOURCEBASENAMESPACEDIRPATH_FIELD_NUMBER: _ClassVar[int]
    SOURCEHFILEARCHIVEDIRPATH_FIELD_NUMBER: _ClassVar[int]
    CELL_BLOCK_FIELD_NUMBER: _ClassVar[int]
    entry: _containers.RepeatedCompositeFieldContainer[WALEntry]
    replicationClusterId: str
    sourceBaseNamespaceDirPath: str
    sourceHFileArchiveDirPath: str
    cell_block: bytes
    def __init__(self, entry: _Optional[_Iterable[_Union[WALEntry, _Mapping]]] = ..., replicationClusterId: _Optional[str] = ..., sourceBaseNamespaceDirPath: _Optional[str] = ..., sourceHFileArchiveDirPath: _Optional[str] = ..., cell_block: _Optional[bytes] = ...) -> None: ...

class ReplicateWALEntryResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class MutateRequest(_message.Message):
    __slots__ = ("table", "cell_count", "cell_block", "cluster_ids")
    TABLE_FIELD_NUMBER: _ClassVar[int]
    CELL_COUNT_FIELD_NUMBER: _ClassVar[int]
    CELL_BLOCK_FIELD_NUMBER: _ClassVar[int]
    CLUSTER_IDS_FIELD_NUMBER: _ClassVar[int]
    table: str
    cell_count: int
    cell_block: bytes
    cluster_ids: _containers.RepeatedCompositeFieldContainer[_HBase_pb2.UUID]
    def __init__(self, table: _Optional[str] = ..., cell_count: _Optional[int] = ..., cell_block: _Optional[bytes] = ..., cluster_ids: _Optional[_Iterable[_Union[_HBase_pb2.UUID, _Mapping]]] = ...) -> None: ...

class MutateResponse(_message.Message):
    __slots__ = ("cells", "log_sequence_number")
    CELLS_FIELD_NUMBER: _ClassVar[int]
    LOG_SEQUENCE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    cells: int
    log_sequence_number: int
    def __init__(self, cells: _Optional[int] = ..., log_sequence_number: _Optional[int] = ...) -> None: ...

class FlushTableRequest(_message.Message):
    __slots__ = ("table",)
    TABLE_FIELD_NUMBER: _ClassVar[int]
    table: str
    def __init__(self, table: _Optional[str] = ...) -> None: ...

class FlushTableResponse(_message.Message):
    __slots__ = ("files",)
    FILES_FIELD_NUMBER: _ClassVar[int]
    files: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, files: _Optional[_Iterable[str]] = ...) -> None: ...

class RollWALWriterRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class RollWALWriterResponse(_message.Message):
    __slots__ = ("region_to_flush", "new_wal")
    REGION_TO_FLUSH_FIELD_NUMBER: _ClassVar[int]
    NEW_WAL_FIELD_NUMBER: _ClassVar[int]
    region_to_flush: _containers.RepeatedScalarFieldContainer[bytes]
    new_wal: str
    def __init__(self, region_to_flush: _Optional[_Iterable[bytes]] = ..., new_wal: _Optional[str] = ...) -> None: ...

class GetServerInfoRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetServerInfoResponse(_message.Message):
    __slots__ = ("server_name", "current_wal", "write_count")
    SERVER_NAME_FIELD_NUMBER: _ClassVar[int]
    CURRENT_WAL_FIELD_NUMBER: _ClassVar[int]
    WRITE_COUNT_FIELD_NUMBER: _ClassVar[int]
    server_name: _HBase_pb2.ServerName
    current_wal: str
    write_count: int
    def __init__(self, server_name: _Optional[_Union[_HBase_pb2.ServerName, _Mapping]] = ..., current_wal: _Optional[str] = ..., write_count: _Optional[int] = ...) -> None: ...
