"""The Slack adapter end to end: signed HTTP events in, Web API calls to a fake Slack out."""

from __future__ import annotations

import asyncio
import contextlib
import csv
import io
import json
import re
import socket
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp
import pytest

from bots.chat.export import ExportUsageError
from bots.chat.services import Services, fake_services
from bots.runtime import StorageExports
from bots.slack import format as fmt
from bots.slack.app import build_slack_app, run_slack
from bots.slack.listeners import parse_export_args, slack_thread_id
from core.errors import ConfigurationError, QueryValidationError
from core.fakes import InMemoryStorage
from core.models import (
    AgentLogEntry,
    AgentResponse,
    ConversationTurn,
    EventType,
    ResponseStatus,
    RetrievedChunk,
    Source,
    TurnRole,
)
from core.settings import Settings
from storage.export import LOG_COLUMNS, parse_when
from tests.bots.drivers import (
    TEAM,
    TOKEN,
    Answers,
    all_text,
    event_body,
    mention,
    message,
    services_over,
    signed_headers,
)
from tests.bots.drivers import SlackHarness as Harness
from tests.bots.drivers import slack_settings as make_settings
from tests.support.fake_slack import FakeSlack


@pytest.fixture
def fake(slack_fake: FakeSlack) -> FakeSlack:
    return slack_fake


@pytest.fixture
def storage() -> InMemoryStorage:
    return InMemoryStorage()


@pytest.fixture
def answers(storage: InMemoryStorage) -> Answers:
    return Answers(storage)


def services_for(fake: FakeSlack, storage: InMemoryStorage, answers: Answers, **overrides: Any) -> Services:
    return services_over(make_settings(fake, **overrides), storage, answers)


@pytest.fixture
async def slack(fake: FakeSlack, storage: InMemoryStorage, answers: Answers) -> AsyncIterator[Harness]:
    async with Harness(fake, services_for(fake, storage, answers)) as harness:
        yield harness


# --------------------------------------------------------------------------- answering


async def test_mention_is_answered_in_its_thread_with_cited_blocks(
    slack: Harness, fake: FakeSlack, answers: Answers, storage: InMemoryStorage
) -> None:
    started = time.perf_counter()
    resp = await slack.event(mention())
    assert resp.status == 200
    assert time.perf_counter() - started < 3  # acked before the answer is worked out

    [update] = await fake.wait_for("chat.update")
    await slack.drain()
    assert answers.calls == [{"question": "how do I install ragbot?", "thread_id": "slack:T1:C1:100.000001",
                              "user_id": "U1", "user_context": None}]
    [placeholder] = fake.calls_to("chat.postMessage")
    assert placeholder["text"] == fmt.PLACEHOLDER_TEXT
    assert placeholder["thread_ts"] == "100.000001" and placeholder["channel"] == "C1"
    assert placeholder["unfurl_links"] is False and placeholder["unfurl_media"] is False
    assert update["ts"] != "100.000001" and update["channel"] == "C1"
    assert update["unfurl_links"] is False and update["unfurl_media"] is False

    blocks = update["blocks"]
    sections = [b["text"]["text"] for b in blocks if b["type"] == "section"]
    assert sections == ["Ragbot answers from your docs <https://ragbot.dev/docs/install|[1]>."]
    contexts = [b["elements"][0]["text"] for b in blocks if b["type"] == "context"]
    assert contexts == ["*Sources*\n[1] <https://ragbot.dev/docs/install|Install> — Quick start"]
    [actions] = [b for b in blocks if b["type"] == "actions"]
    response_id = answers.responses[0].response_id
    assert [(e["action_id"], e["value"]) for e in actions["elements"]] == [
        ("ragbot_feedback_up", response_id), ("ragbot_feedback_down", response_id)]
    assert update["text"].startswith("Ragbot answers from your docs")

    methods = fake.methods()
    updated = methods.index("chat.update")
    assert methods.index("reactions.add") < updated and methods.index("chat.postMessage") < updated
    assert methods.index("chat.update") < methods.index("reactions.remove")
    assert fake.calls_to("reactions.add")[0]["name"] == "eyes"
    assert {c["_token"] for c in (c.params for c in fake.calls)} == {TOKEN}
    [sent] = [e for e in storage.entries if e.event_type is EventType.RESPONSE_SENT]
    assert sent.thread_id == "slack:T1:C1:100.000001" and sent.response_summary
    assert sent.response_summary.startswith("slack: answered")
    assert sent.execution_time is not None and sent.execution_time > 0


