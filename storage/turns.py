"""ConversationStore on SQLite: the turns of each thread's conversation."""

from __future__ import annotations

from core.models import ConversationTurn
from storage.base import SqliteBase
from storage.timestamps import from_db, to_db


class ConversationTables(SqliteBase):
    """The ``turns`` table."""

    async def add_turn(self, turn: ConversationTurn) -> None:
        """Append one turn to its thread."""
        async with self._write(f"add a turn to thread {turn.thread_id!r}", durable=False) as conn:
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
