from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class TableName(_message.Message):
    __slots__ = ("namespace", "qualifier")
    NAMESPACE_FIELD_NUMBER: _ClassVar[int]
    QUALIFIER_FIELD_NUMBER: _ClassVar[int]
    namespace: bytes
    qualifier: bytes
    def __init__(self, namespace: _Optional[bytes] = ..., qualifier: _Optional[bytes] = ...) -> None: ...

class UUID(_message.Message):
    __slots__ = ("least_sig_bits", "most_sig_bits")
    LEAST_SIG_BITS_FIELD_NUMBER: _ClassVar[int]
    MOST_SIG_BITS_FIELD_NUMBER: _ClassVar[int]
    least_sig_bits: int
    most_sig_bits: int
    def __init__(self, least_sig_bits: _Optional[int] = ..., most_sig_bits: _Optional[int] = ...) -> None: ...

class ServerName(_message.Message):
    __slots__ = ("host_name", "port", "start_code")
    HOST_NAME_FIELD_NUMBER: _ClassVar[int]
    PORT_FIELD_NUMBER: _ClassVar[int]
    START_CODE_FIELD_NUMBER: _ClassVar[int]
    host_name: str
    port: int
    start_code: int
    def __init__(self, host_name: _Optional[str] = ..., port: _Optional[int] = ..., start_code: _Optional[int] = ...) -> None: ...

class NameStringPair(_message.Message):
    __slots__ = ("name", "value")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    name: str
    value: str
    def __init__(self, name: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...

class NameBytesPair(_message.Message):
    __slots__ = ("name", "value")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    name: str
    value: bytes
    def __init__(self, name: _Optional[str] = ..., value: _Optional[bytes] = ...) -> None: ...

class BytesBytesPair(_message.Message):
    __slots__ = ("first", "second")
    FIRST_FIELD_NUMBER: _ClassVar[int]
    SECOND_FIELD_NUMBER: _ClassVar[int]
    first: bytes
    second: bytes
    def __init__(self, first: _Optional[bytes] = ..., second: _Optional[bytes] = ...) -> None: ...

class TableSchema(_message.Message):
    __slots__ = ("table_name", "attributes", "column_families", "configuration")
    TABLE_NAME_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    COLUMN_FAMILIES_FIELD_NUMBER: _ClassVar[int]
    CONFIGURATION_FIELD_NUMBER: _ClassVar[int]
    table_name: TableName
    attributes: _containers.RepeatedCompositeFieldContainer[BytesBytesPair]
    column_families: _containers.RepeatedCompositeFieldContainer[ColumnFamilySchema]
    configuration: _containers.RepeatedCompositeFieldContainer[NameStringPair]
    def __init__(self, table_name: _Optional[_Union[TableName, _Mapping]] = ..., attributes: _Optional[_Iterable[_Union[BytesBytesPair, _Mapping]]] = ..., column_families: _Optional[_Iterable[_Union[ColumnFamilySchema, _Mapping]]] = ..., configuration: _Optional[_Iterable[_Union[NameStringPair, _Mapping]]] = ...) -> None: ...

class ColumnFamilySchema(_message.Message):
    __slots__ = ("name", "attributes", "configuration")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    CONFIGURATION_FIELD_NUMBER: _ClassVar[int]
    name: bytes
    attributes: _containers.RepeatedCompositeFieldContainer[BytesBytesPair]
    configuration: _containers.RepeatedCompositeFieldContainer[NameStringPair]
    def __init__(self, name: _Optional[bytes] = ..., attributes: _Optional[_Iterable[_Union[BytesBytesPair, _Mapping]]] = ..., configuration: _Optional[_Iterable[_Union[NameStringPair, _Mapping]]] = ...) -> None: ...

class VersionInfo(_message.Message):
    __slots__ = ("version", "url", "revision", "user", "date", "src_checksum", "version_major", "version_minor")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    REVISION_FIELD_NUMBER: _ClassVar[int]
    USER_FIELD_NUMBER: _ClassVar[int]
    DATE_FIELD_NUMBER: _ClassVar[int]
    SRC_CHECKSUM_FIELD_NUMBER: _ClassVar[int]
    VERSION_MAJOR_FIELD_NUMBER: _ClassVar[int]
    VERSION_MINOR_FIELD_NUMBER: _ClassVar[int]
    version: str
    url: str
    revision: str
    user: str
    date: str
    src_checksum: str
    version_major: int
    version_minor: int
    def __init__(self, version: _Optional[str] = ..., url: _Optional[str] = ..., revision: _Optional[str] = ..., user: _Optional[str] = ..., date: _Optional[str] = ..., src_checksum: _Optional[str] = ..., version_major: _Optional[int] = ..., version_minor: _Optional[int] = ...) -> None: ...

class TableState(_message.Message):
    __slots__ = ("state",)
    class State(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        ENABLED: _ClassVar[TableState.State]
        DISABLED: _ClassVar[TableState.State]
        DISABLING: _ClassVar[TableState.State]
        ENABLING: _ClassVar[TableState.State]
    ENABLED: TableState.State
    DISABLED: TableState.State
    DISABLING: TableState.State
    ENABLING: TableState.State
    STATE_FIELD_NUMBER: _ClassVar[int]
    state: TableState.State
    def __init__(self, state: _Optional[_Union[TableState.State, str]] = ...) -> None: ...
