"""FeedbackStore on SQLite: one vote per user and response, streamed by latest change."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import datetime

from core.models import Feedback
from storage.base import SqliteBase
from storage.timestamps import from_db, to_db


class FeedbackTables(SqliteBase):
    """The ``feedback`` table."""

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
        """Stream votes oldest first by their latest change (ties by response, then user).

        Raises:
            ValueError: ``since`` is a naive datetime.
        """
        where = ["updated_at >= ?"] if since is not None else []
        params = [to_db(since, name="since")] if since is not None else []
        rows = self._pages(
            "export feedback", select="response_id, user_id, vote, platform, updated_at FROM feedback",
            where=where, params=params, keyset=("updated_at", "response_id", "user_id"),
        )
        async for row in rows:
            yield Feedback(
                response_id=row["response_id"], user_id=row["user_id"], vote=row["vote"],
                platform=row["platform"], timestamp=from_db(row["updated_at"]),
            )