async def test_event_is_acked_before_the_answer_is_ready(
    slack: Harness, fake: FakeSlack, answers: Answers
) -> None:
    gate = asyncio.Event()
    answer = answers.answer

    async def slow(question: str, **kwargs: Any) -> AgentResponse:
        await gate.wait()
        return await answer(question, **kwargs)

    answers.answer = slow  # type: ignore[method-assign]
    resp = await slack.event(mention())
    assert resp.status == 200
    await fake.wait_for("chat.postMessage")  # the placeholder is up while the pipeline works
    assert "chat.update" not in fake.methods()
    gate.set()
    [update] = await fake.wait_for("chat.update")
    assert update["blocks"][0]["type"] == "section"


async def test_follow_up_in_an_answered_thread_needs_no_mention(
    slack: Harness, fake: FakeSlack, answers: Answers
) -> None:
    await slack.event(mention())
    await fake.wait_for("chat.update")
    await slack.drain()
    # A reply in the thread the bot answered in, without a mention: answered.
    await slack.event(message("and on Windows?", ts="100.000005", thread_ts="100.000001"))
    await fake.wait_for("chat.update", 2)
    # A reply in someone else's thread, and a top-level message: ignored.
    await slack.event(message("unrelated chat", ts="200.000002", thread_ts="200.000001"))
    await slack.event(message("top level chat", ts="300.000001"))
    await slack.settle()
    assert [c["question"] for c in answers.calls] == ["how do I install ragbot?", "and on Windows?"]
    assert {c["thread_id"] for c in answers.calls} == {"slack:T1:C1:100.000001"}
    assert fake.calls_to("chat.postMessage")[1]["thread_ts"] == "100.000001"


async def test_follow_ups_off_when_settings_say_mention(
    fake: FakeSlack, storage: InMemoryStorage, answers: Answers
) -> None:
    async with Harness(fake, services_for(fake, storage, answers, slack_followups="mention")) as slack:
        await slack.event(mention())
        await fake.wait_for("chat.update")
        await slack.drain()
        await slack.event(message("and on Windows?", ts="100.000005", thread_ts="100.000001"))
        await slack.settle()
    assert len(answers.calls) == 1


async def test_mention_inside_answered_thread_is_answered_once(
    slack: Harness, fake: FakeSlack, answers: Answers
) -> None:
    await slack.event(mention())
    await fake.wait_for("chat.update")
    await slack.drain()
    # Slack sends both app_mention and message.channels for this one message.
    text = "<@UBOT> and on Mac?"
    await slack.event(message(text, ts="100.000007", thread_ts="100.000001"))
    await slack.event(mention(text, ts="100.000007", thread_ts="100.000001"))
    await fake.wait_for("chat.update", 2)
    await slack.settle()
    assert [c["question"] for c in answers.calls] == ["how do I install ragbot?", "and on Mac?"]


async def test_empty_mention_gets_help(slack: Harness, fake: FakeSlack, answers: Answers) -> None:
    await slack.event(mention("<@UBOT>   "))
    [reply] = await fake.wait_for("chat.postMessage")
    await slack.settle()
    assert "Ask me anything about the docs" in reply["text"]
    assert reply["thread_ts"] == "100.000001" and reply["unfurl_links"] is False
    assert answers.calls == [] and "chat.update" not in fake.methods()


async def test_direct_message_is_answered(slack: Harness, fake: FakeSlack, answers: Answers) -> None:
    await slack.event(message("what is ragbot?", ts="400.000001", channel="D1", channel_type="im"))
    [update] = await fake.wait_for("chat.update")
    await slack.settle()
    assert answers.calls[0]["thread_id"] == slack_thread_id(TEAM, "D1", None) == "slack:T1:D1:dm"
    [placeholder] = fake.calls_to("chat.postMessage")
    assert placeholder["channel"] == "D1" and "thread_ts" not in placeholder
    assert update["channel"] == "D1"


