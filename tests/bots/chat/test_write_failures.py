"""Issue 10 item 14: a SQLite write failure still gives every Slack mention a visible reply."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiosqlite
import pytest

from bots.chat.services import Services, fake_services
from bots.runtime import StorageExports
from core.models import AgentResponse, EventType, UserQuery
from storage import base
from storage.sqlite import SqliteStore
from tests.bots.drivers import Answers, SlackHarness, all_text, mention, slack_settings
from tests.support.fake_slack import FakeSlack


class WritingAnswers(Answers):
    """Like the pipeline: the answer starts by storing the query."""

    def __init__(self, db: SqliteStore) -> None:
        super().__init__(db)
        self.db = db

    async def answer(self, question: str, *, thread_id: str | None = None, user_id: str | None = None,
                     user_context: str | None = None) -> AgentResponse:
        await self.db.create_query(UserQuery(query_text=question, thread_id=thread_id, user_id=user_id))
        return await super().answer(question, thread_id=thread_id, user_id=user_id, user_context=user_context)


@asynccontextmanager
async def slack_over_sqlite(fake: FakeSlack, path: Path) -> AsyncIterator[tuple[SlackHarness, SqliteStore]]:
    db = await SqliteStore.open(path)
    settings = slack_settings(fake)
    services = Services(settings=settings, answers=WritingAnswers(db), conversations=db, queries=db,
                        activity=db, feedback=db, events=db,
                        rate_limiter=fake_services(settings).rate_limiter,
                        exports=StorageExports(log=db, feedback=db))
    try:
        async with SlackHarness(fake, services) as harness:
            yield harness, db
    finally:
        await db.close()


def fail_writes(monkeypatch: pytest.MonkeyPatch, *, after: int = 0) -> list[int]:
    """Every write transaction after the first ``after`` fails as on a full disk."""
    real = base.immediate
    seen = [0]

    @asynccontextmanager
    async def full(conn: aiosqlite.Connection) -> AsyncIterator[aiosqlite.Connection]:
        seen[0] += 1
        if seen[0] > after:
            raise sqlite3.OperationalError("database or disk is full")
        async with real(conn) as inner:
            yield inner

    monkeypatch.setattr(base, "immediate", full)
    return seen


async def test_every_write_failing_still_gives_a_reply_with_a_reference(
    slack_fake: FakeSlack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with slack_over_sqlite(slack_fake, tmp_path / "ragbot.sqlite3") as (slack, _):
        writes = fail_writes(monkeypatch)
        for n in range(3):
            resp = await slack.event(mention(ts=f"100.00000{n}"), event_id=f"EvFull{n}")
            assert resp.status == 200
        updates = await slack_fake.wait_for("chat.update", 3)
        await slack.settle()
    assert writes[0] >= 3  # the retry ledger, the query, the error entry: each one failed
    for update in updates:
        text = all_text(update["blocks"]) + update["text"]
        assert "something went wrong on my side" in text and "reference" in text


async def test_a_failed_first_write_alone_does_not_stop_the_answer(
    slack_fake: FakeSlack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with slack_over_sqlite(slack_fake, tmp_path / "ragbot.sqlite3") as (slack, db):
        real = db.first_delivery

        async def ledger_full(platform: str, event_id: str) -> Any:
            raise base.StorageError("cannot record event: database or disk is full")

        monkeypatch.setattr(db, "first_delivery", ledger_full)
        await slack.event(mention(), event_id="EvLedger")
        [update] = await slack_fake.wait_for("chat.update")
        await slack.settle()
        monkeypatch.setattr(db, "first_delivery", real)
        sent = [e async for e in db.export(event_type=EventType.RESPONSE_SENT)]
    assert "Ragbot answers from your docs" in update["text"]
    assert len(sent) == 1


async def test_an_answer_delivered_while_the_log_is_full_is_not_lost_silently(
    slack_fake: FakeSlack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async with slack_over_sqlite(slack_fake, tmp_path / "ragbot.sqlite3") as (slack, db):
        real_log = db.log

        async def log_full(entry: Any) -> None:
            if entry.event_type is EventType.RESPONSE_SENT:
                raise base.StorageError("cannot log: database or disk is full")
            await real_log(entry)

        monkeypatch.setattr(db, "log", log_full)
        await slack.event(mention(), event_id="EvLogFull")
        [update] = await slack_fake.wait_for("chat.update")
        await slack.settle()
    assert "Ragbot answers from your docs" in update["text"]
    assert any("response_sent could not be logged" in r.getMessage() for r in caplog.records)
