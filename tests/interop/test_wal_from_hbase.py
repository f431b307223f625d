"""WALs written by real HBase, read by hbrep: `hbrep wal dump --json` on every WAL HBase wrote
(WALs/ and oldWALs/, meta WALs too) gives the entries and cells HBase's own readers give."""

from __future__ import annotations

import json
import uuid

import pytest
from interop.helpers import cells_of_hbrep, cells_of_pretty, copy_wals, hbase_read, hbrep_dump, pretty_print

pytestmark = pytest.mark.slow

# key fields HBase's WALStreamReader and hbrep's dump both print, per entry
KEY_FIELDS = ("table", "region", "sequence", "orig_sequence", "write_time", "nonce_group", "nonce", "cluster_ids",
              "scopes", "extended_attributes", "start", "end")  # fmt: skip
CELL_FIELDS = ("row", "family", "qualifier", "timestamp", "type", "value", "tags")


def _workload(row_prefix: str) -> list[dict]:
    """Puts across families a (scope 1), b (scope 0), c (scope 1), three versions, a binary row, a
    put with a TTL (HBase writes it as a tag), and each kind of delete."""
    r = [f"{row_prefix}-{i}" for i in range(4)]
    return [
        {"op": "put", "row": r[0], "family": "a", "qualifier": "q", "ts": 1000, "value": "v1"},
        {"op": "put", "row": r[0], "family": "a", "qualifier": "q", "ts": 2000, "value": "v2"},
        {"op": "put", "row": r[0], "family": "a", "qualifier": "q", "ts": 3000, "value": "v3"},
        {"op": "multi_put", "row": r[1], "cells": [
            {"family": "a", "qualifier": "x", "value": "ax"},
            {"family": "b", "qualifier": "y", "value": "by"},
            {"family": "c", "qualifier": "z", "value_b64": "AAEC/w=="},
        ]},
        {"op": "put", "row": r[2], "family": "c", "qualifier": "ttl", "value": "expires", "ttl": 86_400_000},
        {"op": "put", "row": r[3], "family": "b", "qualifier": "q", "ts": 10, "value": "b10"},
        {"op": "delete_version", "row": r[0], "family": "a", "qualifier": "q", "ts": 1000},
        {"op": "delete_columns", "row": r[0], "family": "a", "qualifier": "q", "ts": 2500},
        {"op": "delete_family_version", "row": r[1], "family": "a", "ts": 42},
        {"op": "delete_family", "row": r[1], "family": "b"},
        {"op": "delete_row", "row": r[3]},
    ]  # fmt: skip


def _mutate(hbase, table: str, lines: list[dict]) -> None:
    assert hbase.admin("mutate", table, stdin="\n".join(json.dumps(line) for line in lines)) == {"applied": len(lines)}


def test_every_wal_hbase_wrote_reads_the_same_in_hbrep(real_hbase, tmp_path):
    table = f"wal_{uuid.uuid4().hex[:8]}"
    real_hbase.admin("create-table", table, "3", "a:1", "b:0", "c:1")
    _mutate(real_hbase, table, _workload("before"))
    rolled = real_hbase.admin("roll")  # a roll in the middle: the table's edits span two WALs
    _mutate(real_hbase, table, _workload("after"))
    assert len(rolled) == 2

    ours: list[tuple] = []
    finished = in_progress = 0
    wals = copy_wals(real_hbase.rootdir, tmp_path)
    hbase_reads = hbase_read(real_hbase, wals)
    for wal in wals:
        entries, summary = hbrep_dump(wal)
        hbase = hbase_reads[wal]
        # 1. every key field and every cell, against HBase's own WALStreamReader
        assert [{k: e[k] for k in KEY_FIELDS} for e in entries] == [
            {k: e[k] for k in KEY_FIELDS} for e in hbase["items"]
        ], wal
        assert [[{k: c[k] for k in CELL_FIELDS} for c in e["cells"]] for e in entries] == [
            [{k: c[k] for k in CELL_FIELDS} for c in e["cells"]] for e in hbase["items"]
        ], wal
        assert summary["entries"] == hbase["entries"] and summary["position"] == hbase["position"], wal
        # 2. entries, cells (with values) and positions, against WALPrettyPrinter's JSON
        printed, complete = pretty_print(real_hbase, wal)
        assert [(p["table"]["nameAsString"], p["region"], int(p["sequence"])) for p in printed] == [
            (e["table"], e["region"], e["sequence"]) for e in entries
        ], wal
        assert [cells_of_pretty(p) for p in printed] == [cells_of_hbrep(e) for e in entries], wal
        assert [p["position"] for p in printed] == [e["end"] for e in entries], wal
        if summary["trailer_present"]:
            finished += 1
            assert complete, wal
        else:
            # still being written: read up to its last whole entry, exactly where HBase stops
            in_progress += 1
            assert summary["position"] == (entries[-1]["end"] if entries else summary["position"])
        ours += [(e["sequence"], *c) for e in entries if e["table"] == table for c in cells_of_hbrep(e)]
        if any(e["table"] == table for e in entries):
            finished_or_open = "trailer" if summary["trailer_present"] else "open"
            ours.append(("file", finished_or_open))

    # the workload itself is in there, across the roll, with every cell type and the TTL tag
    assert finished >= 2 and in_progress >= 2  # rolled WALs (with trailers) and the current ones
    assert ("file", "trailer") in ours and ("file", "open") in ours
    types = {cell[5] for cell in ours if cell[0] != "file"}
    assert types == {"Put", "Delete", "DeleteColumn", "DeleteFamily", "DeleteFamilyVersion"}
    values = {cell[6] for cell in ours if cell[0] != "file"}
    assert {"v1", "v2", "v3", "ax", "by", "\\x00\\x01\\x02\\xFF", "expires"} <= values