@pytest.mark.parametrize("event", [
    message("bot's own words", ts="100.000003", thread_ts="100.000001", user="UBOT"),
    message("another bot", ts="100.000003", thread_ts="100.000001", bot_id="BOTHER"),
    message("legacy bot", ts="100.000003", thread_ts="100.000001", user=None, subtype="bot_message"),
    message("edited", ts="100.000003", thread_ts="100.000001", subtype="message_changed"),
    message("dm from myself", ts="100.000003", channel="D1", channel_type="im", user="UBOT"),
])
async def test_bot_and_edited_messages_are_ignored(
    slack: Harness, fake: FakeSlack, answers: Answers, storage: InMemoryStorage, event: dict[str, Any]
) -> None:
    # The thread was answered before, so a human reply here would be a follow-up.
    await storage.add_turn(ConversationTurn(thread_id="slack:T1:C1:100.000001", role=TurnRole.ASSISTANT,
                                            content="earlier answer"))
    resp = await slack.event(event)
    assert resp.status == 200
    await slack.settle()
    assert answers.calls == []
    assert set(fake.methods()) <= {"auth.test"}


async def test_retried_event_is_answered_once_even_after_a_restart(
    fake: FakeSlack, storage: InMemoryStorage, answers: Answers
) -> None:
    services = services_for(fake, storage, answers)
    async with Harness(fake, services) as slack:
        await slack.event(mention(), event_id="EvSame")
        await slack.event(mention(), event_id="EvSame", headers={"X-Slack-Retry-Num": "1",
                                                                 "X-Slack-Retry-Reason": "http_timeout"})
        await fake.wait_for("chat.update")
        await slack.settle()
    async with Harness(fake, services) as restarted:
        await restarted.event(mention(), event_id="EvSame", headers={"X-Slack-Retry-Num": "2"})
        await restarted.settle()
    assert len(answers.calls) == 1
    assert len(fake.calls_to("chat.update")) == 1 and len(fake.calls_to("chat.postMessage")) == 1


async def test_retry_after_restart_with_sqlite_store(fake: FakeSlack, tmp_path: Any) -> None:
    sqlite = pytest.importorskip("storage.sqlite")
    path = tmp_path / "ragbot.sqlite3"
    settings = make_settings(fake)
    for attempt in range(2):
        db = await sqlite.SqliteStore.open(path)
        try:
            answers = Answers(db)
            services = Services(settings=settings, answers=answers, conversations=db, queries=db,
                                activity=db, feedback=db, events=db,
                                rate_limiter=fake_services(settings).rate_limiter,
                                exports=StorageExports(log=db, feedback=db))
            async with Harness(fake, services) as slack:
                await slack.event(mention(), event_id="EvSqlite")
                if attempt == 0:
                    await fake.wait_for("chat.update")
                await slack.settle()
            assert len(answers.calls) == (1 if attempt == 0 else 0)
            sent = [e async for e in db.export(event_type=EventType.RESPONSE_SENT)]
            assert len(sent) == 1
        finally:
            await db.close()
    assert len(fake.calls_to("chat.update")) == 1


@pytest.mark.parametrize("kind", ["forged", "stale", "missing"])
async def test_bad_signature_is_refused_and_nothing_posted(
    slack: Harness, fake: FakeSlack, answers: Answers, kind: str
) -> None:
    if kind == "forged":
        resp = await slack.event(mention(), signature="v0=" + "0" * 64)
    elif kind == "stale":
        resp = await slack.event(mention(), timestamp=int(time.time()) - 600)
    else:
        resp = await slack.client.post("/slack/events", json={"type": "event_callback", "event": mention()})
    assert resp.status == 401
    await slack.settle()
    assert fake.calls == [] and answers.calls == []


async def test_knowledge_base_markup_is_escaped(slack: Harness, fake: FakeSlack, answers: Answers) -> None:
    answers.text = "Ping <!channel> and <@U123> or <!here|here> & <https://evil.example|click> [1]."
    await slack.event(mention())
    [update] = await fake.wait_for("chat.update")
    text = all_text(update["blocks"]) + update["text"]
    for dangerous in ("<!channel>", "<@U123>", "<!here", "<https://evil"):
        assert dangerous not in text
    assert "&lt;!channel&gt; and &lt;@U123&gt;" in text and " &amp; " in text
    assert "<https://ragbot.dev/docs/install|[1]>" in text


