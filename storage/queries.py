"""QueryStore on SQLite: the query lifecycle and its history, responses, and recovery after a crash.

Every state a question enters (and every state its response enters) is a row of
``status_history`` (migration 0002), written in the same transaction as the change.
"""

from __future__ import annotations

import json
import sqlite3

import aiosqlite

from core.models import (
    AgentLogEntry,
    AgentResponse,
    EventType,
    QueryStatus,
    ResponseState,
    StatusChange,
    UserQuery,
    check_response_state,
    check_transition,
    utc_now,
)
from core.protocols import INTERRUPTED_ERROR
from storage.activity import insert_log
from storage.base import SqliteBase
from storage.recovery import OwnerAlive, orphaned, owner_alive, record_owner
from storage.timestamps import from_db, to_db

_SAVE_RESPONSE = (
    "INSERT INTO responses (response_id, query_id, thread_id, status, state, response_text, sources,"
    " confidence_score, grounding_confidence, model_used, created_at)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (response_id) DO UPDATE SET query_id = excluded.query_id,"
    " thread_id = excluded.thread_id, status = excluded.status, state = excluded.state,"
    " response_text = excluded.response_text, sources = excluded.sources,"
    " confidence_score = excluded.confidence_score,"
    " grounding_confidence = excluded.grounding_confidence,"
    " model_used = excluded.model_used, created_at = excluded.created_at"
)


#: Statuses that end a query: their write is flushed to disk, and with it the answer's steps.
_FINAL = frozenset({QueryStatus.COMPLETED, QueryStatus.FAILED})


