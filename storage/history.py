"""Read one question's whole record (``ragbot logs show``) and delete old history in batches.

``HistoryTables`` opens its own connection: ``ragbot serve`` runs the daily retention through
it beside the connection that answers, and each batch is one short transaction, so a
purge of millions of rows never holds the write lock for more than a few milliseconds.
"""

from __future__ import annotations

import asyncio
import json
from datetime import datetime
from typing import Any

from storage.base import SqliteBase, rowcount
from storage.timestamps import to_db

#: Rows deleted per transaction.
PURGE_BATCH = 2000
#: Tables whose rows expire by one timestamp column (``queries`` and what refers to it go together).
_EXPIRING = (("agent_log", "timestamp"), ("turns", "created_at"), ("feedback", "updated_at"),
             ("processed_events", "received_at"))
_LOG_COLUMNS = "entry_id, timestamp, event_type, thread_id, query_id, query_text, " \
               "response_summary, error_details, execution_time"


class HistoryTables(SqliteBase):
    """One question's rows across the tables, and the batched purge."""

    async def resolve_query_id(self, text: str) -> list[str]:
        """Query ids matching ``text``: a query id, a unique prefix of one, or an error's reference id."""
        rows = await self._read("find the query", "SELECT query_id FROM queries WHERE query_id = ?", (text,))
        if rows:
            return [text]
        rows = await self._read("find the reference", "SELECT query_id FROM agent_log WHERE entry_id = ?"
                                " AND query_id IS NOT NULL", (text,))
        if rows:
            return [rows[0]["query_id"]]
        if len(text) < 6:
            return []
        rows = await self._read("find the query by prefix", "SELECT query_id FROM queries"
                                " WHERE query_id >= ? AND query_id < ? ORDER BY query_id LIMIT 5",
                                (text, text + "\uffff"))
        return [r["query_id"] for r in rows]

    async def query_record(self, query_id: str) -> dict[str, Any] | None:
        """The ``queries`` row, its responses, log entries (oldest first) and votes; None if unknown."""
        rows = await self._read("read the query", "SELECT * FROM queries WHERE query_id = ?", (query_id,))
        if not rows:
            return None
        responses = await self._read("read the responses", "SELECT * FROM responses WHERE query_id = ?"
                                     " ORDER BY created_at", (query_id,))
        entries = await self._read("read the query's log", f"SELECT {_LOG_COLUMNS} FROM agent_log"
                                   " WHERE query_id = ? ORDER BY timestamp, entry_id", (query_id,))
        ids = [r["response_id"] for r in responses]
        votes = await self._read(
            "read the votes", "SELECT response_id, user_id, vote, platform, updated_at FROM feedback"
            f" WHERE response_id IN ({', '.join('?' * len(ids))}) ORDER BY updated_at", ids) if ids else []
        query = dict(rows[0])
        before = await self._read(
            "read the thread's previous question", "SELECT query_text FROM queries WHERE thread_id = ?"
            " AND created_at < ? ORDER BY created_at DESC LIMIT 1", (query["thread_id"], query["created_at"])
        ) if query["thread_id"] else []
        return {
            "states": await self._states(query_id),
            "query": query,
            "previous_question": before[0]["query_text"] if before else None,
            "responses": [{**dict(r), "sources": json.loads(r["sources"] or "[]")} for r in responses],
            "entries": [dict(e) for e in entries],
            "votes": [dict(v) for v in votes],
        }

    async def _states(self, query_id: str) -> list[dict[str, Any]]:
        """The question's state changes (``status_history``, when the schema has it), oldest first."""
        tables = await self._read("look for status_history", "SELECT 1 FROM sqlite_master"
                                  " WHERE type = 'table' AND name = 'status_history'")
        if not tables:
            return []
        rows = await self._read("read the state changes", "SELECT machine, status, entered_at, error"
                                " FROM status_history WHERE query_id = ? ORDER BY id", (query_id,))
        return [dict(r) for r in rows]

    async def count_older(self, before: datetime) -> dict[str, int]:
        """How many rows of each table ``purge(before)`` would delete."""
        cutoff = to_db(before, name="before")
        counts: dict[str, int] = {}
        for table, column in (("queries", "created_at"), *_EXPIRING):
            rows = await self._read(f"count old {table}", f"SELECT count(*) AS n FROM {table}"
                                    f" WHERE {column} < ?", (cutoff,))
            counts[table] = int(rows[0]["n"])
        return counts

    async def purge(self, before: datetime, *, batch: int = PURGE_BATCH) -> dict[str, int]:
        """Delete history older than ``before``, ``batch`` rows per transaction.

        Questions go with every row that refers to them (responses, and any table with a
        foreign key to ``queries``); the activity log, turns, votes and platform event ids by
        their own timestamps.

        Returns:
            Rows deleted per table.

        Raises:
            ValueError: ``before`` is naive or ``batch`` is below 1.
            StorageError: SQLite failed (rows deleted by earlier batches stay deleted).
        """
        if batch < 1:
            raise ValueError(f"batch {batch} must be at least 1")
        cutoff = to_db(before, name="before")
        deleted = await self._purge_queries(cutoff, batch)
        for table, column in _EXPIRING:
            deleted[table] = 0
            while True:
                async with self._write(f"purge {table}") as conn:
                    n = await rowcount(conn, f"DELETE FROM {table} WHERE rowid IN (SELECT rowid FROM {table}"
                                       f" WHERE {column} < ? LIMIT ?)", (cutoff, batch))
                deleted[table] += n
                await asyncio.sleep(0)  # let answers through between batches
                if n < batch:
                    break
        return deleted

    async def _dependents(self) -> list[tuple[str, str]]:
        """``(table, column)`` of every foreign key that refers to ``queries``."""
        tables = await self._read("list tables", "SELECT name FROM sqlite_master WHERE type = 'table'"
                                  " AND name NOT LIKE 'sqlite_%'")
        found: list[tuple[str, str]] = []
        for row in tables:
            # PRAGMA takes no ? parameter; the name comes from sqlite_master, quoted.
            name = str(row["name"]).replace('"', '""')
            for fk in await self._read("read foreign keys", f'PRAGMA foreign_key_list("{name}")'):
                if fk["table"] == "queries":
                    found.append((row["name"], fk["from"]))
        return found

    async def _purge_queries(self, cutoff: str, batch: int) -> dict[str, int]:
        dependents = await self._dependents()
        deleted = {"queries": 0, **{table: 0 for table, _ in dependents}}
        while True:
            async with self._write("purge old questions") as conn:
                ids = [r[0] for r in await conn.execute_fetchall(
                    "SELECT query_id FROM queries WHERE created_at < ? LIMIT ?", (cutoff, batch))]
                if ids:
                    marks = ", ".join("?" * len(ids))
                    for table, column in dependents:
                        safe_table, safe_column = table.replace('"', '""'), column.replace('"', '""')
                        deleted[table] += await rowcount(
                            conn, f'DELETE FROM "{safe_table}" WHERE "{safe_column}" IN ({marks})', ids)
                    deleted["queries"] += await rowcount(
                        conn, f"DELETE FROM queries WHERE query_id IN ({marks})", ids)
            await asyncio.sleep(0)
            if len(ids) < batch:
                return deleted