# --------------------------------------------------------------------------- failures


async def test_answer_service_raising_gives_reason_and_reference(
    slack: Harness, fake: FakeSlack, answers: Answers, storage: InMemoryStorage
) -> None:
    answers.error = RuntimeError("qdrant exploded")
    await slack.event(mention())
    [update] = await fake.wait_for("chat.update")
    await slack.drain()
    [error] = [e for e in storage.entries if e.event_type is EventType.ERROR]
    assert error.error_details and "RuntimeError: qdrant exploded" in error.error_details
    assert error.thread_id == "slack:T1:C1:100.000001" and error.query_text == "how do I install ragbot?"
    assert "something went wrong" in update["text"] and f"`{error.entry_id}`" in update["text"]
    assert "qdrant" not in update["text"]  # internals stay in the log
    assert "reactions.remove" in fake.methods()


async def test_retrieval_failed_shows_the_pipelines_reference(
    slack: Harness, fake: FakeSlack, answers: Answers, storage: InMemoryStorage
) -> None:
    answers.status = ResponseStatus.RETRIEVAL_FAILED
    answers.text = "Retrieval failed."
    entry = AgentLogEntry(event_type=EventType.ERROR, error_details="store locked")
    await storage.log(entry)
    answers.reference_id = entry.entry_id
    await slack.event(mention())
    [update] = await fake.wait_for("chat.update")
    await slack.drain()
    assert "Retrieval failed." in update["text"] and f"`{entry.entry_id}`" in update["text"]
    assert not [b for b in update["blocks"] if b["type"] == "actions"]  # nothing to rate
    assert [e.entry_id for e in storage.entries if e.event_type is EventType.ERROR] == [entry.entry_id]
    assert any(e.event_type is EventType.RESPONSE_SENT for e in storage.entries)


async def test_retrieval_failed_without_reference_gets_our_own(
    slack: Harness, fake: FakeSlack, answers: Answers, storage: InMemoryStorage
) -> None:
    answers.status = ResponseStatus.RETRIEVAL_FAILED
    answers.text = "Retrieval failed."
    await slack.event(mention())
    [update] = await fake.wait_for("chat.update")
    await slack.drain()
    [error] = [e for e in storage.entries if e.event_type is EventType.ERROR]
    assert f"`{error.entry_id}`" in update["text"] and error.query_id == answers.responses[0].query_id


async def test_invalid_question_gets_a_polite_reply_naming_the_problem(
    slack: Harness, fake: FakeSlack, answers: Answers
) -> None:
    answers.error = QueryValidationError("query_text is 1500 characters long; the limit is 1000")
    await slack.event(mention())
    [update] = await fake.wait_for("chat.update")
    assert "1500 characters long; the limit is 1000" in update["text"]
    assert "rephrase" in update["text"]


async def test_rate_limited_user_is_told_when_to_retry(
    fake: FakeSlack, storage: InMemoryStorage, answers: Answers
) -> None:
    async with Harness(fake, services_for(fake, storage, answers, rate_limit_per_minute=1)) as slack:
        await slack.event(mention())
        await fake.wait_for("chat.update")
        await slack.event(mention("<@UBOT> again?", ts="100.000002"))
        replies = await fake.wait_for("chat.postMessage", 2)
        await slack.settle()
    assert len(answers.calls) == 1
    assert "try again in" in replies[1]["text"] and replies[1]["thread_ts"] == "100.000002"
    assert len(fake.calls_to("chat.update")) == 1


async def test_failed_update_falls_back_to_a_new_post(
    slack: Harness, fake: FakeSlack, storage: InMemoryStorage
) -> None:
    fake.fail["chat.update"] = "cant_update_message"
    await slack.event(mention())
    posts = await fake.wait_for("chat.postMessage", 2)
    await slack.drain()
    assert posts[1]["blocks"][0]["type"] == "section" and posts[1]["thread_ts"] == "100.000001"
    assert any(e.event_type is EventType.RESPONSE_SENT for e in storage.entries)


# --------------------------------------------------------------------------- feedback


