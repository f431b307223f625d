from . import ErrorHandling_pb2 as _ErrorHandling_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ProcedureState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    INITIALIZING: _ClassVar[ProcedureState]
    RUNNABLE: _ClassVar[ProcedureState]
    WAITING: _ClassVar[ProcedureState]
    WAITING_TIMEOUT: _ClassVar[ProcedureState]
    ROLLEDBACK: _ClassVar[ProcedureState]
    SUCCESS: _ClassVar[ProcedureState]
    FAILED: _ClassVar[ProcedureState]
INITIALIZING: ProcedureState
RUNNABLE: ProcedureState
WAITING: ProcedureState
WAITING_TIMEOUT: ProcedureState
ROLLEDBACK: ProcedureState
SUCCESS: ProcedureState
FAILED: ProcedureState

class Procedure(_message.Message):
    __slots__ = ("class_name", "parent_id", "proc_id", "submitted_time", "owner", "state", "stack_id", "last_update", "timeout", "exception", "result", "state_data", "nonce_group", "nonce", "locked", "bypass", "executed")
    CLASS_NAME_FIELD_NUMBER: _ClassVar[int]
    PARENT_ID_FIELD_NUMBER: _ClassVar[int]
    PROC_ID_FIELD_NUMBER: _ClassVar[int]
    SUBMITTED_TIME_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    STACK_ID_FIELD_NUMBER: _ClassVar[int]
    LAST_UPDATE_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    EXCEPTION_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    STATE_DATA_FIELD_NUMBER: _ClassVar[int]
    NONCE_GROUP_FIELD_NUMBER: _ClassVar[int]
    NONCE_FIELD_NUMBER: _ClassVar[int]
    LOCKED_FIELD_NUMBER: _ClassVar[int]
    BYPASS_FIELD_NUMBER: _ClassVar[int]
    EXECUTED_FIELD_NUMBER: _ClassVar[int]
    class_name: str
    parent_id: int
    proc_id: int
    submitted_time: int
    owner: str
    state: ProcedureState
    stack_id: _containers.RepeatedScalarFieldContainer[int]
    last_update: int
    timeout: int
    exception: _ErrorHandling_pb2.ForeignExceptionMessage
    result: bytes
    state_data: bytes
    nonce_group: int
    nonce: int
    locked: bool
    bypass: bool
    executed: bool
    def __init__(self, class_name: _Optional[str] = ..., parent_id: _Optional[int] = ..., proc_id: _Optional[int] = ..., submitted_time: _Optional[int] = ..., owner: _Optional[str] = ..., state: _Optional[_Union[ProcedureState, str]] = ..., stack_id: _Optional[_Iterable[int]] = ..., last_update: _Optional[int] = ..., timeout: _Optional[int] = ..., exception: _Optional[_Union[_ErrorHandling_pb2.ForeignExceptionMessage, _Mapping]] = ..., result: _Optional[bytes] = ..., state_data: _Optional[bytes] = ..., nonce_group: _Optional[int] = ..., nonce: _Optional[int] = ..., locked: _Optional[bool] = ..., bypass: _Optional[bool] = ..., executed: _Optional[bool] = ...) -> None: ...
