"""``ragbot stats``: gather the week's figures from SQLite and print them as text or JSON.

What an admin asks every week: how many questions (per platform), how many were answered,
not found or failed, how fast each pipeline step was (p50 / p95), which pages were cited,
the votes, the unanswered questions grouped into coverage gaps, the thumbs-down answers,
the commonest errors and when the docs were last synced.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from bots.admin.gaps import Gap, group_unanswered
from core.answer.responses import SMALL_TALK_TEXT
from core.models import EventType
from storage.stats import Latency, StatsReader, Window

OUTCOMES = ("answered", "unverified", "not_found", "failed", "small_talk", "pending")
#: Pipeline steps timed in the activity log, by the name the report shows.
STEPS = {
    "embed": EventType.EMBEDDING_GENERATED,
    "search": EventType.RETRIEVAL_PERFORMED,
    "rank": EventType.RESULTS_RANKED,
    "answer (end to end)": EventType.RESPONSE_GENERATED,
    "delivered (event to reply)": EventType.RESPONSE_SENT,
}
#: Upper edges (seconds) of the latency histogram's buckets.
HISTOGRAM_EDGES = [0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0]
#: Unanswered questions read for grouping (the most recent ones).
GAP_SAMPLE = 2000


@dataclass(kw_only=True)
class Stats:
    """Everything ``ragbot stats`` reports for one window."""

    since: datetime
    until: datetime
    by_platform: dict[str, dict[str, int]]
    latency: dict[str, Latency]
    histogram: list[int]
    per_day: list[tuple[str, int, int]]
    top_pages: list[tuple[str, str, int]]
    votes: tuple[int, int]
    gaps: list[Gap]
    thumbs_down: list[dict[str, Any]]
    errors: list[tuple[str, int]]
    last_ingest: dict[str, Any] | None
    totals: dict[str, int] = field(init=False)

    def __post_init__(self) -> None:
        self.totals = {o: sum(p.get(o, 0) for p in self.by_platform.values()) for o in OUTCOMES}

    @property
    def questions(self) -> int:
        """Questions asked in the window."""
        return sum(self.totals.values())

    def rate(self, outcome: str) -> float | None:
        """Share of the window's questions with ``outcome`` (None when there were none)."""
        return self.totals[outcome] / self.questions if self.questions else None


async def gather(path: Path, *, since: datetime, until: datetime, top: int = 10) -> Stats:
    """Read the figures from the database at ``path`` (which must exist).

    Raises:
        ValueError: ``since`` is not before ``until``.
        StorageError: the database cannot be read (locked past the busy timeout, damaged ...).
    """
    window = Window.of(since, until)
    async with await StatsReader.open(path) as db:
        by_platform: dict[str, dict[str, int]] = {}
        for platform, outcome, n in await db.outcomes(window, small_talk=SMALL_TALK_TEXT):
            by_platform.setdefault(platform, {})[outcome] = n
        latency = {name: await db.latency(window, event) for name, event in STEPS.items()}
        unanswered = await db.unanswered(window, small_talk=SMALL_TALK_TEXT, limit=GAP_SAMPLE)
        return Stats(
            since=since, until=until, by_platform=by_platform, latency=latency,
            histogram=await db.histogram(window, EventType.RESPONSE_GENERATED, HISTOGRAM_EDGES),
            per_day=await db.per_day(window, small_talk=SMALL_TALK_TEXT),
            top_pages=await db.top_pages(window, limit=top), votes=await db.votes(window),
            gaps=group_unanswered(unanswered, limit=top), thumbs_down=await db.thumbs_down(window, limit=top),
            errors=await db.errors(window, limit=5), last_ingest=await db.last_ingest(),
        )


def ms(seconds: float | None) -> float | None:
    """Seconds as milliseconds rounded to 0.1."""
    return None if seconds is None else round(seconds * 1000, 1)


