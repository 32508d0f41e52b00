"""Read-only figures for ``ragbot stats``: outcomes, latencies, pages cited, votes, unanswered questions.

Every query is bounded by a time window and reads with ``?`` placeholders; percentiles are
taken in SQL (``ORDER BY ... LIMIT 1 OFFSET k``) so memory stays flat on a large log.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from core.models import EventType
from storage.base import SqliteBase
from storage.timestamps import from_db, to_db

#: The platform of a question, from its thread id (``slack:...``, ``discord:...``; anything else is the CLI).
_PLATFORM = ("CASE WHEN q.thread_id LIKE 'slack:%' THEN 'slack' "
             "WHEN q.thread_id LIKE 'discord:%' THEN 'discord' ELSE 'cli' END")
#: One outcome per question; ``?`` is the small-talk reply's text.
_OUTCOME = (
    "CASE WHEN r.status IS NULL THEN (CASE q.status WHEN 'FAILED' THEN 'failed' ELSE 'pending' END) "
    "WHEN r.status = 'no_relevant_documents' AND r.response_text = ? THEN 'small_talk' "
    "WHEN r.status = 'no_relevant_documents' THEN 'not_found' "
    "WHEN r.status = 'retrieval_failed' THEN 'failed' "
    "WHEN r.status = 'validation_failed' THEN 'unverified' ELSE 'answered' END"
)
_JOINED = "FROM queries q LEFT JOIN responses r ON r.query_id = q.query_id"


@dataclass(frozen=True, slots=True)
class Window:
    """A half-open time range ``[since, until)`` in the database's text form."""

    since: str
    until: str

    @classmethod
    def of(cls, since: datetime, until: datetime) -> Window:
        """Build from aware datetimes.

        Raises:
            ValueError: a naive datetime, or ``since`` not before ``until``.
        """
        if since >= until:
            raise ValueError(f"since {since.isoformat()} must be before until {until.isoformat()}")
        return cls(since=to_db(since, name="since"), until=to_db(until, name="until"))


@dataclass(frozen=True, slots=True)
class Latency:
    """Percentiles of one pipeline step, in seconds."""

    count: int
    p50: float | None
    p95: float | None