async def test_feedback_click_is_stored_and_can_be_changed(
    slack: Harness, fake: FakeSlack, storage: InMemoryStorage
) -> None:
    resp = await slack.click("ragbot_feedback_up", "resp-1")
    assert resp.status == 200
    [thanks] = await fake.wait_for("chat.postEphemeral")
    await slack.drain()
    assert [(v.response_id, v.user_id, v.vote, v.platform) for v in storage.votes.values()] == [
        ("resp-1", "U1", 1, "slack")]
    assert thanks["user"] == "U1" and thanks["thread_ts"] == "100.000001" and "Thanks" in thanks["text"]

    await slack.click("ragbot_feedback_down", "resp-1")
    await fake.wait_for("chat.postEphemeral", 2)
    await slack.drain()
    assert [v.vote for v in storage.votes.values()] == [-1]
    logged = [e for e in storage.entries if e.event_type is EventType.FEEDBACK_RECEIVED]
    assert len(logged) == 2 and {e.thread_id for e in logged} == {"slack:T1:C1:100.000001"}
    assert logged[1].response_summary and "-1" in logged[1].response_summary


# --------------------------------------------------------------------------- admin export


async def test_admin_export_uploads_the_log_and_feedback(
    fake: FakeSlack, storage: InMemoryStorage, answers: Answers
) -> None:
    async with Harness(fake, services_for(fake, storage, answers, slack_admin_user_ids="UADMIN")) as slack:
        await slack.event(mention())
        await fake.wait_for("chat.update")
        await slack.drain()
        await slack.click("ragbot_feedback_up", answers.responses[0].response_id)
        await fake.wait_for("chat.postEphemeral")
        await slack.drain()
        before = list(storage.entries)

        resp = await slack.command("csv 7d", user="UADMIN")
        assert resp.status == 200 and "direct message" in (await resp.text())
        [complete] = await fake.wait_for("files.completeUploadExternal")
        await slack.drain()

    assert fake.calls_to("conversations.open")[0]["users"] == "UADMIN"
    assert complete["channel_id"] == "DUADMIN" and len(complete["files"]) == 2
    log_id, votes_id = (f["id"] for f in complete["files"])
    assert re.fullmatch(r"ragbot-log-\d{8}-\d{6}\.csv", fake.filenames[log_id])
    assert re.fullmatch(r"ragbot-feedback-\d{8}-\d{6}\.csv", fake.filenames[votes_id])
    rows = list(csv.DictReader(io.StringIO(fake.uploads[log_id].decode())))
    assert [r["entry_id"] for r in rows] == [e.entry_id for e in before]
    assert list(rows[0]) == LOG_COLUMNS
    assert [r["event_type"] for r in rows] == [e.event_type.value for e in before]
    votes = list(csv.DictReader(io.StringIO(fake.uploads[votes_id].decode())))
    assert [(v["response_id"], v["vote"]) for v in votes] == [(answers.responses[0].response_id, "1")]
    [done] = [e for e in storage.entries if e.event_type is EventType.ADMIN_EXPORT]
    assert done.error_details is None and done.response_summary
    assert f"exported {len(before)} log entries and 1 votes as csv" in done.response_summary


async def test_admin_export_jsonl_since_a_date(
    fake: FakeSlack, storage: InMemoryStorage, answers: Answers
) -> None:
    old = AgentLogEntry(event_type=EventType.ERROR, error_details="old",
                        timestamp=datetime(2020, 1, 1, tzinfo=UTC))
    new = AgentLogEntry(event_type=EventType.ERROR, error_details="new")
    storage.entries.extend([old, new])
    async with Harness(fake, services_for(fake, storage, answers, slack_admin_user_ids="UX,UADMIN")) as slack:
        await slack.command("2024-06-01", user="UADMIN")
        [complete] = await fake.wait_for("files.completeUploadExternal")
        await slack.drain()
    lines = fake.uploads[complete["files"][0]["id"]].decode().splitlines()
    assert [json.loads(line)["entry_id"] for line in lines] == [new.entry_id]


