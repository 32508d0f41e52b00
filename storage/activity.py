"""ActivityLog on SQLite: the AgentLogEntry log, appended and streamed oldest first."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Sequence
from datetime import datetime
from typing import Any

import aiosqlite

from core.models import AgentLogEntry, EventType
from storage.base import SqliteBase
from storage.timestamps import from_db, to_db

_LOG_COLUMNS = (
    "entry_id, timestamp, event_type, thread_id, query_id, query_text, "
    "response_summary, error_details, execution_time"
)


async def insert_log(conn: aiosqlite.Connection, entry: AgentLogEntry) -> None:
    """Insert one entry inside the caller's transaction.

    Raises:
        ValueError: an entry with this ``entry_id`` already exists.
    """
    try:
        await conn.execute(
            f"INSERT INTO agent_log ({_LOG_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (entry.entry_id, to_db(entry.timestamp), entry.event_type.value, entry.thread_id,
             entry.query_id, entry.query_text, entry.response_summary, entry.error_details,
             entry.execution_time),
        )
    except sqlite3.IntegrityError as exc:
        raise ValueError(f"log entry {entry.entry_id!r} already exists") from exc


class ActivityLogTables(SqliteBase):
    """The ``agent_log`` table."""

    async def log(self, entry: AgentLogEntry, *, durable: bool = True) -> None:
        """Append one entry.

        Args:
            entry: the entry.
            durable: False for a step of an answer, whose final status write flushes it to disk
                (``SqliteBase``); an entry standing alone (an export, an error) is flushed itself.

        Raises:
            ValueError: an entry with this ``entry_id`` already exists.
        """
        async with self._write(f"log entry {entry.entry_id!r}", durable=durable) as conn:
            await insert_log(conn, entry)

    async def log_many(self, entries: Sequence[AgentLogEntry]) -> None:
        """Append several entries in one transaction (all or none); for imports and tests."""
        async with self._write(f"log {len(entries)} entries") as conn:
            for entry in entries:
                await insert_log(conn, entry)

    async def export(
        self,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        event_type: EventType | None = None,
        thread_id: str | None = None,
        query_id: str | None = None,
    ) -> AsyncIterator[AgentLogEntry]:
        """Stream matching entries oldest first (ties by ``entry_id``), one page at a time.

        Args:
            since: keep entries at or after this instant (inclusive).
            until: keep entries before this instant (exclusive).
            event_type: keep only this kind.
            thread_id: keep only this thread.
            query_id: keep only this question's entries.

        Raises:
            ValueError: ``since`` or ``until`` is a naive datetime.
        """
        where, params = _filters(since=since, until=until, event_type=event_type, thread_id=thread_id,
                                 query_id=query_id)
        rows = self._pages("export the activity log", select=f"{_LOG_COLUMNS} FROM agent_log",
                           where=where, params=params, keyset=("timestamp", "entry_id"))
        async for row in rows:
            yield AgentLogEntry(
                entry_id=row["entry_id"], timestamp=from_db(row["timestamp"]),
                event_type=row["event_type"], thread_id=row["thread_id"], query_id=row["query_id"],
                query_text=row["query_text"], response_summary=row["response_summary"],
                error_details=row["error_details"], execution_time=row["execution_time"],
            )


def _filters(
    *, since: datetime | None, until: datetime | None, event_type: EventType | None, thread_id: str | None,
    query_id: str | None = None,
) -> tuple[list[str], list[Any]]:
    """The WHERE conditions (``?`` placeholders) and their values for ``export``."""
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
    if query_id is not None:
        where.append("query_id = ?")
        params.append(query_id)
    return where, params
