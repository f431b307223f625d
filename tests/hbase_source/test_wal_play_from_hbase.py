"""``hbrep wal play`` against HBase's own WALPlayer: both replay the same copies of a real HBase 2.6's WALs,
into tables of that HBase (and hbrep into an embedded hbrep cluster too); the replayed tables' cells (raw:
delete markers and every version) and WALPlayer's counters must be equal, over the whole WALs and over a
time range (WALPlayer's wal.start.time/wal.end.time: whole files by their start timestamp, then entries by
write time)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from interop.helpers import copy_wals
from source_helpers import VERSIONS, cells, lines_for, mutate, run_cli

from replication.fs import LocalFileSystem
from replication.tables.descriptors import ColumnFamilyDescriptor, TableDescriptor, TableRegistry

pytestmark = pytest.mark.slow

HBREP = [sys.executable, "-m", "replication.cli"]
WAL_PLAYER = "org.apache.hadoop.hbase.mapreduce.WALPlayer"
COUNTER = re.compile(r"\b(WALEDITS|CELLS_READ|CELLS_WRITTEN|PUTS|DELETES)=(\d+)")
TABLES = ("src", "other", "by_walplayer", "by_hbrep", "range_walplayer", "range_hbrep")


def now_ms() -> int:
    return int(time.time() * 1000)


def wal_player(hbase, wals: Path, source: str, target: str, *times: str) -> dict[str, int]:
    """HBase's WALPlayer (hbase-mapreduce, local job runner) of ``source`` into ``target``: its counters."""
    log_conf = hbase.conf_dir / "log4j2-walplayer.properties"
    log_conf.write_text(
        (hbase.conf_dir / "log4j2-tools.properties").read_text()
        + "logger.job.name = org.apache.hadoop.mapreduce.Job\nlogger.job.level = INFO\n"
    )
    options = [f"-Dlog4j2.configurationFile={log_conf}", f"-Dhadoop.tmp.dir={hbase.root / 'tmp' / 'mapreduce'}"]
    args = [*times, str(wals), source, target]
    command = hbase.tool_command(WAL_PLAYER, args, heap_mb=512, jvm_options=options)
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    print(f"WALPlayer {' '.join(args)}: {time.monotonic() - started:.1f}s")
    assert done.returncode == 0, _why(done.stderr)
    counters = {name: int(value) for name, value in COUNTER.findall(done.stderr)}
    assert "WALEDITS" in counters, done.stderr[-3000:]
    return counters


CAUSE = re.compile(r"(Exception|Error)(:|$)")  # a line naming an exception (not a stack frame: see _why)


def _why(stderr: str) -> str:
    """A failed job's exceptions (each first line, with the first stack's top frames) and its output's tail:
    the tail alone ended inside the stack of a failed map task (a fresh-clone run at 6995314)."""
    lines = stderr.splitlines()
    at = [i for i, line in enumerate(lines) if CAUSE.search(line) and not line.startswith("\tat ")]
    causes = list(dict.fromkeys(lines[i] for i in at))[:20]
    head = lines[at[0] : at[0] + 15] if at else []
    return "\n".join(["exceptions:", *causes, "first:", *head, "tail:", stderr[-2000:]])


