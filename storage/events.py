"""EventLedger on SQLite: platform event ids seen, so a retried delivery is processed once."""

from __future__ import annotations

from datetime import datetime

from core.models import utc_now
from storage.base import SqliteBase, rowcount
from storage.timestamps import to_db


class EventTables(SqliteBase):
    """The ``processed_events`` table."""

    async def first_delivery(self, platform: str, event_id: str) -> bool:
        """Record ``(platform, event_id)``; True the first time, False ever after (across restarts)."""
        async with self._write(f"record {platform} event {event_id!r}") as conn:
            # INSERT OR IGNORE decides atomically, even against another process.
            inserted = await rowcount(
                conn,
                "INSERT OR IGNORE INTO processed_events (platform, event_id, received_at) VALUES (?, ?, ?)",
                (platform, event_id, to_db(utc_now())),
            )
        return inserted == 1

    async def prune_events(self, *, before: datetime) -> int:
        """Forget event ids received before ``before`` (platforms stop retrying within hours).

        Returns:
            How many ids were removed.

        Raises:
            ValueError: ``before`` is a naive datetime.
        """
        cutoff = to_db(before, name="before")
        async with self._write("prune processed events") as conn:
            return await rowcount(conn, "DELETE FROM processed_events WHERE received_at < ?", (cutoff,))
