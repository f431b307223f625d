"""SIGKILL a region server during a load: every acknowledged edit is in a WAL, and recovery replays it."""

from __future__ import annotations

import os
import threading

import pytest

from replication.cluster.recovery import recover_dead_server
from replication.fs import LocalFileSystem
from replication.tables.descriptors import TableDescriptor, TableRegistry
from replication.tables.semantics import scan_cells
from replication.tables.table_files import read_cells
from replication.wal.model import Cell, CellType
from replication.wal.names import wal_dir
from tests.cluster.helpers import wal_entries

pytestmark = pytest.mark.slow


def test_sigkill_during_load_loses_no_acknowledged_edit(embedded):
    TableRegistry(None, embedded.root).create(TableDescriptor.of("t", "f"))
    victim, survivor = embedded.servers
    acked: list[bytes] = []
    stop = threading.Event()
    errors: list[BaseException] = []

    def load() -> None:
        with embedded.client() as client:
            i = 0
            while not stop.is_set() and i < 2000:
                rows = [b"row%06d" % (i + k) for k in range(5)]
                try:
                    client.batch("t", [Cell(r, b"f", b"q", 1000, int(CellType.PUT), r) for r in rows])
                except BaseException as exc:  # the test fails below if the client gave up
                    errors.append(exc)
                    return
                acked.extend(rows)
                i += 5

    thread = threading.Thread(target=load)
    thread.start()
    while len(acked) < 150 and thread.is_alive():
        threading.Event().wait(0.02)
    embedded.kill(victim)
    killed_at = len(acked)
    while len(acked) < killed_at + 150 and thread.is_alive():
        threading.Event().wait(0.02)
    stop.set()
    thread.join(60)
    assert not errors, errors
    assert killed_at >= 150 and len(acked) >= killed_at + 150

    # every acknowledged edit is in a WAL of one of the two servers
    in_wals = {c.row for s in (victim, survivor) for e in wal_entries(embedded.root, s) for c in e.cells}
    assert set(acked) <= in_wals
    victim_rows = {c.row for e in wal_entries(embedded.root, victim) for c in e.cells}
    assert victim_rows  # the victim took part of the load before it died

    # recovery replays the dead server's WAL edits into table files and archives its WALs
    fs = LocalFileSystem()
    result = recover_dead_server(fs, embedded.root, victim)
    assert result.cells_replayed == len([c for e in wal_entries(embedded.root, victim) for c in e.cells])
    assert not os.path.exists(wal_dir(embedded.root, victim)) or not os.listdir(wal_dir(embedded.root, victim))
    assert len(result.archived) == len(result.wals) >= 1
    with embedded.client() as client:
        client.flush("t")
    state = scan_cells(read_cells(fs, embedded.root, "t"))
    assert set(acked) <= {c.row for c in state}

    # a second recovery changes nothing
    again = recover_dead_server(fs, embedded.root, victim)
    assert again.cells_replayed == 0 and again.files_written == []
    assert scan_cells(read_cells(fs, embedded.root, "t")) == state


def test_recovery_skips_edits_already_flushed(embedded):
    TableRegistry(None, embedded.root).create(TableDescriptor.of("t", "f"))
    server = embedded.servers[0]
    fs = LocalFileSystem()
    with embedded.client() as client:
        client.mutate_on(server, "t", [Cell(b"a", b"f", b"q", 1, int(CellType.PUT), b"1")])
        client.flush("t")
        client.mutate_on(server, "t", [Cell(b"b", b"f", b"q", 1, int(CellType.PUT), b"2")])
        client.mutate_on(server, "t", [Cell(b"a", b"f", b"", 5, int(CellType.DELETE_FAMILY))])
    embedded.kill(server)
    before = len(read_cells(fs, embedded.root, "t"))
    result = recover_dead_server(fs, embedded.root, server)
    assert result.cells_already_flushed == 1 and result.cells_replayed == 2
    state = scan_cells(read_cells(fs, embedded.root, "t"))
    assert [(c.row, c.value) for c in state] == [(b"b", b"2")]  # "a" deleted by the replayed DeleteFamily
    assert len(read_cells(fs, embedded.root, "t")) == before + 2
