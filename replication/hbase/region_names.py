"""Region names and hbase:meta rows, as HBase's ``RegionInfo`` writes and reads them.

A region's name (and its row key in ``hbase:meta``) is ``<table>,<startkey>,<regionid>.<encoded>.``:
``<table>`` is ``TableName.getName()`` (``t1`` in the default namespace, else ``ns:t1``), ``<regionid>``
the decimal region id (``_<replica id as 4 hex digits>`` after it for a replica > 0), and ``<encoded>``
the MD5 hex of everything before ``.`` (``RegionInfo.createRegionName``, new format). ``hbase:meta``'s
own region keeps the old name ``hbase:meta,,1``. A region row holds ``info:regioninfo`` (``PBUF`` +
RegionInfo), ``info:server`` (``host:port``) and ``info:serverstartcode`` (8-byte long).
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable
from dataclasses import dataclass

from google.protobuf.message import DecodeError

from replication.errors import HbrepError
from replication.proto import Client_pb2
from replication.tables.names import TableName
from replication.wal.model import Cell

PB_MAGIC = b"PBUF"
META_TABLE = "hbase:meta"
META_REGION_NAME = b"hbase:meta,,1"
CATALOG_FAMILY = b"info"
REGIONINFO_QUALIFIER = b"regioninfo"
SERVER_QUALIFIER = b"server"
STARTCODE_QUALIFIER = b"serverstartcode"
DELIMITER = b","
ENC_SEPARATOR = b"."


class BadMetaRow(HbrepError):
    """An hbase:meta row or region name hbrep cannot read (the message names the row)."""


def table_name_bytes(table: str | TableName) -> bytes:
    """``TableName.getName()``: ``t1`` for default:t1, ``ns:t1`` otherwise (IllegalTableName when invalid)."""
    return str(TableName.parse(table)).encode()


@dataclass(frozen=True)
class RegionInfo:
    """What ``info:regioninfo`` says of one region: table, [start_key, end_key), id, replica, offline/split."""

    table: bytes
    start_key: bytes
    end_key: bytes
    region_id: int
    replica_id: int = 0
    offline: bool = False
    split: bool = False

    @property
    def region_name(self) -> bytes:
        """The full region name (its hbase:meta row key)."""
        return region_name(self.table, self.start_key, self.region_id, self.replica_id)

    @property
    def encoded_name(self) -> str:
        """The 32-hex-digit encoded name (HBase's ``getEncodedName``)."""
        return encoded_name(self.table, self.start_key, self.region_id, self.replica_id)

    def holds(self, row: bytes) -> bool:
        """True when ``row`` is in [start_key, end_key) (an empty end key is the table's end)."""
        return row >= self.start_key and (not self.end_key or row < self.end_key)


def _name_prefix(table: bytes, start_key: bytes, region_id: int, replica_id: int) -> bytes:
    prefix = table + DELIMITER + start_key + DELIMITER + str(region_id).encode()
    if replica_id > 0:
        prefix += b"_" + f"{replica_id:04X}".encode()
    return prefix


def encoded_name(table: bytes, start_key: bytes, region_id: int, replica_id: int = 0) -> str:
    """MD5 hex of ``<table>,<startkey>,<regionid>[_<replica>]`` (``RegionInfo.encodeRegionName``)."""
    return hashlib.md5(_name_prefix(table, start_key, region_id, replica_id)).hexdigest()


def region_name(table: bytes, start_key: bytes, region_id: int, replica_id: int = 0) -> bytes:
    """``<table>,<startkey>,<regionid>.<encoded>.`` (``RegionInfo.createRegionName`` in the new format)."""
    prefix = _name_prefix(table, start_key, region_id, replica_id)
    encoded = hashlib.md5(prefix).hexdigest().encode()
    return prefix + ENC_SEPARATOR + encoded + ENC_SEPARATOR


def parse_region_name(name: bytes) -> tuple[bytes, bytes, int, int]:
    """(table, start key, region id, replica id) of a new-format region name; BadMetaRow when it is not one
    or its encoded part is not the MD5 of the rest."""
    shown = name.decode("utf-8", "backslashreplace")
    if len(name) < 35 or not name.endswith(ENC_SEPARATOR) or name[-34:-33] != ENC_SEPARATOR:
        raise BadMetaRow(f"region name {shown!r} does not end in .<encoded name>.")
    prefix, encoded = name[:-34], name[-33:-1]
    table, sep, rest = prefix.partition(DELIMITER)
    start_key, sep2, id_part = rest.rpartition(DELIMITER)
    if not sep or not sep2 or not table:
        raise BadMetaRow(f"region name {shown!r} is not <table>,<startkey>,<regionid>")
    region_id, underscore, replica = id_part.partition(b"_")
    hex_digits = b"0123456789ABCDEFabcdef"
    if not region_id.isdigit() or (underscore and (not replica or replica.strip(hex_digits))):
        raise BadMetaRow(f"region name {shown!r} has a bad region id {id_part!r}")
    rid, rep = int(region_id), int(replica, 16) if replica else 0
    if hashlib.md5(prefix).hexdigest().encode() != encoded:
        raise BadMetaRow(f"region name {shown!r}: {encoded.decode()} is not the MD5 of the rest")
    return table, start_key, rid, rep


def parse_region_info(value: bytes, where: str = "info:regioninfo") -> RegionInfo:
    """The RegionInfo in an ``info:regioninfo`` value (``PBUF`` + RegionInfo); BadMetaRow naming ``where``."""
    if not value.startswith(PB_MAGIC):
        raise BadMetaRow(f"{where}: not PBUF + RegionInfo")
    info = Client_pb2.RegionInfo()
    try:
        info.ParseFromString(value[len(PB_MAGIC) :])
    except DecodeError as exc:
        raise BadMetaRow(f"{where}: bad RegionInfo protobuf ({exc})") from None
    if not info.IsInitialized():
        raise BadMetaRow(f"{where}: RegionInfo without region_id or table_name")
    name = info.table_name
    table = name.qualifier if name.namespace in (b"", b"default") else name.namespace + b":" + name.qualifier
    return RegionInfo(table, info.start_key, info.end_key, info.region_id, info.replica_id, info.offline, info.split)


def region_info_bytes(info: RegionInfo) -> bytes:
    """``PBUF`` + RegionInfo for ``info`` (what HBase writes to ``info:regioninfo``)."""
    namespace, sep, qualifier = info.table.partition(b":")
    if not sep:
        namespace, qualifier = b"default", info.table
    message = Client_pb2.RegionInfo(region_id=info.region_id, start_key=info.start_key, end_key=info.end_key,
                                    offline=info.offline, split=info.split, replica_id=info.replica_id)  # fmt: skip
    message.table_name.namespace, message.table_name.qualifier = namespace, qualifier
    return PB_MAGIC + message.SerializeToString()


@dataclass(frozen=True)
class RegionLocation:
    """A region and the region server holding it (``host:port``, start code; host "" when unassigned)."""

    info: RegionInfo
    host: str
    port: int
    start_code: int = 0

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def server_name(self) -> str:
        """HBase's ServerName string ``host,port,startcode``."""
        return f"{self.host},{self.port},{self.start_code}"

    @property
    def region_name(self) -> bytes:
        return self.info.region_name


def meta_row_bounds(table: str | TableName) -> tuple[bytes, bytes]:
    """[start, stop) of ``table``'s region rows in hbase:meta: ``<table>,,`` up to ``<table> ,,``
    (``ClientMetaTableAccessor.getTableStartRowForMeta``/``StopRow``: hbase:meta orders its rows with
    ``MetaCellComparator``, table part first, so plain byte bounds such as ``<table>-`` select nothing)."""
    name = table_name_bytes(table)
    return name + DELIMITER + DELIMITER, name + b" " + DELIMITER + DELIMITER


def parse_meta_row(row: bytes, cells: Iterable[Cell]) -> RegionLocation | None:
    """The default replica's location in one hbase:meta row's cells; None for a row that is not a live
    region of its table (no ``info:regioninfo``, or a split parent / offline region). An unassigned
    region (no ``info:server``) comes back with host "" and port 0."""
    info = server = None
    start_code = 0
    for cell in cells:
        if cell.family != CATALOG_FAMILY:
            continue
        if cell.qualifier == REGIONINFO_QUALIFIER:
            info = parse_region_info(cell.value, f"hbase:meta row {row!r} info:regioninfo")
        elif cell.qualifier == SERVER_QUALIFIER and cell.value:
            server = cell.value.decode("utf-8", "replace")
        elif cell.qualifier == STARTCODE_QUALIFIER and len(cell.value) == 8:
            (start_code,) = struct.unpack(">q", cell.value)
    if info is None or info.offline or info.split:
        return None
    if server is None:
        return RegionLocation(info, "", 0, 0)
    host, sep, port = server.rpartition(":")
    if not sep or not port.isdigit():
        raise BadMetaRow(f"hbase:meta row {row!r}: info:server {server!r} is not host:port")
    return RegionLocation(info, host, int(port), start_code)
