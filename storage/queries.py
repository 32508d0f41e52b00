"""QueryStore on SQLite: the query lifecycle, responses, and recovery after a crash."""

from __future__ import annotations

import json
import sqlite3

from core.models import (
    AgentLogEntry,
    AgentResponse,
    EventType,
    QueryStatus,
    UserQuery,
    check_transition,
    utc_now,
)
from core.protocols import INTERRUPTED_ERROR
from storage.activity import insert_log
from storage.base import SqliteBase
from storage.timestamps import to_db

_SAVE_RESPONSE = (
    "INSERT INTO responses (response_id, query_id, thread_id, status, response_text, sources,"
    " confidence_score, grounding_confidence, model_used, created_at)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (response_id) DO UPDATE SET query_id = excluded.query_id,"
    " thread_id = excluded.thread_id, status = excluded.status,"
    " response_text = excluded.response_text, sources = excluded.sources,"
    " confidence_score = excluded.confidence_score,"
    " grounding_confidence = excluded.grounding_confidence,"
    " model_used = excluded.model_used, created_at = excluded.created_at"
)


class QueryTables(SqliteBase):
    """The ``queries`` and ``responses`` tables."""

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
            error: why it failed; None keeps the error already stored.

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
        async with self._write(f"store response {response.response_id!r}") as conn:
            try:
                await conn.execute(_SAVE_RESPONSE, (
                    response.response_id, response.query_id, response.thread_id, response.status.value,
                    response.response_text, sources, response.confidence_score,
                    response.grounding_confidence, response.model_used, to_db(response.timestamp),
                ))
            except sqlite3.IntegrityError as exc:
                if "FOREIGN KEY" not in str(exc):
                    raise
                raise ValueError(
                    f"response {response.response_id!r} refers to query {response.query_id!r}, "
                    "which was never stored: call create_query first"
                ) from exc

    async def fail_interrupted(self) -> int:
        """Mark every PROCESSING query FAILED and log an ``error`` entry for each.

        Called at start-up: a query still PROCESSING then was cut off by a crash or a
        kill. Both the query's error and the entry's details are ``INTERRUPTED_ERROR``.

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
                await insert_log(conn, AgentLogEntry(
                    timestamp=now, event_type=EventType.ERROR, thread_id=row["thread_id"],
                    query_id=row["query_id"], query_text=row["query_text"], error_details=INTERRUPTED_ERROR,
                ))
        return len(rows)
