"""Every DAG as users run it under Airflow's scheduler, through the REST API (and once the browser).

Data (write times set per day, as ``hbrep put --ts`` sets them): table ``t`` (family ``f`` replicated to
peer 1, ``g`` kept local) has rows on three past days D1..D3 and yesterday; a drifted row (on the peer
only) sits in D2. ``hbrep_verify`` starts yesterday, so its scheduler makes one catchup run: yesterday's
(and one for today too when the clock passes midnight UTC during the module). Table ``u`` (families ``a``
and ``b``) is seeded on both clusters and replicated to peer 2, which the params test adds: until then
every verify run checks one pair, (1, t), which keeps runs short.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from conftest import DAY, SchedulerStack, midnight, ms, scheduler_stack, task_instance, verify_counters

from replication.devstack.airflow_stack import session_pids
from replication.wal.model import Cell, CellType

pytestmark = pytest.mark.slow

VERIFY = "hbrep_verify"
D1, D2, D3, YESTERDAY = midnight(5), midnight(4), midnight(3), midnight(1)
T_ROWS = {D1: 3, D2: 4, D3: 5, YESTERDAY: 2}  # rows of t (f and g cells) written in each day
U_A_YESTERDAY, U_B_YESTERDAY, U_B_D3 = 5, 3, 2  # rows of u with only family a / only b
DRIFT_TS = ms(D2 + timedelta(hours=12))
TASKS = ("targets", "verify", "quality")
STATE_BADGES = "Array.from(document.querySelectorAll('[data-testid=state-badge]')).map(e => e.innerText.trim())"
CHECK_ICON = "M20 6 9 17l-5-5"  # the check mark Airflow's grid draws in a successful task's square


def _days_over_since(day) -> int:
    """Whole days from ``day`` (a midnight) to today's midnight: the verify DAG's catch-up runs due."""
    return (midnight(0) - day) // DAY


def _t_cells() -> list[Cell]:
    cells = []
    for day, count in T_ROWS.items():
        for i in range(count):
            row, ts = f"{day:%m%d}-r{i}".encode(), ms(day + timedelta(hours=i + 1))
            cells.append(Cell(row, b"f", b"q", ts, CellType.PUT, b"v%d" % i))
            cells.append(Cell(row, b"g", b"q", ts, CellType.PUT, b"local"))  # scope 0: never shipped
    return cells


def _u_cells() -> list[Cell]:
    cells = [Cell(b"ua%d" % i, b"a", b"q", ms(YESTERDAY) + 1000 * i, CellType.PUT, b"a") for i in range(U_A_YESTERDAY)]
    cells += [Cell(b"ub%d" % i, b"b", b"q", ms(YESTERDAY) + 2000 * i, CellType.PUT, b"b") for i in range(U_B_YESTERDAY)]
    cells += [Cell(b"ub-old%d" % i, b"b", b"q", ms(D3) + 1000 * i, CellType.PUT, b"b") for i in range(U_B_D3)]
    return cells


@pytest.fixture(scope="module")
def stack(tmp_path_factory, spark_connect) -> Iterator[SchedulerStack]:
    """The stack with the data above written on the source (and the drift on the peer); DAGs paused. Spark
    as ``make up`` runs it: the ship DAG and the verify DAG's checks on the session's Spark Connect server."""
    with scheduler_stack(
        tmp_path_factory.mktemp("sched"),
        tables={"t": {"f": 1, "g": 0}, "u": {"a": 1, "b": 1}},
        peers={"1": {"table_cfs": "t"}},
        env_extra={"HBREP_VERIFY_START": f"{YESTERDAY:%Y-%m-%d}", "HBREP_SHIP_ON_EDITS": "false"},  # the cron alone
        spark_connect_port=spark_connect.port,
    ) as stack:
        with stack.source.client() as client:
            client.batch("t", _t_cells())
            client.batch("u", _u_cells())  # no peer replicates u yet: its edits are filtered, not shipped
            client.put("t", b"today", b"f", b"q", b"now")  # now: in no past day's interval
        with stack.peer.client() as client:
            client.put("t", b"drift", b"f", b"q", b"only-on-the-peer", ts=DRIFT_TS)
            client.batch("u", _u_cells())  # u seeded on the peer (as seed_peer copies a table)
        yield stack


@pytest.fixture(scope="module")
def shipped(stack) -> dict[str, list[dict]]:
    """Ship, failover and the log cleaner unpaused and run by the scheduler until each has finished a run;
    the queues drained (everything shipped) and both clusters flushed. Returns the scheduled runs."""
    api = stack.api
    for dag_id in ("hbrep_ship", "hbrep_failover", "hbrep_log_cleaner"):
        api.set_paused(dag_id, False)
    runs = {d: api.wait_for_runs(d, 1, run_type="scheduled", timeout=900) for d in ("hbrep_ship", "hbrep_failover",
                                                                                  "hbrep_log_cleaner")}  # fmt: skip
    stack.wait_drained(timeout=300)
    stack.flush("t", "u")
    return runs


def test_each_dag_runs_on_its_schedule(stack, shipped):
    api = stack.api
    for dag_id, runs in shipped.items():
        assert runs and all(r["state"] == "success" for r in runs), (dag_id, runs)
    assert any(
        ti["task_id"] == "peer.ship" and ti["state"] == "success"  # connect mode: the window ships and commits
        for run in api.runs("hbrep_ship", run_type="scheduled")
        for ti in api.task_instances("hbrep_ship", run["dag_run_id"])
    ), "no scheduled ship run shipped the edits"

    # hbrep_verify: unpaused, its scheduler catches up on yesterday (its start date): one run whose data
    # interval is that whole day, verifying yesterday's rows and nothing else.
    api.set_paused(VERIFY, False)
    # One catch-up run per day that is over since the start date: 1, or 2 when the clock passed midnight UTC
    # after this module computed its days (a make test that straddled midnight failed on a second run).
    runs = api.wait_for_runs(VERIFY, _days_over_since(YESTERDAY), run_type="scheduled", timeout=900)
    (run,) = [r for r in runs if r["data_interval_start"] == f"{YESTERDAY:%Y-%m-%dT%H:%M:%SZ}"]
    assert run["state"] == "success", run
    assert (run["data_interval_start"], run["data_interval_end"]) == (
        f"{YESTERDAY:%Y-%m-%dT%H:%M:%SZ}",
        f"{YESTERDAY + DAY:%Y-%m-%dT%H:%M:%SZ}",
    )
    counters = verify_counters(api, run["dag_run_id"])
    assert list(counters) == [("1", "t")]  # u is replicated to no peer yet
    assert counters[("1", "t")]["GOODROWS"] == T_ROWS[YESTERDAY]
    assert counters[("1", "t")]["BADROWS"] == 0
    # no run for today: its day is not over
    assert len(api.runs(VERIFY, run_type="scheduled")) == _days_over_since(YESTERDAY)


@pytest.fixture(scope="module")
def backfill(stack, shipped) -> dict[str, dict]:
    """A backfill of hbrep_verify over D1..D3 (POST /api/v2/backfills), waited for; runs by logical day."""
    api = stack.api
    api.set_paused(VERIFY, False)
    created = api.backfill(VERIFY, D1, D3, max_active_runs=1)
    assert created["dag_id"] == VERIFY
    runs = api.wait_for_runs(VERIFY, 3, run_type="backfill", timeout=2400)
    return {run["logical_date"][:10]: run for run in runs}


def test_backfill_verifies_exactly_each_day_and_drift_fails_only_its_day(stack, backfill):
    assert sorted(backfill) == [f"{d:%Y-%m-%d}" for d in (D1, D2, D3)]
    for day in (D1, D2, D3):
        run = backfill[f"{day:%Y-%m-%d}"]
        assert run["data_interval_start"][:10] == f"{day:%Y-%m-%d}"
        assert run["data_interval_end"][:10] == f"{day + DAY:%Y-%m-%d}"
        counters = verify_counters(stack.api, run["dag_run_id"])
        assert list(counters) == [("1", "t")]
        assert counters[("1", "t")]["GOODROWS"] == T_ROWS[day], (day, counters)
        if day == D2:  # the drifted row: only on the peer, written in D2
            assert run["state"] == "failed"
            assert counters[("1", "t")]["BADROWS"] == 1
            assert counters[("1", "t")]["ONLY_IN_PEER_TABLE_ROWS"] == 1
        else:
            assert run["state"] == "success", (day, run)
            assert counters[("1", "t")]["BADROWS"] == 0


def test_runs_reads_every_page_and_filters_by_state(stack, backfill):
    # Before the repair below, so that D2's run is still failed. The API answers at most a page a call: a
    # page of 1 must give the same runs, in the same order, as one call; the state filter is the API's own.
    api = stack.api
    every = api.runs(VERIFY)
    assert len(every) >= 4  # yesterday's scheduled run and the three days of the backfill
    assert [r["dag_run_id"] for r in api.runs(VERIFY, page_size=1)] == [r["dag_run_id"] for r in every]
    failed = [r["dag_run_id"] for r in every if r["state"] == "failed"]
    assert failed == [backfill[f"{D2:%Y-%m-%d}"]["dag_run_id"]]
    assert [r["dag_run_id"] for r in api.runs(VERIFY, states=["failed"], page_size=1)] == failed
    assert api.runs(VERIFY, states=["queued", "running"]) == []


def test_a_failed_task_cleared_after_the_repair_runs_again_and_passes(stack, backfill):
    api = stack.api
    run_id = backfill[f"{D2:%Y-%m-%d}"]["dag_run_id"]
    failed = task_instance(api, VERIFY, run_id, "verify", 0)
    assert failed["state"] == "failed" and failed["try_number"] == 1
    # quality maps over the same targets; with its upstream failed it was never expanded
    assert task_instance(api, VERIFY, run_id, "quality", -1)["state"] == "upstream_failed"
    # Repair the peer: delete the drifted row (a delete marker at its write time), flush, clear, re-run.
    with stack.peer.client() as client:
        client.delete("t", b"drift", b"f", ts=DRIFT_TS)
    stack.flush("t")
    cleared = api.clear(VERIFY, run_id, ["verify"], only_failed=True, downstream=True)
    assert {(ti["task_id"], ti["map_index"]) for ti in cleared} == {("verify", 0), ("quality", -1)}
    run = api.wait_for_run(VERIFY, run_id, timeout=900)
    assert run["state"] == "success", run
    again = task_instance(api, VERIFY, run_id, "verify", 0)
    assert again["state"] == "success" and again["try_number"] == 2
    counters = api.xcom(VERIFY, run_id, "verify", map_index=0)
    assert counters["GOODROWS"] == T_ROWS[D2] and counters["BADROWS"] == 0
    assert task_instance(api, VERIFY, run_id, "quality", 0)["state"] == "success"


def test_a_run_with_params_verifies_only_what_they_name(stack, shipped):
    from replication.zk.peer_storage import ReplicationPeerConfig, ReplicationPeerStorage, parse_table_cfs

    api = stack.api
    api.set_paused(VERIFY, False)
    # peer 2 replicates u (seeded on both sides): every run would now verify (1, t) and (2, u)
    ReplicationPeerStorage(stack.source.zk, stack.source.paths).add_peer(
        "2", ReplicationPeerConfig(stack.peer_key, replicate_all=False, table_cfs=parse_table_cfs("u"))
    )
    start, end = ms(YESTERDAY), ms(YESTERDAY + DAY)
    run_id = api.trigger(VERIFY, {"peer": "2", "table": "u", "families": "b", "start": start, "end": end})
    run = api.wait_for_run(VERIFY, run_id, timeout=900)
    assert run["state"] == "success", run
    targets = api.xcom(VERIFY, run_id, "targets")
    assert targets == [{"peer_id": "2", "table": "u", "families": ["b"], "start_ms": start, "end_ms": end}]
    verify = [ti for ti in api.task_instances(VERIFY, run_id) if ti["task_id"] == "verify"]
    assert [ti["map_index"] for ti in verify] == [0]
    counters = api.xcom(VERIFY, run_id, "verify", map_index=0)
    # only family b, only yesterday: not u's family-a rows, not its D3 rows, not table t, not peer 1
    # (with the peer ignored, table u would be verified against peer 1 as well)
    assert counters["GOODROWS"] == U_B_YESTERDAY and counters["BADROWS"] == 0


def test_trigger_form_in_the_browser_runs_with_params_and_the_grid_shows_success(stack, shipped):
    """Once as a user: log in on Airflow's login page, fill hbrep_verify's trigger form, watch the grid."""
    from urllib.parse import unquote

    from cdp import Browser, chromium_binary

    assert chromium_binary(), "chromium is not installed (make chromium)"
    api, url = stack.api, stack.airflow.url
    api.set_paused(VERIFY, False)
    start, end = ms(D3), ms(D3 + DAY)
    with Browser(timeout=120) as page:
        page.navigate(f"{url}/")
        page.wait_for("document.querySelector('input[name=password]')")  # redirected to the login page
        page.type_into("input[name=username]", "admin")
        page.type_into("input[name=password]", stack.airflow.admin_password())
        page.click_text("button", "Sign in")
        page.wait_for("!location.pathname.startsWith('/auth')")
        page.errors.clear()  # the login page's own 401 for /ui/config before signing in is expected
        page.navigate(f"{url}/dags/{VERIFY}")
        page.wait_for("document.querySelector('[data-testid=trigger-dag-button]')")
        page.evaluate("document.querySelector('[data-testid=trigger-dag-button]').click()")
        page.wait_for("document.querySelector('#element_peer')")  # the form built from the DAG's params
        page.type_into("#element_peer", "1")
        page.type_into("#element_table", "t")
        page.type_into("#element_families", "f")
        page.type_into("#element_start", str(start))
        page.type_into("#element_end", str(end))
        page.evaluate("document.querySelector('[data-testid=trigger-dag-submit]').click()")
        page.wait_for("location.pathname.includes('/runs/manual__')")
        run_id = unquote(str(page.evaluate("location.pathname")).split("/runs/", 1)[1].strip("/"))
        api.wait_for_run(VERIFY, run_id, timeout=900)
        page.navigate(f"{url}/dags/{VERIFY}/runs/{run_id}")  # the grid, beside the run's details
        cells = {task: f"document.querySelector('[data-testid=\"grid-{run_id}-{task}\"]')" for task in TASKS}
        page.wait_for(" && ".join(cells.values()))
        page.wait_for("document.querySelector('[data-testid=state-badge]')")
        badges = page.evaluate(STATE_BADGES)
        assert "Success" in badges and "Failed" not in badges, badges
        for task, cell in cells.items():  # each task's square in the run's column shows the success check
            assert page.evaluate(f"{cell}.innerHTML.includes('{CHECK_ICON}')"), task
        page.drain(1.0)
        assert page.errors == []
    run = api.run(VERIFY, run_id)
    assert run["state"] == "success" and run["run_type"] == "manual"
    assert run["conf"] == {"peer": "1", "table": "t", "families": "f", "start": start, "end": end}
    assert api.xcom(VERIFY, run_id, "targets") == [
        {"peer_id": "1", "table": "t", "families": ["f"], "start_ms": start, "end_ms": end}
    ]
    counters = api.xcom(VERIFY, run_id, "verify", map_index=0)
    assert counters["GOODROWS"] == T_ROWS[D3] and counters["BADROWS"] == 0


def _listening_addresses(pids: list[int]) -> set[tuple[str, int]]:
    """(address, port) of every TCP socket in LISTEN state that one of ``pids`` holds (from /proc)."""
    inodes = set()
    for pid in pids:
        fd_dir = Path(f"/proc/{pid}/fd")
        with contextlib.suppress(OSError):
            for fd in fd_dir.iterdir():
                with contextlib.suppress(OSError):
                    target = os.readlink(fd)
                    if target.startswith("socket:["):
                        inodes.add(target[8:-1])
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state != "0A" or inode not in inodes:  # 0A: TCP_LISTEN
                continue
            address_hex, port_hex = local.split(":")
            raw = bytes.fromhex(address_hex)
            # /proc/net/tcp* print the address as 32-bit words in host (little-endian) order
            raw = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
            address = ipaddress.ip_address(raw)
            # A JVM (a task's Spark driver) binding 127.0.0.1 on a dual-stack socket shows as ::ffff:127.0.0.1
            if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
                address = address.ipv4_mapped
            found.add((str(address), int(port_hex, 16)))
    return found


def test_every_airflow_process_listens_on_loopback_only(stack, shipped):
    # After runs of every DAG (task workers and the triggerer have started): the API server listens on
    # 127.0.0.1, and so does whatever a running task started (a Spark driver); nothing on every interface
    # (no log server: standalone would start two).
    listening = _listening_addresses(session_pids(stack.airflow.proc.pid))
    assert ("127.0.0.1", stack.airflow.port) in listening, listening
    assert {address for address, _ in listening} == {"127.0.0.1"}, listening
