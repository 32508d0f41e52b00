"""SqliteStore beyond the storage contract: files, pragmas, corruption, columns, paging, restarts.

The behaviour shared with InMemoryStorage is in tests/contracts/test_storage_contract.py.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.errors import StorageError
from core.models import (
    AgentLogEntry,
    AgentResponse,
    ConversationTurn,
    EventType,
    Feedback,
    QueryStatus,
    ResponseStatus,
    RetrievedChunk,
    Source,
    TurnRole,
    UserQuery,
)
from core.protocols import INTERRUPTED_ERROR
from storage.migrate import load_migrations
from storage.sqlite import SqliteStore
from storage.timestamps import from_db

TABLES = {"queries", "responses", "turns", "agent_log", "feedback", "processed_events", "schema_migrations"}
T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "nested" / "ragbot.sqlite3"


@pytest.fixture
async def store(db_path: Path) -> AsyncIterator[SqliteStore]:
    opened = await SqliteStore.open(db_path)
    try:
        yield opened
    finally:
        await opened.close()


def _raw(path: Path, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    """Read the file behind the store's back, as another process would."""
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def _assert_no_open_connections() -> None:
    """A failed open must close what it opened: no aiosqlite worker thread may survive."""
    workers = [t for t in threading.enumerate() if "_connection_worker_thread" in t.name]
    for thread in workers:
        thread.join(timeout=2)
    assert not [t for t in workers if t.is_alive()]


def _files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def _write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _read_bytes(path: Path) -> bytes:
    return path.read_bytes()


def _answer(query: UserQuery, text: str = "Install with pip [1].") -> AgentResponse:
    chunk = RetrievedChunk(
        chunk_id="c1", content="pip install ragbot", score=0.8, url="https://ragbot.dev/install",
        title="Install", chunk_index=0, source_document="install.md",
    )
    return AgentResponse(
        query_id=query.query_id, query_text=query.query_text, thread_id=query.thread_id,
        response_text=text, status=ResponseStatus.ANSWERED, retrieved_chunks=[chunk],
        sources=[Source(index=1, chunk_id="c1", url=chunk.url, title="Install", chunk_index=0, score=0.8)],
        confidence_score=0.8, grounding_confidence=0.7, model_used="scripted",
    )


def _entry(minutes: float, event_type: EventType = EventType.QUERY_RECEIVED, **kw: object) -> AgentLogEntry:
    return AgentLogEntry(timestamp=T0 + timedelta(minutes=minutes), event_type=event_type, **kw)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- open & migrations


