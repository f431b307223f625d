"""hbrep repair (HashTable/SyncTable): a drifted peer made the source's again, judged by VerifyReplication and
by the sets of cells on both sides (embedded clusters, real ship cycles, Spark)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner
from support import add_peer, create_table, cycle

from replication.checks.peer_checks import verify_replication
from replication.checks.verify import VerifyOptions
from replication.cli import cli
from replication.operations.repair import repair_table
from replication.operations.sync_table import (
    ALL_VERSIONS,
    DIFFERENTCELLVALUES,
    HASHES_NOT_MATCHED,
    ROWSWITHDIFFS,
    SOURCEMISSINGCELLS,
    SOURCEMISSINGROWS,
    TARGETMISSINGROWS,
    RepairError,
    SyncOptions,
)
from replication.tables.spark_views import scan
from replication.wal.model import Cell, CellType
from replication.wal.reader import open_wal
from replication.zk.client import connected
from replication.zk.cluster_id import read_cluster_id
from replication.zk.layout import ZNodePaths

pytestmark = pytest.mark.slow

TS = 20_000


def every_cell(spark, cluster, table: str) -> set[tuple]:
    """Flush, then every version of every cell a scan returns: the set both sides are compared by."""
    with cluster.client() as client:
        client.flush(table)
    rows = scan(spark, cluster.root, table, versions=ALL_VERSIONS, families=["cf", "g"]).collect()
    return {(bytes(r.row), bytes(r.family), bytes(r.qualifier), r.timestamp, r.type, bytes(r.value)) for r in rows}


def test_options_refuse_bad_values():
    with pytest.raises(RepairError, match="--stoptime 5 is not after --starttime 10"):
        SyncOptions(start_time=10, end_time=5)
    with pytest.raises(RepairError, match="--buckets 0"):
        SyncOptions(buckets=0)
    with pytest.raises(RepairError, match="--families is empty"):
        SyncOptions(families=[""])


def _drifted(pair, spark, table: str, peer: str) -> dict[str, list[bytes]]:
    """Replicate 120 rows, then drift the peer: changed values, rows missing on the peer, rows only the
    peer has, and family g deleted on the source without the delete reaching the peer."""
    add_peer(pair, peer, table_cfs={table: []}, replicate_all=False)
    for cluster in (pair.source, pair.peer):
        create_table(cluster, table, ("cf", 1), ("g", 1), ("local", 0))
    rows = [f"row{i:04d}".encode() for i in range(120)]
    with pair.source.client() as client:
        client.batch(table, [Cell(r, b"cf", b"a", TS, CellType.PUT, b"v" + r) for r in rows])
        client.batch(table, [Cell(r, b"g", b"b", TS, CellType.PUT, b"g" + r) for r in rows])
        client.batch(table, [Cell(r, b"cf", b"a", TS + 1, CellType.PUT, b"w" + r) for r in rows[:10]])  # 2 versions
    cycle(pair, spark)
    with connected(pair.source_key) as zk:
        peer_id = read_cluster_id(zk, ZNodePaths(parent=pair.peer_key.znode_parent))
    drift = {
        "changed": rows[20:25],
        "missing": [f"late{i:03d}".encode() for i in range(7)],
        "extra": [f"extra{i:03d}".encode() for i in range(4)],
        "family_gone": rows[40:43],
    }
    with pair.peer.client() as client:  # changed on the peer: same coordinates, another value
        client.batch(table, [Cell(r, b"cf", b"a", TS, CellType.PUT, b"changed") for r in drift["changed"]])
        client.batch(table, [Cell(r, b"cf", b"x", TS, CellType.PUT, b"extra") for r in drift["extra"]])
    with pair.source.client() as client:
        # Edits already carrying the peer's cluster id are never shipped to it (HBase's loop rule): the
        # source gets rows and a family delete the peer never sees.
        client.batch(table, [Cell(r, b"cf", b"a", TS, CellType.PUT, b"late") for r in drift["missing"]],
                     cluster_ids=[peer_id])  # fmt: skip
        client.batch(table, [Cell(r, b"g", b"", TS + 5, CellType.DELETE_FAMILY, b"") for r in drift["family_gone"]],
                     cluster_ids=[peer_id])  # fmt: skip
    cycle(pair, spark)
    return drift


def test_a_drifted_peer_is_repaired_and_a_second_repair_changes_nothing(pair, spark):
    table = f"t_{uuid.uuid4().hex[:6]}"
    drift = _drifted(pair, spark, table, "1")
    with connected(pair.source_key) as zk:
        verified = verify_replication(spark, zk, pair.source_key, pair.conf, peer_id="1", table=table)
        assert verified.counters["ONLY_IN_SOURCE_TABLE_ROWS"] == len(drift["missing"])
        assert verified.counters["ONLY_IN_PEER_TABLE_ROWS"] == len(drift["extra"])
        assert verified.counters["CONTENT_DIFFERENT_ROWS"] == len(drift["changed"]) + len(drift["family_gone"])
        peer_before = every_cell(spark, pair.peer, table)

        dry = repair_table(spark, zk, pair.source_key, pair.conf, peer_id="1", table=table,
                           options=SyncOptions(dry_run=True, buckets=64))  # fmt: skip
        assert dry.written == {} and dry.after is None and dry.deletes and not dry.two_way
        counters = dry.before.counters
        assert counters[HASHES_NOT_MATCHED] > 0
        assert counters[TARGETMISSINGROWS] == len(drift["missing"])
        assert counters[SOURCEMISSINGROWS] == len(drift["extra"])
        assert counters[ROWSWITHDIFFS] == len(drift["changed"]) + len(drift["family_gone"])
        assert counters[DIFFERENTCELLVALUES] == len(drift["changed"])
        # the extra rows' cells plus the g cells the source deleted
        assert counters[SOURCEMISSINGCELLS] == len(drift["extra"]) + len(drift["family_gone"])
        assert dry.before.cells_to_put == len(drift["missing"]) + len(drift["changed"])
        assert dry.before.cells_to_delete == len(drift["extra"]) + len(drift["family_gone"])
        assert every_cell(spark, pair.peer, table) == peer_before  # a dry run changes nothing

        repaired = repair_table(spark, zk, pair.source_key, pair.conf, peer_id="1", table=table,
                                options=SyncOptions(buckets=64))  # fmt: skip
        assert repaired.written["cells"] == dry.before.changes
        assert repaired.remaining == 0 and repaired.after is not None and not repaired.after.differs
        after = verify_replication(spark, zk, pair.source_key, pair.conf, peer_id="1", table=table,
                                   options=VerifyOptions(versions=ALL_VERSIONS, families=["cf", "g"]))  # fmt: skip
        assert after.counters["BADROWS"] == 0
        assert after.counters["GOODROWS"] == 120 + len(drift["missing"])  # the extra rows are gone from both
        assert every_cell(spark, pair.source, table) == every_cell(spark, pair.peer, table)

        again = repair_table(spark, zk, pair.source_key, pair.conf, peer_id="1", table=table,
                             options=SyncOptions(buckets=64))  # fmt: skip
        assert again.before.counters[HASHES_NOT_MATCHED] == 0 and again.written == {} and again.remaining == 0

    # Every cell the repair wrote reached the peer's WAL with the source's cluster id (so it never loops back).
    with connected(pair.source_key) as zk:
        source_id = read_cluster_id(zk, ZNodePaths(parent=pair.source_key.znode_parent))
    root = Path(pair.peer.root)

    # cells that reach the peer through the repair only: the missing rows, the delete markers of the extra ones
    def by_repair(cell: Cell) -> bool:
        return cell.row in drift["missing"] or (cell.row in drift["extra"] and cell.type == CellType.DELETE)

    repair_keys = [
        read.entry.key
        for path in sorted(p for p in root.rglob("*") if p.is_file() and "WALs" in p.parts)
        for read in open_wal(str(path))
        if read.entry.key.table_name == table.encode() and any(by_repair(c) for c in read.entry.cells)
    ]
    assert repair_keys, f"no entry of the repaired rows in the peer's WALs under {root}"
    assert {tuple(k.cluster_ids) for k in repair_keys} == {(source_id,)}


def test_no_deletes_keeps_the_peers_own_cells_and_says_so(pair, spark):
    table = f"t_{uuid.uuid4().hex[:6]}"
    drift = _drifted(pair, spark, table, "3")
    with connected(pair.source_key) as zk:
        report = repair_table(spark, zk, pair.source_key, pair.conf, peer_id="3", table=table,
                              options=SyncOptions(buckets=64), deletes=False)  # fmt: skip
    assert report.before.cells_to_delete == 0
    assert report.remaining == len(drift["extra"]) + len(drift["family_gone"])
    assert "kept (--no-deletes)" in report.why_remaining()
    peer_rows = {c[0] for c in every_cell(spark, pair.peer, table)}
    assert set(drift["missing"]) <= peer_rows and set(drift["extra"]) <= peer_rows


def test_bad_arguments_are_one_line(pair, spark):
    table = f"t_{uuid.uuid4().hex[:6]}"
    add_peer(pair, "2")
    for cluster in (pair.source, pair.peer):
        create_table(cluster, table, ("cf", 1), ("local", 0))
    with connected(pair.source_key) as zk:
        for peer_id, name, families, message in (
            ("2", table, ["local"], "column family 'local' of .* is not replicated to this peer"),
            ("2", table, ["nope"], "has no column family 'nope'"),
            ("2", "no_such_table", None, "no_such_table"),
            ("99", table, None, "99"),
        ):
            with pytest.raises(Exception, match=message):
                repair_table(spark, zk, pair.source_key, pair.conf, peer_id=peer_id, table=name,
                             options=SyncOptions(families=families))  # fmt: skip


def test_the_cli_plans_repairs_and_refuses_bad_input_in_one_line(pair, spark):
    from tests.badinput.helpers import error_line, hbrep

    table = f"t_{uuid.uuid4().hex[:6]}"
    drift = _drifted(pair, spark, table, "4")
    key = str(pair.source_key)
    # the two repairs in this process (their Spark jobs on the session's warm SparkSession); the refusals
    # below in a fresh interpreter each, as a user sees them
    args = ["--cluster", key, "repair", "4", table]
    planned = CliRunner().invoke(cli, [*args, "--dry-run", "--json", "--buckets", "16"])
    assert planned.exit_code == 0, planned.output
    plan = json.loads(planned.stdout)
    assert plan["dry_run"] and plan["after"] is None and plan["written"] == {}
    assert plan["before"]["counters"][TARGETMISSINGROWS] == len(drift["missing"])
    assert plan["before"]["cells_to_put"] == len(drift["missing"]) + len(drift["changed"])

    repaired = CliRunner().invoke(cli, args)
    assert repaired.exit_code == 0, repaired.output
    assert repaired.stdout.splitlines()[-1] == "the peer's copy now matches"

    for args, message in (
        (("repair", "99", table), "peer 99"),
        (("repair", "4", "no_such_table"), "no_such_table"),
        (("repair", "4", table, "--families", "local"), "column family 'local'"),
        (("repair", "4", table, "--starttime", "10", "--stoptime", "5"), "--stoptime 5 is not after --starttime 10"),
    ):
        line = error_line(hbrep("--cluster", key, *args))
        assert line.startswith("hbrep: error: ") and message in line, line