class StatsReader(SqliteBase):
    """The queries behind ``ragbot stats``, over one read connection."""

    async def outcomes(self, window: Window, *, small_talk: str) -> list[tuple[str, str, int]]:
        """``(platform, outcome, questions)`` for questions asked in the window."""
        rows = await self._read(
            "count questions by outcome",
            f"SELECT {_PLATFORM} AS platform, {_OUTCOME} AS outcome, count(*) AS n {_JOINED}"
            " WHERE q.created_at >= ? AND q.created_at < ? GROUP BY platform, outcome",
            (small_talk, window.since, window.until),
        )
        return [(r["platform"], r["outcome"], int(r["n"])) for r in rows]

    async def per_day(self, window: Window, *, small_talk: str) -> list[tuple[str, int, int]]:
        """``(YYYY-MM-DD, questions, not found)`` per UTC day of the window, oldest first."""
        rows = await self._read(
            "count questions per day",
            f"SELECT substr(q.created_at, 1, 10) AS day, count(*) AS n,"
            f" sum(({_OUTCOME}) = 'not_found') AS missed {_JOINED}"
            " WHERE q.created_at >= ? AND q.created_at < ? GROUP BY day ORDER BY day",
            (small_talk, window.since, window.until),
        )
        return [(r["day"], int(r["n"]), int(r["missed"] or 0)) for r in rows]

    async def latency(self, window: Window, event: EventType) -> Latency:
        """p50 and p95 (nearest rank) of one step's ``execution_time``."""
        where = ("FROM agent_log WHERE event_type = ? AND timestamp >= ? AND timestamp < ?"
                 " AND execution_time IS NOT NULL")
        params = (EventType(event).value, window.since, window.until)
        rows = await self._read(f"count {event.value} timings", f"SELECT count(*) AS n {where}", params)
        count = int(rows[0]["n"])
        if count == 0:
            return Latency(count=0, p50=None, p95=None)

        async def rank(p: float) -> float:
            offset = max(0, math.ceil(p * count) - 1)
            found = await self._read(f"read {event.value} percentile",
                                     f"SELECT execution_time AS t {where} ORDER BY execution_time"
                                     " LIMIT 1 OFFSET ?", (*params, offset))
            return float(found[0]["t"])

        return Latency(count=count, p50=await rank(0.50), p95=await rank(0.95))

    async def histogram(self, window: Window, event: EventType, edges: list[float]) -> list[int]:
        """How many timings of ``event`` fall below each edge (seconds) and above the last one.

        Returns:
            ``len(edges) + 1`` counts: ``[< e0, e0 .. e1, ..., >= e_last]``.
        """
        below = ", ".join(f"sum(execution_time < ?) AS b{i}" for i in range(len(edges)))
        rows = await self._read(
            f"bucket {event.value} timings",
            f"SELECT count(*) AS n{', ' + below if below else ''} FROM agent_log WHERE event_type = ?"
            " AND timestamp >= ? AND timestamp < ? AND execution_time IS NOT NULL",
            (*edges, EventType(event).value, window.since, window.until),
        )
        row = rows[0]
        cumulative = [int(row[f"b{i}"] or 0) for i in range(len(edges))] + [int(row["n"])]
        return [cumulative[0]] + [b - a for a, b in itertools.pairwise(cumulative)]

    async def top_pages(self, window: Window, *, limit: int) -> list[tuple[str, str, int]]:
        """``(url, title, answers citing it)`` for the most-cited pages, most first."""
        rows = await self._read(
            "count cited pages",
            "SELECT json_extract(s.value, '$.url') AS url, max(json_extract(s.value, '$.title')) AS title,"
            " count(DISTINCT r.response_id) AS n FROM responses r, json_each(r.sources) s"
            " WHERE r.created_at >= ? AND r.created_at < ? AND r.status IN ('answered', 'validation_failed')"
            " GROUP BY url ORDER BY n DESC, url LIMIT ?",
            (window.since, window.until, limit),
        )
        return [(r["url"], r["title"] or r["url"], int(r["n"])) for r in rows]

    async def votes(self, window: Window) -> tuple[int, int]:
        """``(thumbs up, thumbs down)`` cast (or last changed) in the window."""
        rows = await self._read(
            "count votes",
            "SELECT vote, count(*) AS n FROM feedback WHERE updated_at >= ? AND updated_at < ? GROUP BY vote",
            (window.since, window.until),
        )
        counts = {int(r["vote"]): int(r["n"]) for r in rows}
        return counts.get(1, 0), counts.get(-1, 0)

    async def thumbs_down(self, window: Window, *, limit: int) -> list[dict[str, Any]]:
        """The latest thumbs-down votes with their question and answer, newest first."""
        rows = await self._read(
            "read thumbs-down answers",
            "SELECT f.updated_at, f.platform, r.query_id, r.status, r.response_text, q.query_text"
            " FROM feedback f JOIN responses r ON r.response_id = f.response_id"
            " LEFT JOIN queries q ON q.query_id = r.query_id"
            " WHERE f.vote = -1 AND f.updated_at >= ? AND f.updated_at < ?"
            " ORDER BY f.updated_at DESC LIMIT ?",
            (window.since, window.until, limit),
        )
        return [{"when": from_db(r["updated_at"]).isoformat(), "platform": r["platform"],
                 "query_id": r["query_id"], "question": r["query_text"] or "", "status": r["status"],
                 "answer": r["response_text"]} for r in rows]

    async def unanswered(self, window: Window, *, small_talk: str, limit: int) -> list[tuple[str, str]]:
        """``(question, asked at)`` of the latest questions the docs did not answer."""
        rows = await self._read(
            "read unanswered questions",
            f"SELECT q.query_text, q.created_at {_JOINED} WHERE q.created_at >= ? AND q.created_at < ?"
            " AND r.status = 'no_relevant_documents' AND r.response_text <> ?"
            " ORDER BY q.created_at DESC LIMIT ?",
            (window.since, window.until, small_talk, limit),
        )
        return [(r["query_text"], r["created_at"]) for r in rows]

    async def errors(self, window: Window, *, limit: int) -> list[tuple[str, int]]:
        """``(error, times)`` of the commonest ``error`` entries (first 80 characters), most first."""
        rows = await self._read(
            "count errors",
            "SELECT substr(coalesce(error_details, ''), 1, 80) AS kind, count(*) AS n FROM agent_log"
            " WHERE event_type = ? AND timestamp >= ? AND timestamp < ?"
            " GROUP BY kind ORDER BY n DESC, kind LIMIT ?",
            (EventType.ERROR.value, window.since, window.until, limit),
        )
        return [(r["kind"], int(r["n"])) for r in rows]

    async def integrity(self) -> str:
        """``PRAGMA quick_check``: ``"ok"``, or SQLite's description of the damage."""
        rows = await self._read("check the database", "PRAGMA quick_check")
        return "; ".join(str(r[0]) for r in rows)

    async def schema_version(self) -> int:
        """The highest migration applied."""
        rows = await self._read("read the schema version", "SELECT max(version) AS v FROM schema_migrations")
        return int(rows[0]["v"] or 0)

    async def last_ingest(self) -> dict[str, Any] | None:
        """The latest ``ingest_completed`` entry (when, what, counts), or None when none was recorded."""
        rows = await self._read(
            "read the last ingest",
            "SELECT timestamp, response_summary, execution_time FROM agent_log WHERE event_type = ?"
            " ORDER BY timestamp DESC LIMIT 1",
            (EventType.INGEST_COMPLETED.value,),
        )
        if not rows:
            return None
        return {"when": from_db(rows[0]["timestamp"]).isoformat(), "summary": rows[0]["response_summary"],
                "seconds": rows[0]["execution_time"]}