async def test_failed_export_tells_the_admin_the_reference(
    fake: FakeSlack, storage: InMemoryStorage, answers: Answers
) -> None:
    fake.fail["files.completeUploadExternal"] = "not_allowed_token_type"
    async with Harness(fake, services_for(fake, storage, answers, slack_admin_user_ids="UADMIN")) as slack:
        await slack.command("", user="UADMIN")
        [note] = await fake.wait_for("chat.postEphemeral")
        await slack.drain()
    [error] = [e for e in storage.entries if e.event_type is EventType.ERROR]
    assert error.error_details and "not_allowed_token_type" in error.error_details
    assert note["user"] == "UADMIN" and f"`{error.entry_id}`" in note["text"]
    assert not [e for e in storage.entries if e.event_type is EventType.ADMIN_EXPORT]


async def test_export_by_non_admin_is_refused_and_logged(
    fake: FakeSlack, storage: InMemoryStorage, answers: Answers
) -> None:
    async with Harness(fake, services_for(fake, storage, answers, slack_admin_user_ids="UADMIN")) as slack:
        resp = await slack.command("csv", user="UMALLORY")
        assert resp.status == 200 and "only ragbot admins" in (await resp.text())
        await slack.settle()
    assert "conversations.open" not in fake.methods() and fake.uploads == {}
    [refused] = [e for e in storage.entries if e.event_type is EventType.ADMIN_EXPORT]
    assert refused.error_details and refused.error_details.startswith("refused")
    assert "UMALLORY" in refused.error_details


async def test_export_with_bad_argument_names_it(
    fake: FakeSlack, storage: InMemoryStorage, answers: Answers
) -> None:
    async with Harness(fake, services_for(fake, storage, answers, slack_admin_user_ids="UADMIN")) as slack:
        resp = await slack.command("xml", user="UADMIN")
        assert "'xml'" in (await resp.text())
        await slack.settle()
    assert fake.uploads == {}


async def test_export_with_a_huge_age_gets_usage_not_a_timeout(
    fake: FakeSlack, storage: InMemoryStorage, answers: Answers
) -> None:
    async with Harness(fake, services_for(fake, storage, answers, slack_admin_user_ids="UADMIN")) as slack:
        started = time.monotonic()
        resp = await slack.command("csv 99999999999d", user="UADMIN")
        reply = await resp.text()
        await slack.settle()
    assert resp.status == 200 and time.monotonic() - started < 3
    assert "Usage:" in reply and "'99999999999d'" in reply
    assert fake.uploads == {} and "conversations.open" not in fake.methods()


async def test_export_acks_with_usage_whatever_the_parser_raises(
    fake: FakeSlack, storage: InMemoryStorage, answers: Answers, monkeypatch: pytest.MonkeyPatch
) -> None:
    # parse_when once let OverflowError escape; an un-acked command shows the admin a timeout.
    def overflowing(text: str) -> datetime:
        raise OverflowError("date value out of range")

    services = services_for(fake, storage, answers, slack_admin_user_ids="UADMIN")
    monkeypatch.setattr(services.exports, "parse_when", overflowing)
    async with Harness(fake, services) as slack:
        resp = await slack.command("csv 99999999999d", user="UADMIN")
        reply = await resp.text()
        await slack.settle()
    assert resp.status == 200 and "Usage:" in reply and "out of range" in reply
    assert fake.uploads == {}


def test_parse_export_args() -> None:
    now = datetime(2025, 3, 10, 12, tzinfo=UTC)

    def parse(text: str) -> tuple[str, datetime | None]:
        request = parse_export_args(text, lambda token: parse_when(token, now=now))
        return request.fmt, request.since

    assert parse("") == ("jsonl", None)
    assert parse("CSV 7d") == ("csv", now - timedelta(days=7))
    assert parse("12h jsonl") == ("jsonl", now - timedelta(hours=12))
    assert parse("csv 2W") == ("csv", now - timedelta(weeks=2))
    assert parse("2025-01-31") == ("jsonl", datetime(2025, 1, 31, tzinfo=UTC))
    assert parse("2025-01-31T08:00:00+02:00")[1] == datetime(2025, 1, 31, 6, tzinfo=UTC)
    for bad, problem in (("xml", "is not a format"), ("7x", "is not a format"), ("csv csv", "repeats"),
                         ("7d 2025-01-01", "second start"), ("99999999999d", "is not a format")):
        with pytest.raises(ExportUsageError, match=problem):
            parse(bad)


# --------------------------------------------------------------------------- HTTP app and config


