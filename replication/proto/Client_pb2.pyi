from . import HBase_pb2 as _HBase_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Consistency(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    STRONG: _ClassVar[Consistency]
    TIMELINE: _ClassVar[Consistency]
STRONG: Consistency
TIMELINE: Consistency

class RegionSpecifier(_message.Message):
    __slots__ = ("type", "value")
    class RegionSpecifierType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        REGION_NAME: _ClassVar[RegionSpecifier.RegionSpecifierType]
        ENCODED_REGION_NAME: _ClassVar[RegionSpecifier.RegionSpecifierType]
    REGION_NAME: RegionSpecifier.RegionSpecifierType
    ENCODED_REGION_NAME: RegionSpecifier.RegionSpecifierType
    TYPE_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    type: RegionSpecifier.RegionSpecifierType
    value: bytes
    def __init__(self, type: _Optional[_Union[RegionSpecifier.RegionSpecifierType, str]] = ..., value: _Optional[bytes] = ...) -> None: ...

class RegionInfo(_message.Message):
    __slots__ = ("region_id", "table_name", "start_key", "end_key", "offline", "split", "replica_id")
    REGION_ID_FIELD_NUMBER: _ClassVar[int]
    TABLE_NAME_FIELD_NUMBER: _ClassVar[int]
    START_KEY_FIELD_NUMBER: _ClassVar[int]
    END_KEY_FIELD_NUMBER: _ClassVar[int]
    OFFLINE_FIELD_NUMBER: _ClassVar[int]
    SPLIT_FIELD_NUMBER: _ClassVar[int]
    REPLICA_ID_FIELD_NUMBER: _ClassVar[int]
    region_id: int
    table_name: _HBase_pb2.TableName
    start_key: bytes
    end_key: bytes
    offline: bool
    split: bool
    replica_id: int
    def __init__(self, region_id: _Optional[int] = ..., table_name: _Optional[_Union[_HBase_pb2.TableName, _Mapping]] = ..., start_key: _Optional[bytes] = ..., end_key: _Optional[bytes] = ..., offline: _Optional[bool] = ..., split: _Optional[bool] = ..., replica_id: _Optional[int] = ...) -> None: ...

class TimeRange(_message.Message):
    __slots__ = ("to",)
    FROM_FIELD_NUMBER: _ClassVar[int]
    TO_FIELD_NUMBER: _ClassVar[int]
    to: int
    def __init__(self, to: _Optional[int] = ..., **kwargs) -> None: ...

class MetaRegionServer(_message.Message):
    __slots__ = ("server", "rpc_version", "state")
    SERVER_FIELD_NUMBER: _ClassVar[int]
    RPC_VERSION_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    server: _HBase_pb2.ServerName
    rpc_version: int
    state: int
    def __init__(self, server: _Optional[_Union[_HBase_pb2.ServerName, _Mapping]] = ..., rpc_version: _Optional[int] = ..., state: _Optional[int] = ...) -> None: ...

class Cell(_message.Message):
    __slots__ = ("row", "family", "qualifier", "timestamp", "cell_type", "value", "tags")
    ROW_FIELD_NUMBER: _ClassVar[int]
    FAMILY_FIELD_NUMBER: _ClassVar[int]
    QUALIFIER_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    CELL_TYPE_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    row: bytes
    family: bytes
    qualifier: bytes
    timestamp: int
    cell_type: int
    value: bytes
    tags: bytes
    def __init__(self, row: _Optional[bytes] = ..., family: _Optional[bytes] = ..., qualifier: _Optional[bytes] = ..., timestamp: _Optional[int] = ..., cell_type: _Optional[int] = ..., value: _Optional[bytes] = ..., tags: _Optional[bytes] = ...) -> None: ...

class Column(_message.Message):
    __slots__ = ("family", "qualifier")
    FAMILY_FIELD_NUMBER: _ClassVar[int]
    QUALIFIER_FIELD_NUMBER: _ClassVar[int]
    family: bytes
    qualifier: _containers.RepeatedScalarFieldContainer[bytes]
    def __init__(self, family: _Optional[bytes] = ..., qualifier: _Optional[_Iterable[bytes]] = ...) -> None: ...

class Get(_message.Message):
    __slots__ = ("row", "column", "attribute", "time_range", "max_versions", "cache_blocks", "store_limit", "store_offset", "existence_only", "closest_row_before", "consistency")
    ROW_FIELD_NUMBER: _ClassVar[int]
    COLUMN_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTE_FIELD_NUMBER: _ClassVar[int]
    TIME_RANGE_FIELD_NUMBER: _ClassVar[int]
    MAX_VERSIONS_FIELD_NUMBER: _ClassVar[int]
    CACHE_BLOCKS_FIELD_NUMBER: _ClassVar[int]
    STORE_LIMIT_FIELD_NUMBER: _ClassVar[int]
    STORE_OFFSET_FIELD_NUMBER: _ClassVar[int]
    EXISTENCE_ONLY_FIELD_NUMBER: _ClassVar[int]
    CLOSEST_ROW_BEFORE_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    row: bytes
    column: _containers.RepeatedCompositeFieldContainer[Column]
    attribute: _containers.RepeatedCompositeFieldContainer[_HBase_pb2.NameBytesPair]
    time_range: TimeRange
    max_versions: int
    cache_blocks: bool
    store_limit: int
    store_offset: int
    existence_only: bool
    closest_row_before: bool
    consistency: Consistency
    def __init__(self, row: _Optional[bytes] = ..., column: _Optional[_Iterable[_Union[Column, _Mapping]]] = ..., attribute: _Optional[_Iterable[_Union[_HBase_pb2.NameBytesPair, _Mapping]]] = ..., time_range: _Optional[_Union[TimeRange, _Mapping]] = ..., max_versions: _Optional[int] = ..., cache_blocks: _Optional[bool] = ..., store_limit: _Optional[int] = ..., store_offset: _Optional[int] = ..., existence_only: _Optional[bool] = ..., closest_row_before: _Optional[bool] = ..., consistency: _Optional[_Union[Consistency, str]] = ...) -> None: ...

class Result(_message.Message):
    __slots__ = ("cell", "associated_cell_count", "exists", "stale", "partial")
    CELL_FIELD_NUMBER: _ClassVar[int]
    ASSOCIATED_CELL_COUNT_FIELD_NUMBER: _ClassVar[int]
    EXISTS_FIELD_NUMBER: _ClassVar[int]
    STALE_FIELD_NUMBER: _ClassVar[int]
    PARTIAL_FIELD_NUMBER: _ClassVar[int]
    cell: _containers.RepeatedCompositeFieldContainer[Cell]
    associated_cell_count: int
    exists: bool
    stale: bool
    partial: bool
    def __init__(self, cell: _Optional[_Iterable[_Union[Cell, _Mapping]]] = ..., associated_cell_count: _Optional[int] = ..., exists: _Optional[bool] = ..., stale: _Optional[bool] = ..., partial: _Optional[bool] = ...) -> None: ...

class GetRequest(_message.Message):
    __slots__ = ("region", "get")
    REGION_FIELD_NUMBER: _ClassVar[int]
    GET_FIELD_NUMBER: _ClassVar[int]
    region: RegionSpecifier
    get: Get
    def __init__(self, region: _Optional[_Union[RegionSpecifier, _Mapping]] = ..., get: _Optional[_Union[Get, _Mapping]] = ...) -> None: ...

class GetResponse(_message.Message):
    __slots__ = ("result",)
    RESULT_FIELD_NUMBER: _ClassVar[int]
    result: Result
    def __init__(self, result: _Optional[_Union[Result, _Mapping]] = ...) -> None: ...

class MutationProto(_message.Message):
    __slots__ = ("row", "mutate_type", "column_value", "timestamp", "attribute", "durability", "time_range", "associated_cell_count", "nonce")
    class Durability(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        USE_DEFAULT: _ClassVar[MutationProto.Durability]
        SKIP_WAL: _ClassVar[MutationProto.Durability]
        ASYNC_WAL: _ClassVar[MutationProto.Durability]
        SYNC_WAL: _ClassVar[MutationProto.Durability]
        FSYNC_WAL: _ClassVar[MutationProto.Durability]
    USE_DEFAULT: MutationProto.Durability
    SKIP_WAL: MutationProto.Durability
    ASYNC_WAL: MutationProto.Durability
    SYNC_WAL: MutationProto.Durability
    FSYNC_WAL: MutationProto.Durability
    class MutationType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        APPEND: _ClassVar[MutationProto.MutationType]
        INCREMENT: _ClassVar[MutationProto.MutationType]
        PUT: _ClassVar[MutationProto.MutationType]
        DELETE: _ClassVar[MutationProto.MutationType]
    APPEND: MutationProto.MutationType
    INCREMENT: MutationProto.MutationType
    PUT: MutationProto.MutationType
    DELETE: MutationProto.MutationType
    class DeleteType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        DELETE_ONE_VERSION: _ClassVar[MutationProto.DeleteType]
        DELETE_MULTIPLE_VERSIONS: _ClassVar[MutationProto.DeleteType]
        DELETE_FAMILY: _ClassVar[MutationProto.DeleteType]
        DELETE_FAMILY_VERSION: _ClassVar[MutationProto.DeleteType]
    DELETE_ONE_VERSION: MutationProto.DeleteType
    DELETE_MULTIPLE_VERSIONS: MutationProto.DeleteType
    DELETE_FAMILY: MutationProto.DeleteType
    DELETE_FAMILY_VERSION: MutationProto.DeleteType
    class ColumnValue(_message.Message):
        __slots__ = ("family", "qualifier_value")
        class QualifierValue(_message.Message):
            __slots__ = ("qualifier", "value", "timestamp", "delete_type", "tags")
            QUALIFIER_FIELD_NUMBER: _ClassVar[int]
            VALUE_FIELD_NUMBER: _ClassVar[int]
            TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
            DELETE_TYPE_FIELD_NUMBER: _ClassVar[int]
            TAGS_FIELD_NUMBER: _ClassVar[int]
            qualifier: bytes
            value: bytes
            timestamp: int
            delete_type: MutationProto.DeleteType
            tags: bytes
            def __init__(self, qualifier: _Optional[bytes] = ..., value: _Optional[bytes] = ..., timestamp: _Optional[int] = ..., delete_type: _Optional[_Union[MutationProto.DeleteType, str]] = ..., tags: _Optional[bytes] = ...) -> None: ...
        FAMILY_FIELD_NUMBER: _ClassVar[int]
        QUALIFIER_VALUE_FIELD_NUMBER: _ClassVar[int]
        family: bytes
        qualifier_value: _containers.RepeatedCompositeFieldContainer[MutationProto.ColumnValue.QualifierValue]
        def __init__(self, family: _Optional[bytes] = ..., qualifier_value: _Optional[_Iterable[_Union[MutationProto.ColumnValue.QualifierValue, _Mapping]]] = ...) -> None: ...
    ROW_FIELD_NUMBER: _ClassVar[int]
    MUTATE_TYPE_FIELD_NUMBER: _ClassVar[int]
    COLUMN_VALUE_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTE_FIELD_NUMBER: _ClassVar[int]
    DURABILITY_FIELD_NUMBER: _ClassVar[int]
    TIME_RANGE_FIELD_NUMBER: _ClassVar[int]
    ASSOCIATED_CELL_COUNT_FIELD_NUMBER: _ClassVar[int]
    NONCE_FIELD_NUMBER: _ClassVar[int]
    row: bytes
    mutate_type: MutationProto.MutationType
    column_value: _containers.RepeatedCompositeFieldContainer[MutationProto.ColumnValue]
    timestamp: int
    attribute: _containers.RepeatedCompositeFieldContainer[_HBase_pb2.NameBytesPair]
    durability: MutationProto.Durability
    time_range: TimeRange
    associated_cell_count: int
    nonce: int
    def __init__(self, row: _Optional[bytes] = ..., mutate_type: _Optional[_Union[MutationProto.MutationType, str]] = ..., column_value: _Optional[_Iterable[_Union[MutationProto.ColumnValue, _Mapping]]] = ..., timestamp: _Optional[int] = ..., attribute: _Optional[_Iterable[_Union[_HBase_pb2.NameBytesPair, _Mapping]]] = ..., durability: _Optional[_Union[MutationProto.Durability, str]] = ..., time_range: _Optional[_Union[TimeRange, _Mapping]] = ..., associated_cell_count: _Optional[int] = ..., nonce: _Optional[int] = ...) -> None: ...

class MutateRequest(_message.Message):
    __slots__ = ("region", "mutation", "nonce_group")
    REGION_FIELD_NUMBER: _ClassVar[int]
    MUTATION_FIELD_NUMBER: _ClassVar[int]
    NONCE_GROUP_FIELD_NUMBER: _ClassVar[int]
    region: RegionSpecifier
    mutation: MutationProto
    nonce_group: int
    def __init__(self, region: _Optional[_Union[RegionSpecifier, _Mapping]] = ..., mutation: _Optional[_Union[MutationProto, _Mapping]] = ..., nonce_group: _Optional[int] = ...) -> None: ...

class MutateResponse(_message.Message):
    __slots__ = ("result", "processed")
    RESULT_FIELD_NUMBER: _ClassVar[int]
    PROCESSED_FIELD_NUMBER: _ClassVar[int]
    result: Result
    processed: bool
    def __init__(self, result: _Optional[_Union[Result, _Mapping]] = ..., processed: _Optional[bool] = ...) -> None: ...

class Scan(_message.Message):
    __slots__ = ("column", "attribute", "start_row", "stop_row", "time_range", "max_versions", "cache_blocks", "batch_size", "max_result_size", "store_limit", "store_offset", "reversed", "consistency", "caching", "allow_partial_results", "mvcc_read_point", "include_start_row", "include_stop_row", "readType", "need_cursor_result")
    class ReadType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        DEFAULT: _ClassVar[Scan.ReadType]
        STREAM: _ClassVar[Scan.ReadType]
        PREAD: _ClassVar[Scan.ReadType]
    DEFAULT: Scan.ReadType
    STREAM: Scan.ReadType
    PREAD: Scan.ReadType
    COLUMN_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTE_FIELD_NUMBER: _ClassVar[int]
    START_ROW_FIELD_NUMBER: _ClassVar[int]
    STOP_ROW_FIELD_NUMBER: _ClassVar[int]
    TIME_RANGE_FIELD_NUMBER: _ClassVar[int]
    MAX_VERSIONS_FIELD_NUMBER: _ClassVar[int]
    CACHE_BLOCKS_FIELD_NUMBER: _ClassVar[int]
    BATCH_SIZE_FIELD_NUMBER: _ClassVar[int]
    MAX_RESULT_SIZE_FIELD_NUMBER: _ClassVar[int]
    STORE_LIMIT_FIELD_NUMBER: _ClassVar[int]
    STORE_OFFSET_FIELD_NUMBER: _ClassVar[int]
    REVERSED_FIELD_NUMBER: _ClassVar[int]
    CONSISTENCY_FIELD_NUMBER: _ClassVar[int]
    CACHING_FIELD_NUMBER: _ClassVar[int]
    ALLOW_PARTIAL_RESULTS_FIELD_NUMBER: _ClassVar[int]
    MVCC_READ_POINT_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_START_ROW_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_STOP_ROW_FIELD_NUMBER: _ClassVar[int]
    READTYPE_FIELD_NUMBER: _ClassVar[int]
    NEED_CURSOR_RESULT_FIELD_NUMBER: _ClassVar[int]
    column: _containers.RepeatedCompositeFieldContainer[Column]
    attribute: _containers.RepeatedCompositeFieldContainer[_HBase_pb2.NameBytesPair]
    start_row: bytes
    stop_row: bytes
    time_range: TimeRange
    max_versions: int
    cache_blocks: bool
    batch_size: int
    max_result_size: int
    store_limit: int
    store_offset: int
    reversed: bool
    consistency: Consistency
    caching: int
    allow_partial_results: bool
    mvcc_read_point: int
    include_start_row: bool
    include_stop_row: bool
    readType: Scan.ReadType
    need_cursor_result: bool
    def __init__(self, column: _Optional[_Iterable[_Union[Column, _Mapping]]] = ..., attribute: _Optional[_Iterable[_Union[_HBase_pb2.NameBytesPair, _Mapping]]] = ..., start_row: _Optional[bytes] = ..., stop_row: _Optional[bytes] = ..., time_range: _Optional[_Union[TimeRange, _Mapping]] = ..., max_versions: _Optional[int] = ..., cache_blocks: _Optional[bool] = ..., batch_size: _Optional[int] = ..., max_result_size: _Optional[int] = ..., store_limit: _Optional[int] = ..., store_offset: _Optional[int] = ..., reversed: _Optional[bool] = ..., consistency: _Optional[_Union[Consistency, str]] = ..., caching: _Optional[int] = ..., allow_partial_results: _Optional[bool] = ..., mvcc_read_point: _Optional[int] = ..., include_start_row: _Optional[bool] = ..., include_stop_row: _Optional[bool] = ..., readType: _Optional[_Union[Scan.ReadType, str]] = ..., need_cursor_result: _Optional[bool] = ...) -> None: ...

class ScanRequest(_message.Message):
    __slots__ = ("region", "scan", "scanner_id", "number_of_rows", "close_scanner", "next_call_seq", "client_handles_partials", "client_handles_heartbeats", "track_scan_metrics", "renew", "limit_of_rows")
    REGION_FIELD_NUMBER: _ClassVar[int]
    SCAN_FIELD_NUMBER: _ClassVar[int]
    SCANNER_ID_FIELD_NUMBER: _ClassVar[int]
    NUMBER_OF_ROWS_FIELD_NUMBER: _ClassVar[int]
    CLOSE_SCANNER_FIELD_NUMBER: _ClassVar[int]
    NEXT_CALL_SEQ_FIELD_NUMBER: _ClassVar[int]
    CLIENT_HANDLES_PARTIALS_FIELD_NUMBER: _ClassVar[int]
    CLIENT_HANDLES_HEARTBEATS_FIELD_NUMBER: _ClassVar[int]
    TRACK_SCAN_METRICS_FIELD_NUMBER: _ClassVar[int]
    RENEW_FIELD_NUMBER: _ClassVar[int]
    LIMIT_OF_ROWS_FIELD_NUMBER: _ClassVar[int]
    region: RegionSpecifier
    scan: Scan
    scanner_id: int
    number_of_rows: int
    close_scanner: bool
    next_call_seq: int
    client_handles_partials: bool
    client_handles_heartbeats: bool
    track_scan_metrics: bool
    renew: bool
    limit_of_rows: int
    def __init__(self, region: _Optional[_Union[RegionSpecifier, _Mapping]] = ..., scan: _Optional[_Union[Scan, _Mapping]] = ..., scanner_id: _Optional[int] = ..., number_of_rows: _Optional[int] = ..., close_scanner: _Optional[bool] = ..., next_call_seq: _Optional[int] = ..., client_handles_partials: _Optional[bool] = ..., client_handles_heartbeats: _Optional[bool] = ..., track_scan_metrics: _Optional[bool] = ..., renew: _Optional[bool] = ..., limit_of_rows: _Optional[int] = ...) -> None: ...

class Cursor(_message.Message):
    __slots__ = ("row",)
    ROW_FIELD_NUMBER: _ClassVar[int]
    row: bytes
    def __init__(self, row: _Optional[bytes] = ...) -> None: ...

class ScanResponse(_message.Message):
    __slots__ = ("cells_per_result", "scanner_id", "more_results", "ttl", "results", "stale", "partial_flag_per_result", "more_results_in_region", "heartbeat_message", "mvcc_read_point", "cursor")
    CELLS_PER_RESULT_FIELD_NUMBER: _ClassVar[int]
    SCANNER_ID_FIELD_NUMBER: _ClassVar[int]
    MORE_RESULTS_FIELD_NUMBER: _ClassVar[int]
    TTL_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    STALE_FIELD_NUMBER: _ClassVar[int]
    PARTIAL_FLAG_PER_RESULT_FIELD_NUMBER: _ClassVar[int]
    MORE_RESULTS_IN_REGION_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    MVCC_READ_POINT_FIELD_NUMBER: _ClassVar[int]
    CURSOR_FIELD_NUMBER: _ClassVar[int]
    cells_per_result: _containers.RepeatedScalarFieldContainer[int]
    scanner_id: int
    more_results: bool
    ttl: int
    results: _containers.RepeatedCompositeFieldContainer[Result]
    stale: bool
    partial_flag_per_result: _containers.RepeatedScalarFieldContainer[bool]
    more_results_in_region: bool
    heartbeat_message: bool
    mvcc_read_point: int
    cursor: Cursor
    def __init__(self, cells_per_result: _Optional[_Iterable[int]] = ..., scanner_id: _Optional[int] = ..., more_results: _Optional[bool] = ..., ttl: _Optional[int] = ..., results: _Optional[_Iterable[_Union[Result, _Mapping]]] = ..., stale: _Optional[bool] = ..., partial_flag_per_result: _Optional[_Iterable[bool]] = ..., more_results_in_region: _Optional[bool] = ..., heartbeat_message: _Optional[bool] = ..., mvcc_read_point: _Optional[int] = ..., cursor: _Optional[_Union[Cursor, _Mapping]] = ...) -> None: ...

class Action(_message.Message):
    __slots__ = ("index", "mutation", "get")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    MUTATION_FIELD_NUMBER: _ClassVar[int]
    GET_FIELD_NUMBER: _ClassVar[int]
    index: int
    mutation: MutationProto
    get: Get
    def __init__(self, index: _Optional[int] = ..., mutation: _Optional[_Union[MutationProto, _Mapping]] = ..., get: _Optional[_Union[Get, _Mapping]] = ...) -> None: ...

class RegionAction(_message.Message):
    __slots__ = ("region", "atomic", "action")
    REGION_FIELD_NUMBER: _ClassVar[int]
    ATOMIC_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    region: RegionSpecifier
    atomic: bool
    action: _containers.RepeatedCompositeFieldContainer[Action]
    def __init__(self, region: _Optional[_Union[RegionSpecifier, _Mapping]] = ..., atomic: _Optional[bool] = ..., action: _Optional[_Iterable[_Union[Action, _Mapping]]] = ...) -> None: ...

class ResultOrException(_message.Message):
    __slots__ = ("index", "result", "exception")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    EXCEPTION_FIELD_NUMBER: _ClassVar[int]
    index: int
    result: Result
    exception: _HBase_pb2.NameBytesPair
    def __init__(self, index: _Optional[int] = ..., result: _Optional[_Union[Result, _Mapping]] = ..., exception: _Optional[_Union[_HBase_pb2.NameBytesPair, _Mapping]] = ...) -> None: ...

class RegionActionResult(_message.Message):
    __slots__ = ("resultOrException", "exception", "processed")
    RESULTOREXCEPTION_FIELD_NUMBER: _ClassVar[int]
    EXCEPTION_FIELD_NUMBER: _ClassVar[int]
    PROCESSED_FIELD_NUMBER: _ClassVar[int]
    resultOrException: _containers.RepeatedCompositeFieldContainer[ResultOrException]
    exception: _HBase_pb2.NameBytesPair
    processed: bool
    def __init__(self, resultOrException: _Optional[_Iterable[_Union[ResultOrException, _Mapping]]] = ..., exception: _Optional[_Union[_HBase_pb2.NameBytesPair, _Mapping]] = ..., processed: _Optional[bool] = ...) -> None: ...

class MultiRequest(_message.Message):
    __slots__ = ("regionAction", "nonceGroup")
    REGIONACTION_FIELD_NUMBER: _ClassVar[int]
    NONCEGROUP_FIELD_NUMBER: _ClassVar[int]
    regionAction: _containers.RepeatedCompositeFieldContainer[RegionAction]
    nonceGroup: int
    def __init__(self, regionAction: _Optional[_Iterable[_Union[RegionAction, _Mapping]]] = ..., nonceGroup: _Optional[int] = ...) -> None: ...

class MultiResponse(_message.Message):
    __slots__ = ("regionActionResult", "processed")
    REGIONACTIONRESULT_FIELD_NUMBER: _ClassVar[int]
    PROCESSED_FIELD_NUMBER: _ClassVar[int]
    regionActionResult: _containers.RepeatedCompositeFieldContainer[RegionActionResult]
    processed: bool
    def __init__(self, regionActionResult: _Optional[_Iterable[_Union[RegionActionResult, _Mapping]]] = ..., processed: _Optional[bool] = ...) -> None: ...

class GetRegionInfoRequest(_message.Message):
    __slots__ = ("region", "compaction_state", "best_split_row")
    REGION_FIELD_NUMBER: _ClassVar[int]
    COMPACTION_STATE_FIELD_NUMBER: _ClassVar[int]
    BEST_SPLIT_ROW_FIELD_NUMBER: _ClassVar[int]
    region: RegionSpecifier
    compaction_state: bool
    best_split_row: bool
    def __init__(self, region: _Optional[_Union[RegionSpecifier, _Mapping]] = ..., compaction_state: _Optional[bool] = ..., best_split_row: _Optional[bool] = ...) -> None: ...

class GetRegionInfoResponse(_message.Message):
    __slots__ = ("region_info", "compaction_state")
    class CompactionState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = ()
        NONE: _ClassVar[GetRegionInfoResponse.CompactionState]
        MINOR: _ClassVar[GetRegionInfoResponse.CompactionState]
        MAJOR: _ClassVar[GetRegionInfoResponse.CompactionState]
        MAJOR_AND_MINOR: _ClassVar[GetRegionInfoResponse.CompactionState]
    NONE: GetRegionInfoResponse.CompactionState
    MINOR: GetRegionInfoResponse.CompactionState
    MAJOR: GetRegionInfoResponse.CompactionState
    MAJOR_AND_MINOR: GetRegionInfoResponse.CompactionState
    REGION_INFO_FIELD_NUMBER: _ClassVar[int]
    COMPACTION_STATE_FIELD_NUMBER: _ClassVar[int]
    region_info: RegionInfo
    compaction_state: GetRegionInfoResponse.CompactionState
    def __init__(self, region_info: _Optional[_Union[RegionInfo, _Mapping]] = ..., compaction_state: _Optional[_Union[GetRegionInfoResponse.CompactionState, str]] = ...) -> None: ...

class CompactRegionRequest(_message.Message):
    __slots__ = ("region", "major", "family")
    REGION_FIELD_NUMBER: _ClassVar[int]
    MAJOR_FIELD_NUMBER: _ClassVar[int]
    FAMILY_FIELD_NUMBER: _ClassVar[int]
    region: RegionSpecifier
    major: bool
    family: bytes
    def __init__(self, region: _Optional[_Union[RegionSpecifier, _Mapping]] = ..., major: _Optional[bool] = ..., family: _Optional[bytes] = ...) -> None: ...

class CompactRegionResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...
