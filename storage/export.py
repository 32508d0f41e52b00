"""Stream the AgentLogEntry log and feedback to JSON Lines or CSV, row by row."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, TextIO

from core.models import AgentLogEntry, EventType, Feedback
from core.protocols import ActivityLog, FeedbackStore

ExportFormat = Literal["jsonl", "csv"]
LOG_COLUMNS = list(AgentLogEntry.model_fields)
FEEDBACK_COLUMNS = list(Feedback.model_fields)


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _row(model: AgentLogEntry | Feedback) -> dict[str, object]:
    return model.model_dump(mode="json")


def _csv_row(model: AgentLogEntry | Feedback) -> dict[str, object]:
    """A row safe to open in a spreadsheet.

    Questions are typed by anyone in Slack or Discord; a cell starting with ``=`` (or
    ``+ - @``) would run as a formula on the admin's machine, so it is prefixed with ``'``.
    """
    return {k: f"'{v}" if isinstance(v, str) and v.startswith(_FORMULA_START) else v
            for k, v in _row(model).items()}


async def export_log(
    log: ActivityLog,
    out: TextIO,
    *,
    fmt: ExportFormat = "jsonl",
    since: datetime | None = None,
    until: datetime | None = None,
    event_type: EventType | None = None,
    thread_id: str | None = None,
    query_id: str | None = None,
) -> int:
    """Write matching log entries to ``out``; return how many were written."""
    writer = csv.DictWriter(out, fieldnames=LOG_COLUMNS) if fmt == "csv" else None
    if writer:
        writer.writeheader()
    count = 0
    async for entry in log.export(since=since, until=until, event_type=event_type, thread_id=thread_id,
                                  query_id=query_id):
        if writer:
            writer.writerow(_csv_row(entry))
        else:
            out.write(json.dumps(_row(entry), ensure_ascii=False) + "\n")
        count += 1
    return count


async def export_feedback(
    store: FeedbackStore, out: TextIO, *, fmt: ExportFormat = "jsonl", since: datetime | None = None
) -> int:
    """Write votes to ``out``; return how many were written."""
    writer = csv.DictWriter(out, fieldnames=FEEDBACK_COLUMNS) if fmt == "csv" else None
    if writer:
        writer.writeheader()
    count = 0
    async for vote in store.export_feedback(since=since):
        if writer:
            writer.writerow(_csv_row(vote))
        else:
            out.write(json.dumps(_row(vote), ensure_ascii=False) + "\n")
        count += 1
    return count


_RELATIVE = {"m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_when(text: str, *, now: datetime | None = None) -> datetime:
    """Parse ``2026-11-01``, an ISO 8601 datetime, or a relative age like ``30m``, ``24h``, ``7d``.

    Naive dates and datetimes are taken as UTC.

    Raises:
        ValueError: naming the text that could not be read.
    """
    from datetime import UTC, timedelta

    value = text.strip()
    now = now or datetime.now(UTC)
    if len(value) >= 2 and value[-1].lower() in _RELATIVE and value[:-1].isdigit():
        try:
            return now - timedelta(seconds=int(value[:-1]) * _RELATIVE[value[-1].lower()])
        except (OverflowError, ValueError):
            raise ValueError(f"{text!r} reaches back further than dates go") from None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(
            f"{text!r} is not a date: use 2026-11-01, 2026-11-01T12:00:00Z, or an age like 24h or 7d"
        ) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


@dataclass(frozen=True)
class ExportBundle:
    """The log and feedback exports of one request, ready to upload as two files."""

    log_text: str
    feedback_text: str
    log_rows: int
    feedback_rows: int
    log_filename: str
    feedback_filename: str


async def export_bundle(
    log: ActivityLog, feedback: FeedbackStore, *, fmt: ExportFormat, since: datetime | None
) -> ExportBundle:
    """Export the log and the votes since ``since`` in memory, as the chat adapters send them.

    Args:
        log: the activity log.
        feedback: the feedback store.
        fmt: ``jsonl`` or ``csv``.
        since: only entries and votes from this time on; None for everything.

    Returns:
        Both texts, their row counts and file names like ``ragbot-log-20250131-120000.csv``
        (UTC time of the export).
    """
    from datetime import UTC

    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    log_out, feedback_out = io.StringIO(), io.StringIO()
    log_rows = await export_log(log, log_out, fmt=fmt, since=since)
    feedback_rows = await export_feedback(feedback, feedback_out, fmt=fmt, since=since)
    return ExportBundle(
        log_text=log_out.getvalue(),
        feedback_text=feedback_out.getvalue(),
        log_rows=log_rows,
        feedback_rows=feedback_rows,
        log_filename=f"ragbot-log-{stamp}.{fmt}",
        feedback_filename=f"ragbot-feedback-{stamp}.{fmt}",
    )