async def test_open_creates_folders_tables_and_settings(store: SqliteStore, db_path: Path) -> None:
    assert _files(db_path.parent) == [db_path.name, f"{db_path.name}-shm", f"{db_path.name}-wal"]
    names = {r[0] for r in _raw(db_path, "SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert names >= TABLES
    assert _raw(db_path, "PRAGMA journal_mode") == [("wal",)]
    assert [r[0] for r in _raw(db_path, "SELECT version FROM schema_migrations")] == [
        m.version for m in load_migrations()]
    indexes = {r[0] for r in _raw(db_path, "SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert {"idx_turns_thread_id", "idx_agent_log_timestamp", "idx_agent_log_thread_id",
            "idx_agent_log_event_type"} <= indexes


async def test_connection_pragmas(store: SqliteStore) -> None:
    conn = store._connection()
    assert [tuple(r) for r in await conn.execute_fetchall("PRAGMA foreign_keys")] == [(1,)]
    assert [tuple(r) for r in await conn.execute_fetchall("PRAGMA busy_timeout")] == [(5000,)]


async def test_reopen_keeps_data(db_path: Path) -> None:
    query = UserQuery(query_text="How do I install?", thread_id="t1", user_id="u1")
    entry = AgentLogEntry(event_type=EventType.QUERY_RECEIVED, query_id=query.query_id, thread_id="t1")
    async with await SqliteStore.open(db_path) as first:
        await first.create_query(query)
        await first.set_query_status(query.query_id, QueryStatus.PROCESSING)
        await first.set_query_status(query.query_id, QueryStatus.COMPLETED)
        await first.save_response(_answer(query))
        await first.add_turn(ConversationTurn(thread_id="t1", role=TurnRole.USER, content="hi"))
        await first.log(entry)
        await first.record_feedback(Feedback(response_id="r1", user_id="u1", vote=1, platform="slack"))
    async with await SqliteStore.open(db_path) as second:
        assert await second.get_query_status(query.query_id) is QueryStatus.COMPLETED
        assert [t.content for t in await second.recent_turns("t1", limit=5)] == ["hi"]
        assert [e async for e in second.export()] == [entry]
        assert [f.vote async for f in second.export_feedback()] == [1]


async def test_async_with_closes_and_closed_store_refuses(db_path: Path) -> None:
    async with await SqliteStore.open(db_path) as store:
        assert store.path == db_path
    with pytest.raises(StorageError, match="closed"):
        await store.log(AgentLogEntry(event_type=EventType.ERROR))
    with pytest.raises(StorageError, match="closed"):
        [e async for e in store.export()]
    await store.close()  # a second close is harmless


# --------------------------------------------------------------------------- corruption & errors


async def test_corrupt_file_raises_storage_error_and_is_left_untouched(db_path: Path) -> None:
    garbage = b"this is not a database, it is precious user data\n" * 200
    _write_bytes(db_path, garbage)
    with pytest.raises(StorageError) as info:
        await SqliteStore.open(db_path)
    message = str(info.value)
    assert str(db_path) in message
    assert "not a database" in message
    assert "untouched" in message
    assert isinstance(info.value.__cause__, sqlite3.DatabaseError)
    assert _read_bytes(db_path) == garbage
    assert _files(db_path.parent) == [db_path.name]
    _assert_no_open_connections()


async def test_unopenable_path_is_a_storage_error(tmp_path: Path) -> None:
    folder = tmp_path / "is-a-folder"
    folder.mkdir()
    before = set(threading.enumerate())
    with pytest.raises(StorageError, match="is-a-folder") as info:
        await SqliteStore.open(folder)
    assert isinstance(info.value.__cause__, sqlite3.Error)
    # Its worker stopped before the call returned: it must not report to this loop once closed.
    assert not [t for t in set(threading.enumerate()) - before if "_connection_worker_thread" in t.name]


async def test_database_errors_during_writes_are_wrapped(store: SqliteStore) -> None:
    # A trigger makes SQLite itself fail the write, as a full disk or I/O error would.
    await store._connection().execute(
        "CREATE TEMP TRIGGER boom BEFORE INSERT ON turns BEGIN SELECT RAISE(ABORT, 'disk on fire'); END"
    )
    with pytest.raises(StorageError, match="disk on fire") as info:
        await store.add_turn(ConversationTurn(thread_id="t1", role=TurnRole.USER, content="hi"))
    assert isinstance(info.value.__cause__, sqlite3.Error)
    await store._connection().execute("DROP TRIGGER boom")
    # The failed transaction was rolled back; the store keeps working.
    await store.add_turn(ConversationTurn(thread_id="t1", role=TurnRole.USER, content="again"))
    assert [t.content for t in await store.recent_turns("t1", limit=5)] == ["again"]


async def test_database_from_a_newer_version_is_refused(db_path: Path) -> None:
    async with await SqliteStore.open(db_path):
        pass
    conn = sqlite3.connect(db_path)
    with conn:
        conn.execute("INSERT INTO schema_migrations VALUES (99, 'future', '2030-01-01T00:00:00.000000Z')")
    conn.close()
    with pytest.raises(StorageError, match="schema version 99"):
        await SqliteStore.open(db_path)
    _assert_no_open_connections()


# --------------------------------------------------------------------------- what lands in the columns


async def test_query_columns(store: SqliteStore, db_path: Path) -> None:
    query = UserQuery(query_text="What is ragbot?", thread_id="t1", user_id="u1", user_context="admin")
    await store.create_query(query)
    await store.set_query_status(query.query_id, QueryStatus.PROCESSING)
    row = _raw(db_path, "SELECT query_text, thread_id, user_id, user_context, status, created_at, updated_at"
                        " FROM queries WHERE query_id = ?", (query.query_id,))[0]
    assert row[:5] == ("What is ragbot?", "t1", "u1", "admin", "PROCESSING")
    assert from_db(str(row[5])) == query.timestamp
    assert str(row[6]) >= str(row[5])


async def test_a_saved_response_keeps_its_sources_and_is_replaced(store: SqliteStore, db_path: Path) -> None:
    query = UserQuery(query_text="How do I install?", thread_id="t1")
    await store.create_query(query)
    response = _answer(query)
    await store.save_response(response)
    await store.save_response(response.model_copy(update={"response_text": "Use pip [1]."}))
    rows = _raw(db_path, "SELECT query_id, thread_id, status, response_text, sources, confidence_score,"
                         " grounding_confidence, model_used FROM responses")
    assert len(rows) == 1
    query_id, thread_id, status, text, sources, confidence, grounding, model = rows[0]
    assert (query_id, thread_id, status, text) == (query.query_id, "t1", "answered", "Use pip [1].")
    assert [Source.model_validate(s) for s in json.loads(str(sources))] == response.sources
    assert (confidence, grounding, model) == (0.8, 0.7, "scripted")


async def test_a_changed_vote_keeps_its_first_time(store: SqliteStore, db_path: Path) -> None:
    first = Feedback(response_id="r1", user_id="u1", vote=1, platform="slack", timestamp=T0)
    await store.record_feedback(first)
    changed = Feedback(response_id="r1", user_id="u1", vote=-1, platform="slack",
                       timestamp=T0 + timedelta(minutes=5))
    await store.record_feedback(changed)
    created, updated = _raw(db_path, "SELECT created_at, updated_at FROM feedback WHERE user_id = 'u1'")[0]
    assert from_db(str(created)) == T0
    assert from_db(str(updated)) == changed.timestamp


# --------------------------------------------------------------------------- paging


async def test_export_streams_in_pages(store: SqliteStore) -> None:
    # 1200 entries, some sharing a timestamp, so the keyset must break ties by entry_id.
    entries = [_entry(i // 3) for i in range(1200)]
    await store.log_many(entries)
    expected = sorted(entries, key=lambda e: (e.timestamp, e.entry_id))

    statements: list[str] = []
    await store._connection().set_trace_callback(statements.append)
    seen: list[AgentLogEntry] = []
    async for entry in store.export():
        if not seen:
            # The consumer may write mid-export (the lock is not held across yields), and a
            # later entry shows up in a later page: the table was not loaded up front.
            late = _entry(10_000)
            await store.log(late)
        seen.append(entry)

    assert seen == [*expected, late]
    pages = [s for s in statements if s.lstrip().upper().startswith("SELECT") and "agent_log" in s]
    assert len(pages) == 3  # 500 + 500 + 201 rows


async def test_feedback_export_pages(db_path: Path) -> None:
    async with await SqliteStore.open(db_path, page_size=2) as store:
        votes = [Feedback(response_id=f"r{i}", user_id="u", vote=1, platform="slack", timestamp=T0)
                 for i in range(5)]
        for v in votes:
            await store.record_feedback(v)
        assert [f async for f in store.export_feedback()] == votes  # same time: by response_id
    with pytest.raises(ValueError, match="page_size 0"):
        SqliteStore(path=db_path, conn=None, page_size=0)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- restarts


async def test_queries_cut_off_by_a_crash_fail_at_the_next_start(db_path: Path) -> None:
    stuck, done = UserQuery(query_text="stuck", thread_id="t0"), UserQuery(query_text="done")
    crashed = await SqliteStore.open(db_path)
    for q in (stuck, done):
        await crashed.create_query(q)
        await crashed.set_query_status(q.query_id, QueryStatus.PROCESSING)
    await crashed.set_query_status(done.query_id, QueryStatus.COMPLETED)
    await crashed.close()

    async with await SqliteStore.open(db_path) as store:
        assert await store.fail_interrupted() == 0  # their owner (this process) still runs
        assert await store.fail_interrupted(is_alive=lambda pid, started: False) == 1
        assert await store.get_query_error(stuck.query_id) == INTERRUPTED_ERROR
        assert await store.get_query_status(done.query_id) is QueryStatus.COMPLETED
        [error] = [e async for e in store.export(event_type=EventType.ERROR)]
    assert (error.query_id, error.thread_id, error.error_details) == (stuck.query_id, "t0", INTERRUPTED_ERROR)


async def test_event_ids_are_remembered_across_restarts(db_path: Path) -> None:
    async with await SqliteStore.open(db_path) as store:
        assert await store.first_delivery("slack", "Ev1") is True
    async with await SqliteStore.open(db_path) as store:
        assert await store.first_delivery("slack", "Ev1") is False
        assert await store.first_delivery("slack", "Ev3") is True