class QueryTables(SqliteBase):
    """The ``queries`` and ``responses`` tables."""

    async def create_query(self, query: UserQuery) -> None:
        """Store a new query with status PENDING (whatever ``query.status`` says).

        Raises:
            ValueError: a query with this id already exists.
        """
        now = to_db(utc_now())
        async with self._write(f"store query {query.query_id!r}", durable=False) as conn:
            try:
                await conn.execute(
                    "INSERT INTO queries (query_id, query_text, thread_id, user_id, user_context, status,"
                    " error, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, NULL, ?, ?)",
                    (query.query_id, query.query_text, query.thread_id, query.user_id, query.user_context,
                     QueryStatus.PENDING.value, to_db(query.timestamp), now),
                )
            except sqlite3.IntegrityError as exc:
                raise ValueError(f"query {query.query_id!r} already exists") from exc
            await _enter(conn, query.query_id, "query", QueryStatus.PENDING.value, to_db(query.timestamp))
            await record_owner(conn, query.query_id)

    async def set_query_status(
        self, query_id: str, status: QueryStatus, *, error: str | None = None
    ) -> None:
        """Move a query along PENDING -> PROCESSING -> COMPLETED | FAILED.

        Args:
            query_id: the query.
            status: the new status.
            error: why it failed; None keeps the error already stored.

        Raises:
            ValueError: unknown ``query_id`` or an illegal transition (nothing is changed).
        """
        new = QueryStatus(status)
        # The final status is the last write of an answer: flushing it flushes the answer.
        async with self._write(f"set query {query_id!r} to {new.value}", durable=new in _FINAL) as conn:
            rows = list(await conn.execute_fetchall(
                "SELECT status FROM queries WHERE query_id = ?", (query_id,)
            ))
            if not rows:
                raise ValueError(f"unknown query id {query_id!r}")
            check_transition(QueryStatus(rows[0]["status"]), new)
            now = to_db(utc_now())
            await conn.execute(
                "UPDATE queries SET status = ?, error = COALESCE(?, error), updated_at = ?"
                " WHERE query_id = ?",
                (new.value, error, now, query_id),
            )
            await _enter(conn, query_id, "query", new.value, now, error)

    async def set_response_state(
        self, query_id: str, state: ResponseState, *, error: str | None = None
    ) -> None:
        """Record the query's response entering ``state``: PROCESSING, then COMPLETED or ERROR.

        Raises:
            ValueError: unknown ``query_id`` or an illegal transition (nothing is recorded).
        """
        new = ResponseState(state)
        what = f"set the response of query {query_id!r} to {new.value}"
        async with self._write(what, durable=False) as conn:
            if not list(await conn.execute_fetchall("SELECT 1 FROM queries WHERE query_id = ?", (query_id,))):
                raise ValueError(f"unknown query id {query_id!r}")
            check_response_state(await _response_state(conn, query_id), new)
            await _enter(conn, query_id, "response", new.value, to_db(utc_now()), error)

    async def status_history(self, query_id: str) -> list[StatusChange]:
        """Every state the query and its response entered, oldest first (empty for an unknown id)."""
        rows = await self._read(f"read the status history of query {query_id!r}",
                                "SELECT machine, status, entered_at, error FROM status_history"
                                " WHERE query_id = ? ORDER BY id", (query_id,))
        return [StatusChange(machine=r["machine"], status=r["status"], entered_at=from_db(r["entered_at"]),
                             error=r["error"]) for r in rows]

    async def get_query_status(self, query_id: str) -> QueryStatus | None:
        """Current status, or None for an unknown id."""
        rows = await self._read(f"read the status of query {query_id!r}",
                                "SELECT status FROM queries WHERE query_id = ?", (query_id,))
        return QueryStatus(rows[0]["status"]) if rows else None

    async def get_query_error(self, query_id: str) -> str | None:
        """The error recorded for a query, or None (unknown id or no error)."""
        rows = await self._read(f"read the error of query {query_id!r}",
                                "SELECT error FROM queries WHERE query_id = ?", (query_id,))
        return rows[0]["error"] if rows else None

    async def save_response(self, response: AgentResponse) -> None:
        """Keep the response (status, text, sources); saving the same id again replaces it.

        Raises:
            ValueError: ``response.query_id`` was never stored with ``create_query``.
        """
        sources = json.dumps([s.model_dump(mode="json") for s in response.sources], ensure_ascii=False)
        async with self._write(f"store response {response.response_id!r}", durable=False) as conn:
            try:
                await conn.execute(_SAVE_RESPONSE, (
                    response.response_id, response.query_id, response.thread_id, response.status.value,
                    response.state.value, response.response_text, sources, response.confidence_score,
                    response.grounding_confidence, response.model_used, to_db(response.timestamp),
                ))
            except sqlite3.IntegrityError as exc:
                if "FOREIGN KEY" not in str(exc):
                    raise
                raise ValueError(
                    f"response {response.response_id!r} refers to query {response.query_id!r}, "
                    "which was never stored: call create_query first"
                ) from exc

    async def fail_interrupted(self, *, is_alive: OwnerAlive = owner_alive) -> int:
        """Mark FAILED, with an ``error`` entry each, the PENDING and PROCESSING queries whose owner is gone.

        Called at start-up: such a query was cut off by a crash or a kill. A query whose owner
        process still runs (another ``ragbot ask --batch``) is left alone (storage/recovery.py).
        Both the query's error and the entry's details are ``INTERRUPTED_ERROR``.

        Returns:
            How many queries were marked.
        """
        async with self._write("fail interrupted queries") as conn:
            rows = await orphaned(conn, is_alive)
            now = utc_now()
            for row in rows:
                await conn.execute(
                    "UPDATE queries SET status = ?, error = ?, updated_at = ? WHERE query_id = ?",
                    (QueryStatus.FAILED.value, INTERRUPTED_ERROR, to_db(now), row["query_id"]),
                )
                if await _response_state(conn, row["query_id"]) is ResponseState.PROCESSING:
                    await _enter(conn, row["query_id"], "response", ResponseState.ERROR.value, to_db(now),
                                 INTERRUPTED_ERROR)
                await _enter(conn, row["query_id"], "query", QueryStatus.FAILED.value, to_db(now),
                             INTERRUPTED_ERROR)
                await insert_log(conn, AgentLogEntry(
                    timestamp=now, event_type=EventType.ERROR, thread_id=row["thread_id"],
                    query_id=row["query_id"], query_text=row["query_text"], error_details=INTERRUPTED_ERROR,
                ))
        return len(rows)


async def _enter(conn: aiosqlite.Connection, query_id: str, machine: str, status: str, at: str,
                 error: str | None = None) -> None:
    """Append one ``status_history`` row (inside the caller's transaction)."""
    await conn.execute(
        "INSERT INTO status_history (query_id, machine, status, entered_at, error) VALUES (?, ?, ?, ?, ?)",
        (query_id, machine, status, at, error),
    )


async def _response_state(conn: aiosqlite.Connection, query_id: str) -> ResponseState | None:
    """The last state the query's response entered, or None before the first."""
    rows = list(await conn.execute_fetchall(
        "SELECT status FROM status_history WHERE query_id = ? AND machine = 'response'"
        " ORDER BY id DESC LIMIT 1", (query_id,)))
    return ResponseState(rows[0]["status"]) if rows else None
