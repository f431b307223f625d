from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional

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