def hbrep(*args: str, cluster: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run([*HBREP, "--cluster", cluster, *args], capture_output=True, text=True, timeout=300)
    if check:
        assert done.returncode == 0, done.stderr[-3000:]
    return done


def play(cluster: str, wals: Path, *args: str) -> dict[str, int]:
    """``hbrep wal play WALS ARGS --json`` against ``cluster``: WALPlayer's counters."""
    started = time.monotonic()
    out = json.loads(run_cli("wal", "play", str(wals), *args, "--json", cluster=cluster))
    print(f"hbrep wal play {' '.join(args)}: {time.monotonic() - started:.1f}s")
    return {name: out[name] for name in ("WALEDITS", "CELLS_READ", "CELLS_WRITTEN", "PUTS", "DELETES")}


def row_keys(cell_set: set[str]) -> set[str]:
    return {json.loads(c)["row"] for c in cell_set}


@pytest.fixture(scope="module")
def replays(source_hbase, hbrep_cluster, spark, tmp_path_factory) -> dict:
    """The source's WALs (three phases: before the time range, inside it, after it), replayed by WALPlayer
    and by ``hbrep wal play`` (whole and over the range), with both sets of counters."""
    hbase = source_hbase
    key = hbase.layout().cluster_key
    for table in TABLES:
        hbase.admin("create-table", table, str(VERSIONS), "a:1", "b:1")
    families = [ColumnFamilyDescriptor(f, scope=1, max_versions=VERSIONS) for f in ("a", "b")]
    TableRegistry(LocalFileSystem(), hbrep_cluster.root).create(TableDescriptor.of("src", *families))
    mutate(hbase, "src", lines_for("before", 12))
    mutate(hbase, "other", lines_for("other", 4))  # a table not replayed
    start = now_ms()
    time.sleep(0.05)
    started = time.monotonic()
    hbase.admin("roll")  # the WAL of the range starts after `start`; the first one is skipped whole
    mutate(hbase, "src", lines_for("inside", 12))
    time.sleep(0.05)
    end = now_ms()
    time.sleep(0.05)
    mutate(hbase, "src", lines_for("after", 12))  # written after `end`: the range's WAL stops before them
    hbase.admin("roll")
    wals = tmp_path_factory.mktemp("wal-copies")
    copy_wals(hbase.rootdir, wals, headers_within_s=30)
    times = (f"-Dwal.start.time={start}", f"-Dwal.end.time={end}")
    print(f"tables and WALs written in {time.monotonic() - started:.1f}s")
    return {
        "key": key,
        "wals": wals,
        "hbase_all": wal_player(hbase, wals, "src", "by_walplayer"),
        "hbase_range": wal_player(hbase, wals, "src", "range_walplayer", *times),
        "hbrep_all": play(key, wals, "--table", "src", "--map", "src:by_hbrep"),
        "hbrep_range": play(
            key, wals, "--table", "src", "--map", "src:range_hbrep", "--starttime", str(start), "--endtime", str(end)
        ),
        "into_hbrep": play(str(hbrep_cluster.key), wals, "--table", "src"),
    }


def test_a_whole_replay_equals_walplayers_and_the_source_table(replays):
    key = replays["key"]
    source = cells(key, "src")
    by_hbase, by_hbrep = cells(key, "by_walplayer"), cells(key, "by_hbrep")
    print(f"cells: source {len(source)}, WALPlayer {len(by_hbase)}, hbrep {len(by_hbrep)}")
    assert by_hbrep == by_hbase
    assert by_hbrep == source  # every cell and delete marker of the source's table came back
    assert row_keys(by_hbrep) == row_keys(source) and len(row_keys(source)) == 36
    assert replays["hbrep_all"] == replays["hbase_all"]
    assert replays["hbrep_all"]["DELETES"] > 0 and replays["hbrep_all"]["PUTS"] > 0


def test_a_time_range_takes_what_walplayer_takes(replays):
    key = replays["key"]
    by_hbase, by_hbrep = cells(key, "range_walplayer"), cells(key, "range_hbrep")
    assert by_hbrep == by_hbase
    assert {r.split("-")[0] for r in row_keys(by_hbrep)} == {"inside"}  # not before the range, not after it
    assert replays["hbrep_range"] == replays["hbase_range"]


def test_a_replay_into_an_hbrep_cluster_holds_the_same_cells(replays, hbrep_cluster):
    on_hbase = cells(replays["key"], "by_walplayer", raw=False)
    on_hbrep = cells(str(hbrep_cluster.key), "src", raw=False)
    assert on_hbrep == on_hbase and on_hbase
    assert replays["into_hbrep"] == replays["hbase_all"]


def test_an_unknown_target_table_is_one_line_and_nothing_runs(replays):
    done = hbrep("wal", "play", str(replays["wals"]), "--table", "src", "--map", "src:nosuch", cluster=replays["key"],
                 check=False)  # fmt: skip
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [f"hbrep: error: table nosuch does not exist at {replays['key']}"]
