"""The dev stack's PostgreSQL server (replication/devstack/postgres.py): a real server from Debian's binaries,
on loopback, its data kept across stop/start and across a SIGKILL, one database per stack."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from replication.devstack.postgres import PostgresError, PostgresServer
from replication.net import port_in_use


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PostgresServer]:
    with PostgresServer(tmp_path_factory.mktemp("pg")) as running:
        yield running


def _query(server: PostgresServer, database: str, sql: str, *args: object) -> list[tuple]:
    connection = server.connect(database)
    try:
        connection.autocommit = True
        with connection.cursor() as cursor:
            cursor.execute(sql, args)
            return cursor.fetchall() if cursor.description else []
    finally:
        connection.close()


def test_it_listens_on_loopback_only_with_a_password(server: PostgresServer):
    assert server.url().startswith(f"postgresql+psycopg2://hbrep:{server.password()}@127.0.0.1:{server.port}/")
    assert _query(server, "postgres", "SHOW listen_addresses") == [("127.0.0.1",)]
    assert _query(server, "postgres", "SHOW unix_socket_directories") == [("",)]
    assert _query(server, "postgres", "SELECT auth_method FROM pg_hba_file_rules WHERE type = 'host'")[0] == (
        "scram-sha-256",
    )
    assert (server.state_dir / "password").stat().st_mode & 0o077 == 0


def test_each_stack_gets_a_database_of_its_own(server: PostgresServer):
    url_a, url_b = server.ensure_database("stack_a"), server.ensure_database("stack_b")
    assert url_a.endswith("/stack_a") and url_b.endswith("/stack_b")
    assert server.ensure_database("stack_a") == url_a  # exists: kept
    _query(server, "stack_a", "CREATE TABLE t (k text)")
    _query(server, "stack_a", "INSERT INTO t VALUES ('row-a')")
    assert _query(server, "stack_a", "SELECT k FROM t") == [("row-a",)]
    assert _query(server, "stack_b", "SELECT count(*) FROM pg_tables WHERE tablename = 't'") == [(0,)]


@pytest.mark.parametrize("name", ["Airflow", "drop database x", "a-b", "", "x" * 64])
def test_a_bad_database_name_is_refused_in_one_line(server: PostgresServer, name: str):
    with pytest.raises(PostgresError, match="database name") as caught:
        server.ensure_database(name)
    assert "\n" not in str(caught.value)


def test_data_survives_a_stop_and_a_sigkill_on_the_same_port(tmp_path: Path):
    pg = PostgresServer(tmp_path / "pg")
    first_url = pg.start()
    try:
        pg.ensure_database("kept")
        _query(pg, "kept", "CREATE TABLE t (k text)")
        _query(pg, "kept", "INSERT INTO t VALUES ('before-stop')")
        assert pg.stop() and not pg.running() and not port_in_use(pg.port)
        again = PostgresServer(tmp_path / "pg")  # as `make up` finds it: the recorded port, initdb not redone
        assert again.start() == first_url and not again.initdb()
        _query(again, "kept", "INSERT INTO t VALUES ('before-kill')")
        again.kill()
        assert not again.running()
        again.start()  # crash recovery: every acknowledged commit is there
        assert sorted(_query(again, "kept", "SELECT k FROM t")) == [("before-kill",), ("before-stop",)]
    finally:
        PostgresServer(tmp_path / "pg").stop()
    assert not PostgresServer(tmp_path / "pg").stop()  # nothing runs: stop says so


def test_a_taken_port_given_explicitly_is_one_clear_error(tmp_path: Path, server: PostgresServer):
    with pytest.raises(PostgresError, match=f"port {server.port} .* already in use") as caught:
        PostgresServer(tmp_path / "other", port=server.port).start()
    assert "\n" not in str(caught.value)


def test_missing_binaries_name_where_they_were_looked_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("HBREP_POSTGRES_BIN", str(tmp_path / "nowhere"))
    with pytest.raises(PostgresError, match=r"initdb not found in HBREP_POSTGRES_BIN=.*nowhere.*make postgresql"):
        PostgresServer(tmp_path / "pg").start()
    assert not (tmp_path / "pg" / "data").exists()
