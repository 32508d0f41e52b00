"""storage/export.py: the log and feedback streamed to CSV or JSON Lines, and ``parse_when``."""

from __future__ import annotations

import csv
import io
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from core.models import AgentLogEntry, EventType, Feedback
from storage.export import FEEDBACK_COLUMNS, LOG_COLUMNS, export_feedback, export_log, parse_when
from storage.sqlite import SqliteStore

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    opened = await SqliteStore.open(tmp_path / "ragbot.sqlite3")
    try:
        yield opened
    finally:
        await opened.close()


def _entry(minutes: float, event_type: EventType = EventType.QUERY_RECEIVED, **kw: object) -> AgentLogEntry:
    return AgentLogEntry(timestamp=T0 + timedelta(minutes=minutes), event_type=event_type, **kw)  # type: ignore[arg-type]



async def test_export_log_csv_and_jsonl(store: SqliteStore) -> None:
    entries = [_entry(i, thread_id="t1", query_text=f"question {i}, with \"quotes\"") for i in range(3)]
    entries.append(_entry(3, EventType.ERROR, thread_id="t2", error_details="boom\nsecond line"))
    await store.log_many(entries)

    out = io.StringIO()
    assert await export_log(store, out, fmt="csv") == 4
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert list(rows[0]) == LOG_COLUMNS
    assert [r["entry_id"] for r in rows] == [e.entry_id for e in entries]
    assert rows[3]["error_details"] == "boom\nsecond line"

    out = io.StringIO()
    assert await export_log(store, out, fmt="jsonl", thread_id="t1") == 3
    lines = out.getvalue().splitlines()
    assert [AgentLogEntry.model_validate_json(line) for line in lines] == entries[:3]



async def test_export_feedback_csv_and_jsonl(store: SqliteStore) -> None:
    votes = [Feedback(response_id="r1", user_id=f"u{i}", vote=1 if i else -1, platform="slack",
                      timestamp=T0 + timedelta(seconds=i)) for i in range(3)]
    for v in votes:
        await store.record_feedback(v)
    out = io.StringIO()
    assert await export_feedback(store, out, fmt="csv") == 3
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert list(rows[0]) == FEEDBACK_COLUMNS
    assert [r["vote"] for r in rows] == ["-1", "1", "1"]
    out = io.StringIO()
    assert await export_feedback(store, out, since=T0 + timedelta(seconds=1)) == 2
    assert [Feedback.model_validate_json(line) for line in out.getvalue().splitlines()] == votes[1:]



async def test_csv_export_defuses_spreadsheet_formulas(tmp_path: Path) -> None:
    import io

    from core.models import AgentLogEntry, EventType
    from storage.export import export_log

    store = await SqliteStore.open(tmp_path / "db.sqlite3")
    try:
        await store.log(AgentLogEntry(event_type=EventType.QUERY_RECEIVED,
                                      query_text='=HYPERLINK("http://evil.example","x")'))
        out = io.StringIO()
        await export_log(store, out, fmt="csv")
    finally:
        await store.close()
    assert "'=HYPERLINK" in out.getvalue()



def test_huge_ages_are_refused_not_crashing() -> None:

    with pytest.raises(ValueError, match="further than dates go"):
        parse_when("99999999999d")
