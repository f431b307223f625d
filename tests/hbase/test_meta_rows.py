"""hbase:meta rows and region names as HBase writes them (``RegionInfo.createRegionName``, ``info:*`` cells),
and the ``meta-region-server`` znode: round trips under Hypothesis, and bytes taken from a real HBase 2.6.1."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replication.hbase.meta_locator import parse_meta_region_server
from replication.hbase.region_names import (
    BadMetaRow,
    RegionInfo,
    meta_row_bounds,
    parse_meta_row,
    parse_region_info,
    parse_region_name,
    region_info_bytes,
    region_name,
)
from replication.proto import Client_pb2
from replication.wal.model import Cell
from replication.zk.codec import BadZNodeData

# hbase:meta row and info:regioninfo of table t1's first region, as a real HBase 2.6.1 wrote them
REAL_ROW = b"t1,,1795858651431.f2e8afd2abffa3bbc021407d19a6d351."
REAL_REGIONINFO = b'PBUF\x08\xa7\xb2\x91\x8c\xa24\x12\r\n\x07default\x12\x02t1\x1a\x00"\x00(\x000\x008\x00'

tables = st.sampled_from([b"t1", b"ns:t2", b"a.b-c_d", b"x"])
keys = st.binary(max_size=40)
region_ids = st.integers(min_value=0, max_value=(1 << 63) - 1)


def test_a_real_meta_row_parses_to_its_own_name():
    info = parse_region_info(REAL_REGIONINFO)
    assert (info.table, info.start_key, info.end_key, info.region_id) == (b"t1", b"", b"", 1795858651431)
    assert info.region_name == REAL_ROW and info.encoded_name == "f2e8afd2abffa3bbc021407d19a6d351"
    assert parse_region_name(REAL_ROW) == (b"t1", b"", 1795858651431, 0)


@given(tables, keys, region_ids, st.integers(0, 0xFFFF))
def test_region_names_round_trip(table, start, region_id, replica):
    name = region_name(table, start, region_id, replica)
    assert parse_region_name(name) == (table, start, region_id, replica)
    assert name.endswith(b".") and len(name.rsplit(b".", 2)[1]) == 32


@given(tables, keys, keys, region_ids, st.booleans(), st.booleans())
def test_region_info_round_trips(table, start, end, region_id, offline, split):
    info = RegionInfo(table, start, end, region_id, 0, offline, split)
    assert parse_region_info(region_info_bytes(info)) == info


@given(st.binary(max_size=60))
def test_garbage_is_refused_with_a_line_never_a_crash(data):
    for parse in (parse_region_info, parse_region_name):
        try:
            parse(data)
        except BadMetaRow as exc:
            assert "\n" not in str(exc)


@given(tables, keys, keys, region_ids, st.integers(1, 65535), st.integers(0, (1 << 62)))
def test_meta_row_gives_the_location(table, start, end, region_id, port, code):
    info = RegionInfo(table, start, end, region_id)
    row = info.region_name
    cells = [
        Cell(row, b"info", b"regioninfo", 1, 4, region_info_bytes(info)),
        Cell(row, b"info", b"seqnumDuringOpen", 1, 4, struct.pack(">q", 2)),
        Cell(row, b"info", b"server", 1, 4, f"rs.example:{port}".encode()),
        Cell(row, b"info", b"serverstartcode", 1, 4, struct.pack(">q", code)),
    ]
    location = parse_meta_row(row, cells)
    assert location is not None and location.info == info
    assert (location.host, location.port, location.start_code) == ("rs.example", port, code)
    assert location.server_name == f"rs.example,{port},{code}"


def test_split_parents_and_offline_regions_are_not_locations():
    for info in (
        RegionInfo(b"t1", b"", b"", 1, split=True, offline=True),
        RegionInfo(b"t1", b"", b"", 1, offline=True),
    ):
        cell = Cell(info.region_name, b"info", b"regioninfo", 1, 4, region_info_bytes(info))
        assert parse_meta_row(info.region_name, [cell]) is None


def test_an_unassigned_region_has_no_host():
    info = RegionInfo(b"t1", b"a", b"b", 7)
    location = parse_meta_row(
        info.region_name, [Cell(info.region_name, b"info", b"regioninfo", 1, 4, region_info_bytes(info))]
    )
    assert location is not None and location.host == "" and location.port == 0


def test_meta_bounds_are_hbases():
    assert meta_row_bounds("t1") == (b"t1,,", b"t1 ,,")
    assert meta_row_bounds("default:t1") == (b"t1,,", b"t1 ,,")
    assert meta_row_bounds("ns:t1") == (b"ns:t1,,", b"ns:t1 ,,")


def _meta_znode(host: str, port: int, code: int, prefix: bytes = b"") -> bytes:
    message = Client_pb2.MetaRegionServer(rpc_version=0, state=3)
    message.server.host_name, message.server.port, message.server.start_code = host, port, code
    return prefix + b"PBUF" + message.SerializeToString()


@given(st.integers(1, 65535), st.integers(0, 1 << 62), st.binary(max_size=30))
def test_meta_region_server_znode_with_and_without_metadata(port, code, ident):
    metadata = b"\xff" + struct.pack(">i", len(ident)) + ident
    for data in (_meta_znode("h1", port, code), _meta_znode("h1", port, code, metadata)):
        assert parse_meta_region_server(data) == ("h1", port, code)


@pytest.mark.parametrize("data", [b"", b"localhost:16020", b"PBUF\x01", _meta_znode("", 1, 1)])
def test_a_bad_meta_region_server_znode_is_named(data):
    with pytest.raises(BadZNodeData, match="meta-region-server"):
        parse_meta_region_server(data)