async def test_healthz_and_url_verification(slack: Harness) -> None:
    resp = await slack.client.get("/healthz")
    assert resp.status == 200 and (await resp.json()) == {"ok": True}
    resp = await slack.post(json.dumps({"type": "url_verification", "challenge": "abc"}),
                            content_type="application/json")
    assert resp.status == 200 and "abc" in await resp.text()


async def test_run_slack_serves_http_mode_until_cancelled(
    fake: FakeSlack, storage: InMemoryStorage, answers: Answers
) -> None:
    with socket.socket() as probe:  # a free port; run_slack takes it from PORT like in production
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    services = services_for(fake, storage, answers, port=port)
    task = asyncio.create_task(run_slack(services, host="127.0.0.1"))
    try:
        async with aiohttp.ClientSession() as session:
            async with asyncio.timeout(5):
                while True:
                    with contextlib.suppress(aiohttp.ClientConnectionError):
                        async with session.get(f"http://127.0.0.1:{port}/healthz") as resp:
                            if resp.status == 200:
                                break
                    await asyncio.sleep(0.02)
            body = event_body(mention(), event_id="EvRun")
            async with session.post(f"http://127.0.0.1:{port}/slack/events", data=body,
                                    headers=signed_headers(body)) as resp:
                assert resp.status == 200
            await fake.wait_for("chat.update")
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    assert any(e.event_type is EventType.RESPONSE_SENT for e in storage.entries)


def test_missing_credentials_are_named(fake: FakeSlack) -> None:
    with pytest.raises(ConfigurationError, match="SLACK_BOT_TOKEN"):
        build_slack_app(services=fake_services(Settings(_env_file=None)))  # type: ignore[call-arg]
    with pytest.raises(ConfigurationError, match="SLACK_SIGNING_SECRET"):
        build_slack_app(services=fake_services(make_settings(fake, slack_signing_secret=None)))
    # Socket Mode needs no signing secret.
    build_slack_app(services=fake_services(make_settings(fake, slack_signing_secret=None,
                                                         slack_app_token="xapp-test")))


# --------------------------------------------------------------------------- formatting


def _response(text: str, *, status: ResponseStatus = ResponseStatus.ANSWERED, confidence: float = 0.9,
              sources: int = 1, title: str = "Install") -> AgentResponse:
    chunks = [RetrievedChunk(chunk_id=f"c{i}", content="x", score=0.9, url=f"https://docs.test/p{i}?a=1&b=2",
                             title=title, section=f"S{i}", chunk_index=0, source_document=f"p{i}.md")
              for i in range(1, sources + 1)]
    return AgentResponse(
        query_id="q1", response_text=text, status=status, retrieved_chunks=chunks,
        sources=[Source(index=i, chunk_id=c.chunk_id, url=c.url, title=c.title, section=c.section,
                        chunk_index=0, score=0.9) for i, c in enumerate(chunks, 1)],
        confidence_score=confidence,
    )


def test_escape_and_question_from_text() -> None:
    assert fmt.escape("<!channel> & <@U1>") == "&lt;!channel&gt; &amp; &lt;@U1&gt;"
    assert fmt.question_from_text("<@UBOT|ragbot>  how do\n I use <https://x.test/a|this> &amp; "
                                  "<#C1|general> with <@U2>?", bot_user_id="UBOT") == (
        "how do\nI use this & #general with <@U2>?")
    assert fmt.question_from_text("<@UBOT>", bot_user_id="UBOT") == ""
    assert fmt.question_from_text("a &lt;b&gt; <https://x.test>", bot_user_id=None) == "a <b> https://x.test"


def test_citations_link_sources_and_leave_unknown_numbers() -> None:
    response = _response("A [1], B [1, 2] and C [7].", sources=2)
    text = fmt.link_citations(fmt.escape(response.response_text), response.sources)
    assert text == ("A <https://docs.test/p1?a=1&amp;b=2|[1]>, B <https://docs.test/p1?a=1&amp;b=2|[1]>"
                    "<https://docs.test/p2?a=1&amp;b=2|[2]> and C [7].")


def test_citations_link_every_marker_form_core_understands() -> None:
    response = _response("R [1-2], S [1; 2], T [1][2], U [2-4] and V [5; 6].", sources=2)
    text = fmt.link_citations(fmt.escape(response.response_text), response.sources)
    one, two = "<https://docs.test/p1?a=1&amp;b=2|[1]>", "<https://docs.test/p2?a=1&amp;b=2|[2]>"
    assert text == f"R {one}{two}, S {one}{two}, T {one}{two}, U {two}[3][4] and V [5; 6]."


