"""The one transaction helper of storage/: ``BEGIN IMMEDIATE`` ... ``COMMIT``, or ``ROLLBACK``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import aiosqlite


@asynccontextmanager
async def immediate(conn: aiosqlite.Connection) -> AsyncIterator[aiosqlite.Connection]:
    """Run the block in one write transaction, committed when it ends and rolled back if it raises.

    ``IMMEDIATE`` takes SQLite's write lock at ``BEGIN``, so a check made inside the
    block (is this migration applied? is this query PROCESSING?) cannot race another
    process. The connection must be opened with ``isolation_level=None`` so the
    sqlite3 module never starts transactions of its own.

    Raises:
        sqlite3.Error: from SQLite, unchanged (callers name what failed).
    """
    await conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
        await conn.commit()
    except BaseException:
        if conn.in_transaction:
            await conn.rollback()
        raise
