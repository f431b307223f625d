from . import HBase_pb2 as _HBase_pb2
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ReplicationHLogPosition(_message.Message):
    __slots__ = ("position",)
    POSITION_FIELD_NUMBER: _ClassVar[int]
    position: int
    def __init__(self, position: _Optional[int] = ...) -> None: ...

class ReplicationLock(_message.Message):
    __slots__ = ("lock_owner",)
    LOCK_OWNER_FIELD_NUMBER: _ClassVar[int]
    lock_owner: str
    def __init__(self, lock_owner: _Optional[str] = ...) -> None: ...

class Master(_message.Message):
    __slots__ = ("master", "rpc_version", "info_port")
    MASTER_FIELD_NUMBER: _ClassVar[int]
    RPC_VERSION_FIELD_NUMBER: _ClassVar[int]
    INFO_PORT_FIELD_NUMBER: _ClassVar[int]
    master: _HBase_pb2.ServerName
    rpc_version: int
    info_port: int
    def __init__(self, master: _Optional[_Union[_HBase_pb2.ServerName, _Mapping]] = ..., rpc_version: _Optional[int] = ..., info_port: _Optional[int] = ...) -> None: ...