def histogram_labels() -> list[str]:
    """One label per histogram bucket: ``< 5 ms`` ... ``>= 10 s``."""
    def fmt(s: float) -> str:
        return f"{s:g} s" if s >= 1 else f"{s * 1000:g} ms"

    return [f"< {fmt(HISTOGRAM_EDGES[0])}",
            *(f"{fmt(a)}-{fmt(b)}" for a, b in itertools.pairwise(HISTOGRAM_EDGES)),
            f">= {fmt(HISTOGRAM_EDGES[-1])}"]


def to_json(stats: Stats) -> dict[str, Any]:
    """The report as one JSON object (times in ms, rounded to 0.1)."""
    return {
        "since": stats.since.isoformat(), "until": stats.until.isoformat(),
        "questions": stats.questions, "outcomes": stats.totals,
        "rates": {o: None if stats.rate(o) is None else round(stats.rate(o) or 0.0, 4) for o in OUTCOMES},
        "by_platform": stats.by_platform,
        "latency_ms": {name: {"count": lat.count, "p50": ms(lat.p50), "p95": ms(lat.p95)}
                       for name, lat in stats.latency.items()},
        "answer_latency_histogram": [{"bucket": label, "count": n}
                                     for label, n in zip(histogram_labels(), stats.histogram, strict=True)],
        "per_day": [{"day": d, "questions": n, "not_found": m} for d, n, m in stats.per_day],
        "top_pages": [{"url": u, "title": t, "answers": n} for u, t, n in stats.top_pages],
        "feedback": {"up": stats.votes[0], "down": stats.votes[1]},
        "coverage_gaps": [g.to_json() for g in stats.gaps],
        "thumbs_down": stats.thumbs_down,
        "errors": [{"error": e, "count": n} for e, n in stats.errors],
        "last_ingest": stats.last_ingest,
    }


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def to_text(stats: Stats) -> str:
    """The report as plain text for a terminal."""
    lines = [f"ragbot stats {stats.since:%Y-%m-%d %H:%M} .. {stats.until:%Y-%m-%d %H:%M} UTC", ""]
    if not stats.questions:
        lines.append("No questions in this period.")
    else:
        lines.append(f"{stats.questions} questions: " + ", ".join(
            f"{stats.totals[o]} {o.replace('_', ' ')} ({_pct(stats.rate(o))})" for o in OUTCOMES
            if stats.totals[o]))
        for platform, counts in sorted(stats.by_platform.items()):
            lines.append(f"  {platform:<8} {sum(counts.values()):>6}  " + ", ".join(
                f"{counts[o]} {o.replace('_', ' ')}" for o in OUTCOMES if counts.get(o)))
    lines += ["", f"{'step':<28}{'count':>8}{'p50 ms':>10}{'p95 ms':>10}"]
    for name, lat in stats.latency.items():
        lines.append(f"{name:<28}{lat.count:>8}{_num(ms(lat.p50)):>10}{_num(ms(lat.p95)):>10}")
    lines += ["", f"feedback: {stats.votes[0]} up, {stats.votes[1]} down"]
    lines += _section("most-cited pages", [f"{n:>5}  {_clip(t, 40)}  {u}" for u, t, n in stats.top_pages])
    lines += _section("coverage gaps (unanswered questions, grouped)", [
        f"{g.count:>5}  {_clip(g.question, 70)}" + (f"  (also: {_clip('; '.join(g.variants), 60)})"
                                                    if g.variants else "") for g in stats.gaps])
    lines += _section("thumbs down", [
        f"  {t['when'][:16]} {t['platform']}: {_clip(t['question'], 60)}\n      -> {_clip(t['answer'], 90)}"
        f"\n      ragbot logs show {t['query_id']}" for t in stats.thumbs_down])
    lines += _section("errors", [f"{n:>5}  {_clip(e, 80)}" for e, n in stats.errors])
    ingest = stats.last_ingest
    lines += ["", "last ingest: " + (f"{ingest['when'][:19]} UTC  {ingest['summary']}" if ingest
                                     else "none recorded")]
    return "\n".join(lines)


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def _section(title: str, rows: list[str]) -> list[str]:
    return ["", f"{title}:", *(rows or ["  (none)"])]
