"""WALs written by real HBase, read by hbrep: `hbrep wal dump --json` on every WAL HBase wrote
(WALs/ and oldWALs/, meta WALs too) gives the entries and cells HBase's own readers give, across a
WAL roll and a region split (its close/open markers included) in the middle of the writes."""

from __future__ import annotations

import uuid

import pytest
from interop.helpers import (
    assert_same_as_hbase,
    assert_same_as_pretty_printer,
    cells_of_hbrep,
    copy_wals,
    hbase_read,
    hbrep_dump,
    mutate,
    pretty_print,
    wal_workload,
)

pytestmark = pytest.mark.slow


def test_every_wal_hbase_wrote_reads_the_same_in_hbrep(real_hbase, tmp_path):
    table = f"wal_{uuid.uuid4().hex[:8]}"
    real_hbase.admin("create-table", table, "3", "a:1", "b:0", "c:1")
    mutate(real_hbase, table, wal_workload("before"))
    rolled = real_hbase.admin("roll")  # a roll in the middle: the table's edits span two WALs
    mutate(real_hbase, table, wal_workload("mid"))
    split = real_hbase.admin("split", table, "mid-2")  # then a split: the parent closes, two daughters open
    mutate(real_hbase, table, wal_workload("post"))  # rows after mid-2: the upper daughter
    mutate(real_hbase, table, wal_workload("early"))  # rows before mid-2: the lower daughter
    assert len(rolled) == 2
    assert len(split["regions"]) == 2 and split["parent"] not in split["regions"]

    ours: list[tuple] = []
    regions: set[str] = set()
    finished = in_progress = 0
    wals = copy_wals(real_hbase.rootdir, tmp_path)
    hbase_reads = hbase_read(real_hbase, wals)
    for wal in wals:
        entries, summary = hbrep_dump(wal)
        # 1. every key field and every cell, against HBase's own WALStreamReader
        assert_same_as_hbase(entries, summary, hbase_reads[str(wal)], wal)
        # 2. entries, cells (with values) and positions, against WALPrettyPrinter's JSON
        printed, complete = pretty_print(real_hbase, wal)
        assert_same_as_pretty_printer(entries, printed, wal)
        if summary["trailer_present"]:
            finished += 1
            assert complete, wal
        else:
            # still being written: read up to its last whole entry, exactly where HBase stops
            in_progress += 1
            assert summary["position"] == (entries[-1]["end"] if entries else summary["position"])
        ours += [(e["sequence"], *c) for e in entries if e["table"] == table for c in cells_of_hbrep(e)]
        regions |= {e["region"] for e in entries if e["table"] == table}
        if any(e["table"] == table for e in entries):
            finished_or_open = "trailer" if summary["trailer_present"] else "open"
            ours.append(("file", finished_or_open))

    # the workload itself is in there, across the roll and the split, with every cell type and the TTL tag
    assert finished >= 2 and in_progress >= 2  # rolled WALs (with trailers) and the current ones
    assert ("file", "trailer") in ours and ("file", "open") in ours
    assert regions == {split["parent"], *split["regions"]}  # the parent's edits, then each daughter's
    types = {cell[5] for cell in ours if cell[0] != "file"}
    assert {"Put", "Delete", "DeleteColumn", "DeleteFamily", "DeleteFamilyVersion"} <= types
    values = {cell[6] for cell in ours if cell[0] != "file"}
    assert {"v1", "v2", "v3", "ax", "by", "\\x00\\x01\\x02\\xFF", "expires"} <= values
    rows = {cell[1] for cell in ours if cell[0] != "file"}
    assert {f"{p}-{i}" for p in ("before", "mid", "post", "early") for i in range(3)} <= rows
