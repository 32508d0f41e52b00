"""Start-up recovery that touches only questions whose owner process is gone.

Every query row records the process that created it (migration 0003: ``owner_pid`` and
``owner_started``, the process's start time from /proc, so a recycled pid is not taken for
the owner). When ragbot starts it fails the PENDING and PROCESSING queries whose owner no
longer runs; a batch still being answered by another ``ragbot ask`` keeps its queries, so
starting a second command can no longer fail the first one's answers. Rows from before
migration 0003 have no owner and count as orphaned.
"""

from __future__ import annotations

import sqlite3

import aiosqlite

from core.models import QueryStatus
from core.processes import OwnerAlive, current_owner, owner_alive

__all__ = ["OwnerAlive", "orphaned", "owner_alive", "record_owner"]

async def record_owner(conn: aiosqlite.Connection, query_id: str) -> None:
    """Stamp a new query with this process (inside the caller's transaction)."""
    pid, started = current_owner()
    await conn.execute("UPDATE queries SET owner_pid = ?, owner_started = ? WHERE query_id = ?",
                       (pid, started, query_id))


async def orphaned(conn: aiosqlite.Connection, is_alive: OwnerAlive = owner_alive) -> list[sqlite3.Row]:
    """PENDING and PROCESSING queries whose owner process is gone, oldest first."""
    rows = await conn.execute_fetchall(
        "SELECT query_id, thread_id, query_text, owner_pid, owner_started FROM queries"
        " WHERE status IN (?, ?) ORDER BY created_at",
        (QueryStatus.PENDING.value, QueryStatus.PROCESSING.value),
    )
    return [row for row in rows if not is_alive(row["owner_pid"], row["owner_started"])]