def test_citations_in_code_are_left_alone() -> None:
    response = _response("See [1].\n\n```python\nitems = [1, 2]\n```\n\nand `x[2]`.", sources=2)
    text = fmt.link_citations(fmt.escape(response.response_text), response.sources)
    assert text.endswith("```python\nitems = [1, 2]\n```\n\nand `x[2]`.")
    assert text.startswith("See <https://docs.test/p1?a=1&amp;b=2|[1]>.")


def test_source_titles_from_the_knowledge_base_are_escaped() -> None:
    message = fmt.answer_message(_response("See [1].", title="<!everyone> <@U9> guide"))
    text = all_text(message["blocks"])
    assert "<!everyone>" not in text and "<@U9>" not in text
    assert "|&lt;!everyone&gt; &lt;@U9&gt; guide>" in text


def test_long_answers_are_split_within_slack_limits() -> None:
    sentence = "Install ragbot with pip and read <the> guide [1]. "
    response = _response(sentence * 1000)  # 50,000 characters
    message = fmt.answer_message(response)
    blocks = message["blocks"]
    assert len(blocks) <= fmt.MAX_BLOCKS
    sections = [b["text"]["text"] for b in blocks if b["type"] == "section"]
    assert all(0 < len(s) <= fmt.SECTION_TEXT_LIMIT for s in sections)
    for piece in sections:  # never cut inside a link or an entity
        assert piece.count("<") == piece.count(">")
        assert not any(piece.endswith(e[:k]) for e in ("&lt;", "&gt;", "&amp;") for k in range(1, 4))
    assert len(message["text"]) <= fmt.FALLBACK_TEXT_LIMIT
    assert blocks[-1]["type"] == "actions"

    huge = _response("word " * 10_000)
    assert len(fmt.answer_message(huge)["blocks"]) <= fmt.MAX_BLOCKS
    pieces = fmt.split_text("x" * 7000)
    assert [len(p) for p in pieces] == [3000, 3000, 1000]


def test_many_sources_fit_one_text_object() -> None:
    response = _response("See [1].", sources=20, title="T" * 400)
    text = fmt.sources_text(response.sources)
    assert len(text) <= fmt.SECTION_TEXT_LIMIT and text.endswith("more")


@pytest.mark.parametrize(("status", "confidence", "expected"), [
    (ResponseStatus.ANSWERED, 0.9, None),
    (ResponseStatus.ANSWERED, 0.2, ":warning: Low confidence"),
    # The core's own text says these; a notice would say it twice.
    (ResponseStatus.NO_RELEVANT_DOCUMENTS, 0.0, None),
    (ResponseStatus.VALIDATION_FAILED, 0.8, None),
])
def test_notices(status: ResponseStatus, confidence: float, expected: str | None) -> None:
    response = _response("Some answer [1].", status=status, confidence=confidence,
                         sources=1 if status is ResponseStatus.ANSWERED else 0)
    message = fmt.answer_message(response)
    first = message["blocks"][0]
    if expected is None:
        assert first["type"] == "section"
    else:
        assert first["type"] == "context" and expected in first["elements"][0]["text"]
        assert expected in message["text"]
    assert all_text(message["blocks"]).count("Some answer") == 1
    assert message["blocks"][-1]["elements"][0]["value"] == response.response_id


async def test_closed_vector_store_gives_a_reason_and_the_logged_reference(fake: FakeSlack) -> None:
    """The real pipeline over a closed store, through the Slack app."""
    from tests.core.answer.test_pipeline import build

    pipeline, storage, store = await build()
    await store.close()
    async with Harness(fake, fake_services(make_settings(fake), answers=pipeline, storage=storage)) as slack:
        await slack.event(mention())
        [update] = await fake.wait_for("chat.update")
        await slack.drain()
    [error] = [e for e in storage.entries if e.event_type is EventType.ERROR]
    assert "closed" in (error.error_details or "")
    assert "couldn't search the docs" in update["text"] and update["text"].count(error.entry_id) == 1
