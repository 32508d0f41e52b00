"""SQLite storage on aiosqlite: queries, responses, turns, the activity log, feedback, event ids.

One ``SqliteStore`` implements ``ConversationStore``, ``QueryStore``, ``ActivityLog``,
``FeedbackStore`` and ``EventLedger`` (core/protocols.py) over a single connection.
Each table module holds the SQL of one Protocol (storage/turns.py, queries.py,
activity.py, feedback.py, events.py) over ``storage/base.py:SqliteBase``, which owns
the connection and the one transaction helper. ``core/fakes.py:InMemoryStorage`` is its
in-memory twin; tests/contracts/test_storage_contract.py holds both to one contract.

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

from storage.activity import ActivityLogTables
from storage.base import BUSY_TIMEOUT_MS, DEFAULT_PAGE_SIZE
from storage.events import EventTables
from storage.feedback import FeedbackTables
from storage.queries import QueryTables
from storage.turns import ConversationTables

__all__ = ["BUSY_TIMEOUT_MS", "DEFAULT_PAGE_SIZE", "SqliteStore"]


class SqliteStore(ConversationTables, QueryTables, ActivityLogTables, FeedbackTables, EventTables):
    """All of ragbot's SQLite tables behind the storage Protocols.

    Open it with ``await SqliteStore.open(path)``; see ``SqliteBase`` for how writes
    and reads are serialised.
    """
