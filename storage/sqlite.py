"""SQLite storage on aiosqlite: queries, responses, turns, the activity log, feedback, event ids.

One ``SqliteStore`` implements ``ConversationStore``, ``QueryStore``, ``ActivityLog``,
``FeedbackStore`` and ``EventLedger`` (core/protocols.py) over a single connection.
``core/fakes.py:InMemoryStorage`` is its in-memory twin.

Usage::

    store = await SqliteStore.open(settings.sqlite_path)
    try:
        ...
    finally:
        await store.close()

    # or
    async with await SqliteStore.open(path) as store:
        ...
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, suppress
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import aiosqlite

from core.errors import StorageError
from core.models import (
    AgentLogEntry,
    AgentResponse,
    ConversationTurn,
    EventType,
    Feedback,
    QueryStatus,
    UserQuery,
    check_transition,
    utc_now,
)
from storage.migrate import migrate
from storage.timestamps import from_db, to_db

#: Rows fetched per page by the exports; memory stays flat however large the table.
DEFAULT_PAGE_SIZE = 500
#: How long a writer waits for another process's lock before SQLITE_BUSY.
BUSY_TIMEOUT_MS = 5000
#: ``error`` text and AgentLogEntry details written by ``fail_interrupted``.
INTERRUPTED_ERROR = "interrupted: the process stopped before the answer was finished"

_LOG_COLUMNS = (
    "entry_id, timestamp, event_type, thread_id, query_id, query_text, "
    "response_summary, error_details, execution_time"
)


class SqliteStore:
    """All of ragbot's SQLite tables behind the storage Protocols.

    Writes are serialised through one connection and an asyncio lock, each in its own
    ``BEGIN IMMEDIATE`` transaction committed before the call returns. Reads take the
    same lock so they never see another coroutine's half-done transaction.
    """

    def __init__(self, *, path: Path, conn: aiosqlite.Connection, page_size: int = DEFAULT_PAGE_SIZE) -> None:
        """Wrap an already configured and migrated connection; use ``open`` instead."""
        if page_size < 1:
            raise ValueError(f"page_size {page_size} must be at least 1")
        self._path = path
        self._conn: aiosqlite.Connection | None = conn
        self._page_size = page_size
        self._lock = asyncio.Lock()

    # ------------------------------------------------------------------ lifecycle

    @classmethod
    async def open(cls, path: Path, *, page_size: int = DEFAULT_PAGE_SIZE) -> Self:
        """Open (or create) the database at ``path`` and bring its schema up to date.

        Args:
            path: the database file; missing parent folders are created.
            page_size: rows per page when streaming exports.

        Returns:
            An open store; call ``close()`` (or use ``async with``) when done.

        Raises:
            StorageError: the folder cannot be created, the file is not a SQLite
                database, or a migration failed. The file is left exactly as it was.
        """
        path = Path(path)
        try:
            await asyncio.to_thread(path.parent.mkdir, parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageError(
                f"cannot create the folder {path.parent} for the SQLite database: {exc}"
            ) from exc
        # isolation_level=None: the module never opens transactions behind our back;
        # every write says BEGIN IMMEDIATE itself.
        conn = aiosqlite.connect(path, isolation_level=None)
        try:
            await conn
        except sqlite3.Error as exc:
            raise StorageError(f"cannot open the SQLite database {path}: {exc}") from exc
        try:
            conn.row_factory = sqlite3.Row
            # First, so that a `ragbot logs export` opening the file while `serve` writes
            # waits for the lock instead of failing. PRAGMA takes no ? parameters; the
            # value is our own integer constant.
            await conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS:d}")
            await conn.execute("PRAGMA foreign_keys=ON")
            # Read the header before anything that could write: a file that is not a
            # database must fail here, untouched, never be "repaired" into an empty one.
            await conn.execute_fetchall("SELECT count(*) FROM sqlite_master")
            await conn.execute_fetchall("PRAGMA journal_mode=WAL")
            await migrate(conn)
        except sqlite3.Error as exc:
            await _close_quietly(conn)
            raise StorageError(
                f"cannot open the SQLite database {path}: {exc}. The file was left untouched; "
                "if it is damaged, move it aside (or restore a backup) and start again"
            ) from exc
        except StorageError as exc:
            await _close_quietly(conn)
            raise StorageError(f"cannot open the SQLite database {path}: {exc}") from exc
        except BaseException:
            await _close_quietly(conn)
            raise
        return cls(path=path, conn=conn, page_size=page_size)

    @property
    def path(self) -> Path:
        """The database file."""
        return self._path

    async def close(self) -> None:
        """Close the connection; safe to call twice. Later calls raise StorageError."""
        conn, self._conn = self._conn, None
        if conn is None:
            return
        async with self._lock:
            try:
                await conn.close()
            except sqlite3.Error as exc:
                raise StorageError(f"cannot close the SQLite database {self._path}: {exc}") from exc

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # ------------------------------------------------------------------ plumbing

    def _connection(self) -> aiosqlite.Connection:
        if self._conn is None:
            raise StorageError(f"the SQLite store {self._path} is closed")
        return self._conn

    @asynccontextmanager
    async def _write(self, what: str) -> AsyncIterator[aiosqlite.Connection]:
        """One write transaction: lock, BEGIN IMMEDIATE, yield, COMMIT (ROLLBACK on error).

        ``sqlite3.Error`` becomes StorageError naming ``what``; other exceptions
        (ValueError for a caller's mistake) roll back and pass through unchanged.
        """
        async with self._lock:
            conn = self._connection()
            try:
                await conn.execute("BEGIN IMMEDIATE")
                try:
                    yield conn
                    await conn.commit()
                except BaseException:
                    if conn.in_transaction:
                        await conn.rollback()
                    raise
            except sqlite3.Error as exc:
                raise StorageError(f"cannot {what} in {self._path}: {exc}") from exc

    async def _read(self, what: str, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        async with self._lock:
            conn = self._connection()
            try:
                return list(await conn.execute_fetchall(sql, params))
            except sqlite3.Error as exc:
                raise StorageError(f"cannot {what} in {self._path}: {exc}") from exc

    # ------------------------------------------------------------------ ConversationStore

    async def add_turn(self, turn: ConversationTurn) -> None:
        """Append one turn to its thread."""
        async with self._write(f"add a turn to thread {turn.thread_id!r}") as conn:
            await conn.execute(
                "INSERT INTO turns (thread_id, role, content, query_id, response_id, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (turn.thread_id, turn.role.value, turn.content, turn.query_id, turn.response_id,
                 to_db(turn.timestamp)),
            )

    async def recent_turns(self, thread_id: str, *, limit: int) -> list[ConversationTurn]:
        """The last ``limit`` turns of the thread, oldest first.

        Raises:
            ValueError: ``limit`` is negative.
        """
        if limit < 0:
            raise ValueError(f"limit {limit} must be 0 or more")
        if limit == 0:
            return []
        rows = await self._read(
            f"read the turns of thread {thread_id!r}",
            "SELECT thread_id, role, content, query_id, response_id, created_at FROM turns"
            " WHERE thread_id = ? ORDER BY id DESC LIMIT ?",
            (thread_id, limit),
        )
        return [
            ConversationTurn(
                thread_id=r["thread_id"], role=r["role"], content=r["content"], query_id=r["query_id"],
                response_id=r["response_id"], timestamp=from_db(r["created_at"]),
            )
            for r in reversed(rows)
        ]

    # ------------------------------------------------------------------ QueryStore

    async def create_query(self, query: UserQuery) -> None:
        """Store a new query with status PENDING (whatever ``query.status`` says).

        Raises:
            ValueError: a query with this id already exists.
        """
        now = to_db(utc_now())
        async with self._write(f"store query {query.query_id!r}") as conn:
            try:
                await conn.execute(
                    "INSERT INTO queries (query_id, query_text, thread_id, user_id, user_context, status,"
                    " error, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?)",
                    (query.query_id, query.query_text, query.thread_id, query.user_id, query.user_context,
                     QueryStatus.PENDING.value, to_db(query.timestamp), now),
                )
            except sqlite3.IntegrityError as exc:
                raise ValueError(f"query {query.query_id!r} already exists") from exc

    async def set_query_status(
        self, query_id: str, status: QueryStatus, *, error: str | None = None
    ) -> None:
        """Move a query along PENDING -> PROCESSING -> COMPLETED | FAILED.

        Args:
            query_id: the query.
            status: the new status.
            error: why it failed; kept when None is given.

        Raises:
            ValueError: unknown ``query_id`` or an illegal transition (nothing is changed).
        """
        new = QueryStatus(status)
        async with self._write(f"set query {query_id!r} to {new.value}") as conn:
            rows = list(await conn.execute_fetchall(
                "SELECT status FROM queries WHERE query_id = ?", (query_id,)
            ))
            if not rows:
                raise ValueError(f"unknown query id {query_id!r}")
            check_transition(QueryStatus(rows[0]["status"]), new)
            await conn.execute(
                "UPDATE queries SET status = ?, error = COALESCE(?, error), updated_at = ?"
                " WHERE query_id = ?",
                (new.value, error, to_db(utc_now()), query_id),
            )

    async def get_query_status(self, query_id: str) -> QueryStatus | None:
        """Current status, or None for an unknown id."""
        rows = await self._read(
            f"read the status of query {query_id!r}",
            "SELECT status FROM queries WHERE query_id = ?",
            (query_id,),
        )
        return QueryStatus(rows[0]["status"]) if rows else None

    async def get_query_error(self, query_id: str) -> str | None:
        """The error recorded for a query, or None (unknown id or no error)."""
        rows = await self._read(
            f"read the error of query {query_id!r}",
            "SELECT error FROM queries WHERE query_id = ?",
            (query_id,),
        )
        return rows[0]["error"] if rows else None

    async def save_response(self, response: AgentResponse) -> None:
        """Keep the response (status, text, sources); saving the same id again replaces it.

        Raises:
            ValueError: ``response.query_id`` was never stored with ``create_query``.
        """
        sources = json.dumps([s.model_dump(mode="json") for s in response.sources], ensure_ascii=False)
        async with self._write(f"store response {response.response_id!r}") as conn:
            try:
                await conn.execute(
                    "INSERT INTO responses (response_id, query_id, thread_id, status, response_text, sources,"
                    " confidence_score, grounding_confidence, model_used, created_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                    " ON CONFLICT (response_id) DO UPDATE SET query_id = excluded.query_id,"
                    " thread_id = excluded.thread_id, status = excluded.status,"
                    " response_text = excluded.response_text, sources = excluded.sources,"
                    " confidence_score = excluded.confidence_score,"
                    " grounding_confidence = excluded.grounding_confidence,"
                    " model_used = excluded.model_used, created_at = excluded.created_at",
                    (response.response_id, response.query_id, response.thread_id, response.status.value,
                     response.response_text, sources, response.confidence_score,
                     response.grounding_confidence, response.model_used, to_db(response.timestamp)),
                )
            except sqlite3.IntegrityError as exc:
                if "FOREIGN KEY" not in str(exc):
                    raise
                raise ValueError(
                    f"response {response.response_id!r} refers to query {response.query_id!r}, "
                    "which was never stored: call create_query first"
                ) from exc

    async def fail_interrupted(self) -> int:
        """Mark every PROCESSING query FAILED and log an ``error`` entry for each.

        Called at start-up: a query still PROCESSING then was cut off by a crash or a kill.

        Returns:
            How many queries were marked.
        """
        async with self._write("fail interrupted queries") as conn:
            rows = list(await conn.execute_fetchall(
                "SELECT query_id, thread_id, query_text FROM queries WHERE status = ? ORDER BY created_at",
                (QueryStatus.PROCESSING.value,),
            ))
            now = utc_now()
            for row in rows:
                await conn.execute(
                    "UPDATE queries SET status = ?, error = ?, updated_at = ? WHERE query_id = ?",
                    (QueryStatus.FAILED.value, INTERRUPTED_ERROR, to_db(now), row["query_id"]),
                )
                await self._insert_log(conn, AgentLogEntry(
                    timestamp=now, event_type=EventType.ERROR, thread_id=row["thread_id"],
                    query_id=row["query_id"], query_text=row["query_text"], error_details=INTERRUPTED_ERROR,
                ))
        return len(rows)

    # ------------------------------------------------------------------ ActivityLog

    @staticmethod
    async def _insert_log(conn: aiosqlite.Connection, entry: AgentLogEntry) -> None:
        try:
            await conn.execute(
                f"INSERT INTO agent_log ({_LOG_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (entry.entry_id, to_db(entry.timestamp), entry.event_type.value, entry.thread_id,
                 entry.query_id, entry.query_text, entry.response_summary, entry.error_details,
                 entry.execution_time),
            )
        except sqlite3.IntegrityError as exc:
            raise ValueError(f"log entry {entry.entry_id!r} already exists") from exc

    async def log(self, entry: AgentLogEntry) -> None:
        """Append one entry.

        Raises:
            ValueError: an entry with this ``entry_id`` already exists.
        """
        async with self._write(f"log entry {entry.entry_id!r}") as conn:
            await self._insert_log(conn, entry)

    async def log_many(self, entries: Sequence[AgentLogEntry]) -> None:
        """Append several entries in one transaction (all or none); for imports and tests."""
        async with self._write(f"log {len(entries)} entries") as conn:
            for entry in entries:
                await self._insert_log(conn, entry)

    async def export(
        self,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        event_type: EventType | None = None,
        thread_id: str | None = None,
    ) -> AsyncIterator[AgentLogEntry]:
        """Stream matching entries oldest first, one page at a time.

        Pages follow the keyset ``(timestamp, entry_id)``, so each page is an index
        range scan and entries written while the export runs do not shift the pages.
        The lock is released between pages: the consumer may write to the store.

        Args:
            since: keep entries at or after this instant (inclusive).
            until: keep entries before this instant (exclusive).
            event_type: keep only this kind.
            thread_id: keep only this thread.

        Raises:
            ValueError: ``since`` or ``until`` is a naive datetime.
        """
        where: list[str] = []
        params: list[Any] = []
        if since is not None:
            where.append("timestamp >= ?")
            params.append(to_db(since, name="since"))
        if until is not None:
            where.append("timestamp < ?")
            params.append(to_db(until, name="until"))
        if event_type is not None:
            where.append("event_type = ?")
            params.append(EventType(event_type).value)
        if thread_id is not None:
            where.append("thread_id = ?")
            params.append(thread_id)
        after: tuple[str, str] | None = None
        while True:
            conditions = [*where, "(timestamp, entry_id) > (?, ?)"] if after else where
            sql = (
                f"SELECT {_LOG_COLUMNS} FROM agent_log"
                + (f" WHERE {' AND '.join(conditions)}" if conditions else "")
                + " ORDER BY timestamp, entry_id LIMIT ?"
            )
            page_params = [*params, *(after or ()), self._page_size]
            rows = await self._read("export the activity log", sql, page_params)
            for row in rows:
                yield AgentLogEntry(
                    entry_id=row["entry_id"], timestamp=from_db(row["timestamp"]),
                    event_type=row["event_type"], thread_id=row["thread_id"], query_id=row["query_id"],
                    query_text=row["query_text"], response_summary=row["response_summary"],
                    error_details=row["error_details"], execution_time=row["execution_time"],
                )
            if len(rows) < self._page_size:
                return
            after = (rows[-1]["timestamp"], rows[-1]["entry_id"])

    # ------------------------------------------------------------------ FeedbackStore

    async def record_feedback(self, feedback: Feedback) -> None:
        """Store a vote; the same user voting again on the same response replaces it.

        ``created_at`` keeps the first vote's time; ``updated_at`` is the latest vote's
        ``timestamp`` and is what ``export_feedback`` returns and filters on.
        """
        ts = to_db(feedback.timestamp)
        async with self._write(
            f"record the vote of user {feedback.user_id!r} on response {feedback.response_id!r}"
        ) as conn:
            await conn.execute(
                "INSERT INTO feedback (response_id, user_id, vote, platform, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (response_id, user_id) DO UPDATE SET vote = excluded.vote,"
                " platform = excluded.platform, updated_at = excluded.updated_at",
                (feedback.response_id, feedback.user_id, feedback.vote, feedback.platform, ts, ts),
            )

    async def export_feedback(self, *, since: datetime | None = None) -> AsyncIterator[Feedback]:
        """Stream votes oldest first (by their latest change), one page at a time.

        Raises:
            ValueError: ``since`` is a naive datetime.
        """
        where = ["updated_at >= ?"] if since is not None else []
        params: list[Any] = [to_db(since, name="since")] if since is not None else []
        after: tuple[str, str, str] | None = None
        while True:
            conditions = [*where, "(updated_at, response_id, user_id) > (?, ?, ?)"] if after else where
            sql = (
                "SELECT response_id, user_id, vote, platform, updated_at FROM feedback"
                + (f" WHERE {' AND '.join(conditions)}" if conditions else "")
                + " ORDER BY updated_at, response_id, user_id LIMIT ?"
            )
            rows = await self._read("export feedback", sql, [*params, *(after or ()), self._page_size])
            for row in rows:
                yield Feedback(
                    response_id=row["response_id"], user_id=row["user_id"], vote=row["vote"],
                    platform=row["platform"], timestamp=from_db(row["updated_at"]),
                )
            if len(rows) < self._page_size:
                return
            last = rows[-1]
            after = (last["updated_at"], last["response_id"], last["user_id"])

    # ------------------------------------------------------------------ EventLedger

    async def first_delivery(self, platform: str, event_id: str) -> bool:
        """Record ``(platform, event_id)``; True the first time, False ever after (across restarts)."""
        async with self._write(f"record {platform} event {event_id!r}") as conn:
            # INSERT OR IGNORE decides atomically, even against another process.
            inserted = await _rowcount(
                conn,
                "INSERT OR IGNORE INTO processed_events (platform, event_id, received_at) VALUES (?, ?, ?)",
                (platform, event_id, to_db(utc_now())),
            )
        return inserted == 1

    async def prune_events(self, *, before: datetime) -> int:
        """Forget event ids received before ``before`` (platforms stop retrying within hours).

        Returns:
            How many ids were removed.
        """
        cutoff = to_db(before, name="before")
        async with self._write("prune processed events") as conn:
            return await _rowcount(conn, "DELETE FROM processed_events WHERE received_at < ?", (cutoff,))


async def _rowcount(conn: aiosqlite.Connection, sql: str, params: Sequence[Any]) -> int:
    async with conn.execute(sql, params) as cursor:
        return cursor.rowcount


async def _close_quietly(conn: aiosqlite.Connection) -> None:
    # Used only while already raising the real error, which must not be masked.
    with suppress(sqlite3.Error):
        await conn.close()
