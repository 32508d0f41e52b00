"""Tests of storage/: the SQLite store, its migrations and the log/feedback exports."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import sqlite3
import threading
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import aiosqlite
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
from core.protocols import ActivityLog, ConversationStore, EventLedger, FeedbackStore, QueryStore
from storage.export import FEEDBACK_COLUMNS, LOG_COLUMNS, export_feedback, export_log
from storage.migrate import Migration, load_migrations, migrate
from storage.sqlite import INTERRUPTED_ERROR, SqliteStore
from storage.timestamps import from_db, to_db

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
    assert [r[0] for r in _raw(db_path, "SELECT version FROM schema_migrations")] == [1]
    indexes = {r[0] for r in _raw(db_path, "SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert {"idx_turns_thread_id", "idx_agent_log_timestamp", "idx_agent_log_thread_id",
            "idx_agent_log_event_type"} <= indexes
    for protocol in (ConversationStore, QueryStore, ActivityLog, FeedbackStore, EventLedger):
        assert isinstance(store, protocol)


async def test_connection_pragmas(store: SqliteStore) -> None:
    conn = store._connection()
    assert [tuple(r) for r in await conn.execute_fetchall("PRAGMA foreign_keys")] == [(1,)]
    assert [tuple(r) for r in await conn.execute_fetchall("PRAGMA busy_timeout")] == [(5000,)]


async def test_migrate_is_idempotent(tmp_path: Path) -> None:
    async with aiosqlite.connect(tmp_path / "m.sqlite3", isolation_level=None) as conn:
        assert await migrate(conn) == [m.version for m in load_migrations()]
        assert await migrate(conn) == []
        rows = list(await conn.execute_fetchall("SELECT version, name, applied_at FROM schema_migrations"))
    assert [(r[0], r[1]) for r in rows] == [(1, "init")]
    assert from_db(rows[0][2]).tzinfo is not None
    # Opening the store over an already-migrated file applies nothing and keeps one record.
    async with await SqliteStore.open(tmp_path / "m.sqlite3"):
        pass
    assert _raw(tmp_path / "m.sqlite3", "SELECT count(*) FROM schema_migrations") == [(1,)]


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
    with pytest.raises(StorageError, match="is-a-folder") as info:
        await SqliteStore.open(folder)
    assert isinstance(info.value.__cause__, sqlite3.Error)


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


# --------------------------------------------------------------------------- query lifecycle


async def test_query_lifecycle_and_illegal_transitions(store: SqliteStore, db_path: Path) -> None:
    query = UserQuery(query_text="What is ragbot?", thread_id="t1", user_id="u1", user_context="admin",
                      status=QueryStatus.COMPLETED)
    await store.create_query(query)
    assert await store.get_query_status(query.query_id) is QueryStatus.PENDING
    with pytest.raises(ValueError, match="already exists"):
        await store.create_query(query)

    await store.set_query_status(query.query_id, QueryStatus.PROCESSING)
    with pytest.raises(ValueError, match="PROCESSING to PENDING"):
        await store.set_query_status(query.query_id, QueryStatus.PENDING)
    await store.set_query_status(query.query_id, QueryStatus.COMPLETED)
    with pytest.raises(ValueError, match="COMPLETED to FAILED"):
        await store.set_query_status(query.query_id, QueryStatus.FAILED, error="late")
    assert await store.get_query_status(query.query_id) is QueryStatus.COMPLETED
    assert await store.get_query_error(query.query_id) is None

    with pytest.raises(ValueError, match="'nope'"):
        await store.set_query_status("nope", QueryStatus.PROCESSING)
    assert await store.get_query_status("nope") is None

    other = UserQuery(query_text="Another?")
    await store.create_query(other)
    await store.set_query_status(other.query_id, QueryStatus.FAILED, error="retrieval failed")
    assert await store.get_query_error(other.query_id) == "retrieval failed"

    row = _raw(db_path, "SELECT query_text, thread_id, user_id, user_context, created_at, updated_at"
                        " FROM queries WHERE query_id = ?", (query.query_id,))[0]
    assert row[:4] == ("What is ragbot?", "t1", "u1", "admin")
    assert from_db(str(row[4])) == query.timestamp
    assert str(row[5]) >= str(row[4])


async def test_fail_interrupted_after_a_crash(db_path: Path) -> None:
    stuck = [UserQuery(query_text=f"stuck {i}", thread_id=f"t{i}") for i in range(2)]
    pending = UserQuery(query_text="pending")
    done = UserQuery(query_text="done")
    crashed = await SqliteStore.open(db_path)
    for q in [*stuck, pending, done]:
        await crashed.create_query(q)
    for q in [*stuck, done]:
        await crashed.set_query_status(q.query_id, QueryStatus.PROCESSING)
    await crashed.set_query_status(done.query_id, QueryStatus.COMPLETED)
    await crashed.close()

    async with await SqliteStore.open(db_path) as store:
        assert await store.fail_interrupted() == 2
        assert await store.fail_interrupted() == 0
        for q in stuck:
            assert await store.get_query_status(q.query_id) is QueryStatus.FAILED
            assert await store.get_query_error(q.query_id) == INTERRUPTED_ERROR
        assert await store.get_query_status(pending.query_id) is QueryStatus.PENDING
        assert await store.get_query_status(done.query_id) is QueryStatus.COMPLETED
        errors = [e async for e in store.export(event_type=EventType.ERROR)]
    assert sorted(e.query_id or "" for e in errors) == sorted(q.query_id for q in stuck)
    for e in errors:
        assert e.error_details is not None and e.error_details.startswith("interrupted: ")
        assert e.query_text and e.query_text.startswith("stuck")
        assert e.thread_id in {"t0", "t1"}


async def test_save_response_keeps_sources_and_refuses_unknown_queries(
    store: SqliteStore, db_path: Path
) -> None:
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

    orphan = _answer(UserQuery(query_text="never stored"))
    with pytest.raises(ValueError, match="create_query"):
        await store.save_response(orphan)


# --------------------------------------------------------------------------- turns


async def test_recent_turns_are_the_last_n_oldest_first(store: SqliteStore) -> None:
    for i in range(6):
        role = TurnRole.USER if i % 2 == 0 else TurnRole.ASSISTANT
        await store.add_turn(ConversationTurn(thread_id="a", role=role, content=f"a{i}", query_id=f"q{i}"))
        await store.add_turn(ConversationTurn(thread_id="b", role=role, content=f"b{i}"))
    turns = await store.recent_turns("a", limit=3)
    assert [t.content for t in turns] == ["a3", "a4", "a5"]
    assert [t.role for t in turns] == [TurnRole.ASSISTANT, TurnRole.USER, TurnRole.ASSISTANT]
    assert turns[0].query_id == "q3" and turns[0].timestamp.tzinfo is not None
    assert [t.content for t in await store.recent_turns("a", limit=100)] == [f"a{i}" for i in range(6)]
    assert await store.recent_turns("a", limit=0) == []
    assert await store.recent_turns("unknown", limit=5) == []
    with pytest.raises(ValueError, match="-1"):
        await store.recent_turns("a", limit=-1)


# --------------------------------------------------------------------------- activity log


def test_timestamps_are_sortable_utc_text() -> None:
    paris = timezone(timedelta(hours=2))
    local = datetime(2025, 3, 1, 14, 0, 0, tzinfo=paris)
    assert to_db(local) == "2025-03-01T12:00:00.000000Z"
    assert from_db(to_db(local)) == local and from_db(to_db(local)).tzinfo is UTC
    assert to_db(T0) < to_db(T0 + timedelta(microseconds=1)) < to_db(T0 + timedelta(seconds=1))
    with pytest.raises(ValueError, match="no time zone"):
        to_db(datetime(2025, 1, 1))  # naive on purpose


async def test_export_filters(store: SqliteStore) -> None:
    entries = [
        _entry(0, thread_id="t1"),
        _entry(1, EventType.RETRIEVAL_PERFORMED, thread_id="t1"),
        _entry(2, EventType.ERROR, thread_id="t2", error_details="boom"),
        _entry(3, thread_id="t2"),
        _entry(4, EventType.ERROR, thread_id="t1", execution_time=0.25),
    ]
    for e in reversed(entries):  # written out of order; exported by time
        await store.log(e)

    async def ids(**filters: object) -> list[str]:
        return [e.entry_id async for e in store.export(**filters)]  # type: ignore[arg-type]

    all_ids = [e.entry_id for e in entries]
    assert [e async for e in store.export()] == entries
    assert await ids(since=T0 + timedelta(minutes=1)) == all_ids[1:]  # inclusive
    assert await ids(until=T0 + timedelta(minutes=3)) == all_ids[:3]  # exclusive
    assert await ids(since=T0 + timedelta(minutes=1), until=T0 + timedelta(minutes=4)) == all_ids[1:4]
    assert await ids(event_type=EventType.ERROR) == [all_ids[2], all_ids[4]]
    assert await ids(thread_id="t2") == all_ids[2:4]
    assert await ids(event_type=EventType.ERROR, thread_id="t1") == [all_ids[4]]
    assert await ids(since=T0 + timedelta(hours=1)) == []
    # A since in another time zone means the same instant.
    new_york = timezone(timedelta(hours=-5))
    assert await ids(since=(T0 + timedelta(minutes=3)).astimezone(new_york)) == all_ids[3:]
    with pytest.raises(ValueError, match="since"):
        await ids(since=datetime(2025, 1, 1))  # naive on purpose


async def test_duplicate_log_entry_is_refused(store: SqliteStore) -> None:
    entry = _entry(0)
    await store.log(entry)
    with pytest.raises(ValueError, match=entry.entry_id):
        await store.log(entry)


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


async def test_concurrent_writes_are_serialised(store: SqliteStore) -> None:
    entries = [AgentLogEntry(event_type=EventType.QUERY_RECEIVED, thread_id=f"t{i % 7}") for i in range(200)]
    turns = [ConversationTurn(thread_id="busy", role=TurnRole.USER, content=f"m{i}") for i in range(50)]
    await asyncio.gather(
        *(store.log(e) for e in entries),
        *(store.add_turn(t) for t in turns),
        *(store.first_delivery("slack", f"e{i % 10}") for i in range(50)),
    )
    exported = [e async for e in store.export()]
    assert len(exported) == 200
    assert {e.entry_id for e in exported} == {e.entry_id for e in entries}
    assert len(await store.recent_turns("busy", limit=100)) == 50


# --------------------------------------------------------------------------- feedback


async def test_feedback_second_vote_replaces_the_first(store: SqliteStore, db_path: Path) -> None:
    first = Feedback(response_id="r1", user_id="u1", vote=1, platform="slack", timestamp=T0)
    await store.record_feedback(first)
    await store.record_feedback(Feedback(response_id="r1", user_id="u2", vote=1, platform="discord",
                                         timestamp=T0 + timedelta(minutes=1)))
    changed = Feedback(response_id="r1", user_id="u1", vote=-1, platform="slack",
                       timestamp=T0 + timedelta(minutes=5))
    await store.record_feedback(changed)

    votes = [f async for f in store.export_feedback()]
    assert [(f.user_id, f.vote) for f in votes] == [("u2", 1), ("u1", -1)]  # oldest change first
    assert votes[1] == changed
    created, updated = _raw(db_path, "SELECT created_at, updated_at FROM feedback WHERE user_id = 'u1'")[0]
    assert from_db(str(created)) == T0
    assert from_db(str(updated)) == changed.timestamp
    assert [f.user_id async for f in store.export_feedback(since=T0 + timedelta(minutes=5))] == ["u1"]


async def test_feedback_export_pages(db_path: Path) -> None:
    async with await SqliteStore.open(db_path, page_size=2) as store:
        votes = [Feedback(response_id=f"r{i}", user_id="u", vote=1, platform="slack", timestamp=T0)
                 for i in range(5)]
        for v in votes:
            await store.record_feedback(v)
        assert [f async for f in store.export_feedback()] == votes  # same time: by response_id
    with pytest.raises(ValueError, match="page_size 0"):
        SqliteStore(path=db_path, conn=None, page_size=0)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- event ledger


async def test_event_ledger_first_delivery_only_even_after_reopen(db_path: Path) -> None:
    async with await SqliteStore.open(db_path) as store:
        assert await store.first_delivery("slack", "Ev1") is True
        assert await store.first_delivery("slack", "Ev1") is False
        assert await store.first_delivery("discord", "Ev1") is True
        results = await asyncio.gather(*(store.first_delivery("slack", "Ev2") for _ in range(20)))
        assert results.count(True) == 1
    async with await SqliteStore.open(db_path) as store:
        assert await store.first_delivery("slack", "Ev1") is False
        assert await store.first_delivery("slack", "Ev3") is True


async def test_prune_events_forgets_old_ids(store: SqliteStore) -> None:
    assert await store.first_delivery("slack", "old") is True
    assert await store.prune_events(before=datetime.now(UTC) + timedelta(seconds=1)) == 1
    assert await store.first_delivery("slack", "old") is True


# --------------------------------------------------------------------------- storage/export.py


async def test_export_log_csv_and_jsonl(store: SqliteStore) -> None:
    entries = [_entry(i, thread_id="t1", query_text=f"question {i}, with \"quotes\"") for i in range(3)]
    entries.append(_entry(3, EventType.ERROR, thread_id="t2", error_details="boom\nsecond line"))
    await store.log_many(entries)

    out = io.StringIO()
    assert await export_log(store, out, fmt="csv") == 4
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert list(rows[0]) == LOG_COLUMNS
    assert [r["entry_id"] for r in rows] == [e.entry_id for e in entries]
    assert rows[3]["error_details"] == "boom\nsecond line"

    out = io.StringIO()
    assert await export_log(store, out, fmt="jsonl", thread_id="t1") == 3
    lines = out.getvalue().splitlines()
    assert [AgentLogEntry.model_validate_json(line) for line in lines] == entries[:3]


async def test_export_feedback_csv_and_jsonl(store: SqliteStore) -> None:
    votes = [Feedback(response_id="r1", user_id=f"u{i}", vote=1 if i else -1, platform="slack",
                      timestamp=T0 + timedelta(seconds=i)) for i in range(3)]
    for v in votes:
        await store.record_feedback(v)
    out = io.StringIO()
    assert await export_feedback(store, out, fmt="csv") == 3
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert list(rows[0]) == FEEDBACK_COLUMNS
    assert [r["vote"] for r in rows] == ["-1", "1", "1"]
    out = io.StringIO()
    assert await export_feedback(store, out, since=T0 + timedelta(seconds=1)) == 2
    assert [Feedback.model_validate_json(line) for line in out.getvalue().splitlines()] == votes[1:]


async def test_csv_export_defuses_spreadsheet_formulas(tmp_path: Path) -> None:
    import io

    from core.models import AgentLogEntry, EventType
    from storage.export import export_log

    store = await SqliteStore.open(tmp_path / "db.sqlite3")
    try:
        await store.log(AgentLogEntry(event_type=EventType.QUERY_RECEIVED,
                                      query_text='=HYPERLINK("http://evil.example","x")'))
        out = io.StringIO()
        await export_log(store, out, fmt="csv")
    finally:
        await store.close()
    assert "'=HYPERLINK" in out.getvalue()


def test_huge_ages_are_refused_not_crashing() -> None:
    from storage.export import parse_when

    with pytest.raises(ValueError, match="further than dates go"):
        parse_when("99999999999d")
