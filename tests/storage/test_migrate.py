"""storage/migrate.py and storage/timestamps.py: numbered migrations, applied once, and sortable times."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import aiosqlite
import pytest

from core.errors import StorageError
from storage.migrate import Migration, load_migrations, migrate
from storage.sqlite import SqliteStore
from storage.timestamps import from_db, to_db

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def _raw(path: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()



async def test_migrate_is_idempotent(tmp_path: Path) -> None:
    async with aiosqlite.connect(tmp_path / "m.sqlite3", isolation_level=None) as conn:
        assert await migrate(conn) == [m.version for m in load_migrations()]
        assert await migrate(conn) == []
        rows = list(await conn.execute_fetchall("SELECT version, name, applied_at FROM schema_migrations"))
    assert [(r[0], r[1]) for r in rows] == [(m.version, m.name) for m in load_migrations()]
    assert (rows[0][1], rows[1][1]) == ("init", "status_history")
    assert from_db(rows[0][2]).tzinfo is not None
    # Opening the store over an already-migrated file applies nothing and keeps one record each.
    async with await SqliteStore.open(tmp_path / "m.sqlite3"):
        pass
    applied = _raw(tmp_path / "m.sqlite3", "SELECT count(*) FROM schema_migrations")
    assert applied == [(len(load_migrations()),)]



def test_migration_files_are_numbered_without_gaps() -> None:
    migrations = load_migrations()
    assert migrations[0].filename == "0001_init.sql"
    assert [m.version for m in migrations] == list(range(1, len(migrations) + 1))



def test_statement_splitting_respects_strings_comments_and_triggers() -> None:
    sql = """
    -- a comment; with a semicolon
    CREATE TABLE t (x TEXT DEFAULT 'a;b');
    CREATE TRIGGER tr AFTER INSERT ON t BEGIN UPDATE t SET x = 'c;d'; END;
    -- trailing comment
    """
    statements = Migration(version=1, name="x", sql=sql).statements()
    assert len(statements) == 2
    assert statements[1].startswith("CREATE TRIGGER") and statements[1].endswith("END;")
    with pytest.raises(StorageError, match="unterminated"):
        Migration(version=2, name="bad", sql="CREATE TABLE u (x)").statements()



async def test_failed_migration_rolls_back_and_names_the_file(tmp_path: Path) -> None:
    good = Migration(version=1, name="good", sql="CREATE TABLE a (x INTEGER);")
    bad = Migration(version=2, name="bad", sql="CREATE TABLE b (x INTEGER);\nINSERT INTO nowhere VALUES (1);")
    async with aiosqlite.connect(tmp_path / "m.sqlite3", isolation_level=None) as conn:
        with pytest.raises(StorageError, match=r"0002_bad\.sql") as info:
            await migrate(conn, migrations=[good, bad])
        assert isinstance(info.value.__cause__, sqlite3.OperationalError)
        tables = {r[0] for r in await conn.execute_fetchall("SELECT name FROM sqlite_master")}
        versions = [r[0] for r in await conn.execute_fetchall("SELECT version FROM schema_migrations")]
    assert "a" in tables and "b" not in tables
    assert versions == [1]



def test_timestamps_are_sortable_utc_text() -> None:
    paris = timezone(timedelta(hours=2))
    local = datetime(2025, 3, 1, 14, 0, 0, tzinfo=paris)
    assert to_db(local) == "2025-03-01T12:00:00.000000Z"
    assert from_db(to_db(local)) == local and from_db(to_db(local)).tzinfo is UTC
    assert to_db(T0) < to_db(T0 + timedelta(microseconds=1)) < to_db(T0 + timedelta(seconds=1))
    with pytest.raises(ValueError, match="no time zone"):
        to_db(datetime(2025, 1, 1))  # naive on purpose


async def test_0002_backfills_the_status_history_of_earlier_questions(tmp_path: Path) -> None:
    """A database written before 0002: each question's creation and last status become its history."""
    path = tmp_path / "old.sqlite3"
    first = load_migrations()[:1]
    async with aiosqlite.connect(path, isolation_level=None) as conn:
        assert await migrate(conn, migrations=first) == [1]
        for query_id, status, error in (("done", "COMPLETED", None), ("new", "PENDING", None),
                                        ("down", "FAILED", "store down")):
            await conn.execute(
                "INSERT INTO queries (query_id, query_text, status, error, created_at, updated_at)"
                " VALUES (?, 'q', ?, ?, ?, ?)",
                (query_id, status, error, to_db(T0), to_db(T0 + timedelta(1))))
        await conn.execute(
            "INSERT INTO responses (response_id, query_id, status, response_text, created_at)"
            " VALUES ('r1', 'down', 'retrieval_failed', 'Sorry', ?)", (to_db(T0),))
    async with await SqliteStore.open(path) as store:
        history = {q: [(c.status, c.entered_at, c.error) for c in await store.status_history(q)]
                   for q in ("done", "new", "down")}
    assert history == {
        "done": [("PENDING", T0, None), ("COMPLETED", T0 + timedelta(1), None)],
        "new": [("PENDING", T0, None)],
        "down": [("PENDING", T0, None), ("FAILED", T0 + timedelta(1), "store down")],
    }
    assert _raw(path, "SELECT response_id, state FROM responses") == [("r1", "ERROR")]


def test_0002_refuses_a_state_of_the_other_machine(tmp_path: Path) -> None:
    path = tmp_path / "x.sqlite3"
    conn = sqlite3.connect(path)
    try:
        for migration in load_migrations()[:2]:
            conn.executescript(migration.sql)
        conn.execute("INSERT INTO queries (query_id, query_text, created_at, updated_at)"
                     " VALUES ('q', 'q', 't', 't')")
        with pytest.raises(sqlite3.IntegrityError, match="CHECK constraint"):
            conn.execute("INSERT INTO status_history (query_id, machine, status, entered_at)"
                         " VALUES ('q', 'query', 'ERROR', 't')")
        with pytest.raises(sqlite3.IntegrityError, match="CHECK constraint"):
            conn.execute("INSERT INTO status_history (query_id, machine, status, entered_at)"
                         " VALUES ('q', 'response', 'PENDING', 't')")
    finally:
        conn.close()
