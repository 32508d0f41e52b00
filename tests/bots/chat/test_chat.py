"""The shared chat layer on its own: text cutting, the error rule, pre-checks and export starts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bots.chat import asking, export
from bots.chat.errors import log_error
from bots.chat.services import fake_services
from bots.chat.text import split_text, truncate
from bots.runtime import StorageExports
from core.fakes import InMemoryStorage
from core.models import AgentLogEntry
from core.settings import Settings


def test_split_text_prefers_boundaries_and_cuts_long_words() -> None:
    assert split_text("aaa bbb ccc", 7) == ["aaa bbb", "ccc"]
    assert split_text("x" * 10, 4) == ["xxxx", "xxxx", "xx"]
    assert split_text("One. Two three.", 9) == ["One.", "Two", "three."]
    assert split_text("para one\n\npara two", 12) == ["para one", "para two"]
    assert split_text("abc def", 100, first=3) == ["abc", "def"]
    assert split_text("", 5) == [""]


def test_keep_whole_moves_a_cut_out_of_markup() -> None:
    def before_bracket(text: str, cut: int) -> int:
        opened = text.rfind("<", 0, cut)
        return opened if opened > text.rfind(">", 0, cut) else cut

    assert split_text("aa <link|xx>", 10) == ["aa <link|x", "x>"]
    assert split_text("aa <link|xx>", 10, keep_whole=before_bracket) == ["aa", "<link|xx>"]
    assert truncate("abcdef", 4) == "abc…" and truncate("abc", 4) == "abc"
    assert truncate("ab <cd>", 6, keep_whole=before_bracket) == "ab…"


class BrokenLog(InMemoryStorage):
    async def log(self, entry: AgentLogEntry, *, durable: bool = True) -> None:
        raise OSError("disk full")


async def test_a_failure_gets_a_reference_even_when_the_log_cannot_be_written() -> None:
    storage = InMemoryStorage()
    reference = await log_error(storage, "boom", platform="slack", thread_id="t", question="q?")
    [entry] = storage.entries
    assert entry.entry_id == reference and entry.error_details == "slack: boom" and entry.query_text == "q?"
    assert await log_error(BrokenLog(), "boom", platform="discord")  # still an id to quote


def test_precheck_refuses_empty_long_and_fast_questions_in_that_order() -> None:
    services = fake_services(Settings(_env_file=None, max_query_length=10,  # type: ignore[call-arg]
                                      rate_limit_per_minute=1))
    assert asking.precheck(services, "   ", user="u") == asking.Help()
    assert asking.precheck(services, "x" * 11, user="u") == asking.TooLong(length=11, limit=10)
    assert asking.precheck(services, "ok?", user="u") is None
    refusal = asking.precheck(services, "again?", user="u")
    assert isinstance(refusal, asking.RateLimited) and refusal.limit == 1
    assert "Please try again in" in asking.refusal_text(refusal)


def test_export_starts_are_read_by_the_injected_source() -> None:
    storage = InMemoryStorage()
    source = StorageExports(log=storage, feedback=storage)
    assert export.parse_since(source, None) is None and export.parse_since(source, "  ") is None
    assert export.parse_since(source, "2025-01-31") == datetime(2025, 1, 31, tzinfo=UTC)
    week_ago = export.parse_since(source, "7d")
    assert week_ago is not None
    assert abs(datetime.now(UTC) - timedelta(days=7) - week_ago) < timedelta(minutes=1)
    with pytest.raises(export.ExportUsageError, match="'yesterday' is not a start"):
        export.parse_since(source, "yesterday")
    usage = export.usage_text("`/x [since]`", export.ExportUsageError("'y' is not a start: no."))
    assert usage.startswith("'y' is not a start: no. Usage: `/x [since]`, since being a date")


async def test_services_without_storage_refuse_exports() -> None:
    services = fake_services()
    with pytest.raises(export.ExportUsageError, match="need ragbot's storage"):
        export.parse_since(services.exports, "7d")
    outcome = await export.send(services, export.ExportRequest(fmt="csv", since=None), platform="slack",
                                user="U1", deliver=lambda *_: None, max_bytes=10)  # type: ignore[arg-type,return-value]
    assert isinstance(outcome, export.ExportFailed)


def test_the_rate_limiter_forgets_idle_users() -> None:
    from bots.chat import ratelimit

    now = [0.0]
    limiter = ratelimit.RateLimiter(limit=2, window=60, clock=lambda: now[0])
    for i in range(ratelimit._FORGET_AFTER_USERS + 1):
        limiter.check(f"U{i}")
    now[0] = 61
    limiter.check("late")
    assert list(limiter._seen) == ["late"]
