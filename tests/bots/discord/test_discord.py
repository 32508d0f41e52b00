"""The Discord adapter: formatting, /ask, feedback, /export-logs, against a fake Discord on 127.0.0.1."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import re
from datetime import datetime
from typing import Any

import discord
import pytest

from bots.chat.notices import LOW_CONFIDENCE
from bots.chat.services import Services, fake_services
from bots.discord import format as fmt
from bots.discord.client import run_discord, sync_commands
from bots.discord.feedback import feedback_view
from core.errors import QueryValidationError
from core.fakes import InMemoryStorage
from core.models import (
    AgentResponse,
    EventType,
    GroundingValidation,
    ResponseStatus,
    RetrievedChunk,
    Source,
)
from tests.bots.drivers import (
    NONE_MENTIONS,
    connected,
    eventually,
    every_send_silenced,
    logged_in,
    run,
    services_over,
)
from tests.bots.drivers import Answers as RecordingAnswers
from tests.bots.drivers import discord_settings as settings
from tests.support.fake_discord import (
    ADMIN_ROLE_ID,
    APP_ID,
    CHANNEL_ID,
    GUILD_ID,
    USER_ID,
    FakeDiscord,
    thread_payload,
)


def services_with(
    answers: RecordingAnswers | None = None, storage: InMemoryStorage | None = None, **overrides: Any
) -> tuple[Services, RecordingAnswers, InMemoryStorage]:
    answers = answers or RecordingAnswers()
    storage = storage or InMemoryStorage()
    return services_over(settings(**overrides), storage, answers), answers, storage


@pytest.fixture
def fake(discord_fake: FakeDiscord) -> FakeDiscord:
    return discord_fake


def response(status: ResponseStatus = ResponseStatus.ANSWERED, *, text: str = "Answer [1].",
             sources: int = 1, **extra: Any) -> AgentResponse:
    chunks = [RetrievedChunk(chunk_id=f"c{i}", content="x", score=0.5, url=f"https://docs.example/p{i}",
                             title=f"Page {i}", section=f"Page {i} > Part", chunk_index=0,
                             source_document=f"p{i}.md") for i in range(1, sources + 1)]
    return AgentResponse(
        query_id="q1", query_text="q", response_text=text, status=status, retrieved_chunks=chunks,
        sources=[Source(index=i, chunk_id=c.chunk_id, url=c.url, title=c.title, section=c.section,
                        chunk_index=0, score=0.5) for i, c in enumerate(chunks, start=1)],
        **extra,
    )


# --------------------------------------------------------------------------- formatting (pure)


def test_embed_has_title_sources_and_green_colour() -> None:
    [embed] = fmt.answer_embeds(response(confidence_score=0.8), question="How do I install?")
    assert embed.title == "How do I install?"
    assert embed.description == "Answer [1]."
    assert embed.colour == fmt.GREEN
    assert embed.fields[0].name == "Sources"
    assert embed.fields[0].value == "[1] [Page 1 — Part](https://docs.example/p1)"  # the title once
    assert embed.author.name is None


@pytest.mark.parametrize(("status", "colour"), [
    (ResponseStatus.NO_RELEVANT_DOCUMENTS, fmt.GREY),
    (ResponseStatus.VALIDATION_FAILED, fmt.AMBER),
    (ResponseStatus.RETRIEVAL_FAILED, fmt.RED),
])
def test_status_colour_and_no_second_label(status: ResponseStatus, colour: discord.Colour) -> None:
    # The core's text says what happened; a label above it would say it twice.
    [embed] = fmt.answer_embeds(response(status, sources=0), question="q")
    assert embed.colour == colour
    assert embed.author.name is None and embed.description == "Answer [1]."


def test_low_confidence_answer_is_amber_with_the_shared_notice() -> None:
    [embed] = fmt.answer_embeds(response(confidence_score=0.1), question="q")
    assert embed.colour == fmt.AMBER and embed.author.name == LOW_CONFIDENCE.text


def test_failed_grounding_is_amber() -> None:
    r = response(grounding_validation=GroundingValidation(method="overlap", passed=False))
    assert fmt.status_colour(r) == fmt.AMBER


def test_sources_the_answer_does_not_cite_are_related_pages() -> None:
    [embed] = fmt.answer_embeds(response(text="Answer [1].", sources=3), question="q?")
    assert [(f.name, f.value) for f in embed.fields] == [
        ("Sources", "[1] [Page 1 — Part](https://docs.example/p1)"),
        ("Related", "[Page 2 — Part](https://docs.example/p2)\n[Page 3 — Part](https://docs.example/p3)")]


def test_long_answer_and_many_sources_stay_within_discord_limits() -> None:
    long_text = " ".join(f"Sentence number {i} explains a detail [{i % 80 + 1}]." for i in range(1000))
    r = response(text=long_text, sources=80)
    embeds = fmt.answer_embeds(r, question="why? " * 200)
    assert len(embeds) > 1
    assert len(embeds[0].title or "") <= fmt.TITLE_LIMIT
    for embed in embeds:
        assert len(embed) <= fmt.EMBED_TOTAL_LIMIT
        assert len(embed.description or "") <= fmt.DESCRIPTION_LIMIT
        assert len(embed.fields) <= fmt.FIELDS_LIMIT
        assert all(len(f.value or "") <= fmt.FIELD_VALUE_LIMIT for f in embed.fields)
    rebuilt = " ".join(e.description or "" for e in embeds)
    assert rebuilt.split() == long_text.split()
    assert embeds[0].fields[-1].value.endswith("more")  # type: ignore[union-attr]
    assert embeds[1].footer.text.startswith("part 2/")  # type: ignore[union-attr]


def test_mentions_are_defused_everywhere() -> None:
    r = response(text="Ping @everyone and @here and <@&123456789012345678> and <@42> [1].")
    [embed] = fmt.answer_embeds(r, question="hey @everyone")
    assert "@everyone" not in (embed.description or "") and "@everyone" not in (embed.title or "")
    assert "@\u200beveryone" in (embed.description or "")
    assert "<@&" not in (embed.description or "") and "<@42>" not in (embed.description or "")


def test_defuse_uses_the_core_neutralizer_and_catches_glued_mass_mentions() -> None:
    assert fmt.defuse("<@&123456789012345678> <@42> <@!42> @channel") == (
        "@\u200brole @\u200buser @\u200buser @\u200bchannel")
    # The core leaves "x@here" alone; discord.py's escape_mentions breaks it too.
    assert fmt.defuse("x@here and @everyone") == "x@\u200bhere and @\u200beveryone"
    assert fmt.defuse("**bold** <#123> <t:1700000000>") == "**bold** <#123> <t:1700000000>"


def test_source_line_escapes_brackets_and_skips_non_http_links() -> None:
    s = Source(index=2, chunk_id="c", url="https://x.dev/a b)c", title="A [b] *c*", section="",
               chunk_index=0, score=0.1)
    assert fmt.source_line(s) == r"[2] [A \[b\] \*c\*](https://x.dev/a%20b%29c)"
    local = s.model_copy(update={"url": "file:///docs/a.md"})
    assert fmt.source_line(local) == r"[2] A \[b\] \*c\*"


def test_thread_name_fits_discord() -> None:
    assert fmt.thread_name("q " * 200).endswith("…") and len(fmt.thread_name("q " * 200)) <= 100
    assert fmt.thread_name("   ") == "ragbot answer"


async def test_feedback_view_has_persistent_custom_ids() -> None:
    view = feedback_view("ab12")
    assert view is not None and view.timeout is None and view.is_persistent()
    ids = [c["components"][0]["custom_id"] for c in [view.to_components()[0]]] + [
        view.to_components()[0]["components"][1]["custom_id"]]
    assert ids == ["ragbot:fb:up:ab12", "ragbot:fb:down:ab12"]
    assert feedback_view("not-hex!") is None


# --------------------------------------------------------------------------- commands sync


async def test_sync_commands_to_each_guild_with_admin_default(fake: FakeDiscord) -> None:
    await sync_commands(settings(discord_guild_ids=[str(GUILD_ID)]))
    [path] = fake.commands
    assert path == f"/applications/{APP_ID}/guilds/{GUILD_ID}/commands"
    commands = {c["name"]: c for c in fake.commands[path]}
    assert set(commands) == {"ask", "export-logs"}
    assert str(commands["export-logs"]["default_member_permissions"]) == "8"
    options = {o["name"]: o for o in commands["ask"]["options"]}
    assert options["question"]["required"] and not options["private"]["required"]
    assert [c["value"] for c in commands["export-logs"]["options"][0]["choices"]] == ["jsonl", "csv"]


async def test_sync_commands_without_guilds_is_global(fake: FakeDiscord) -> None:
    await sync_commands(settings())
    assert list(fake.commands) == [f"/applications/{APP_ID}/commands"]
    assert not fake.calls_to("GET", "/gateway")  # sync never opens the gateway


async def test_starting_the_bot_does_not_sync_commands(fake: FakeDiscord) -> None:
    # discord.py advises syncing only when the commands change: `ragbot discord sync` does it.
    services, _, _ = services_with(discord_guild_ids=[str(GUILD_ID)])
    async with connected(services):
        pass
    assert fake.identified.is_set() and fake.commands == {}
    assert not [c for c in fake.calls if c.path.endswith("/commands")]


# --------------------------------------------------------------------------- /ask, unit level


async def test_ask_in_channel_starts_thread_and_answers_in_it(fake: FakeDiscord) -> None:
    services, answers, storage = services_with()
    async with logged_in(services) as client:
        payload = fake.slash_payload("ask", {"question": "How do I install?"})
        await run(client, payload)
    assert fake.callbacks[int(payload["id"])] == {"type": 5}
    [message] = fake.messages_for(payload)
    mid = int(message["id"])
    assert mid in fake.threads and fake.threads[mid]["name"] == "How do I install?"
    assert answers.calls[0]["thread_id"] == f"discord:{GUILD_ID}:{mid}"
    [edit] = message["edits"]
    assert edit["content"] is None
    [embed] = edit["embeds"]
    assert embed["title"] == "How do I install?"
    line = "[1] [Install — Quick start](https://ragbot.dev/docs/install)"
    assert line in embed["fields"][0]["value"]
    buttons = edit["components"][0]["components"]
    rid = answers.responses[0].response_id
    assert [b["custom_id"] for b in buttons] == [f"ragbot:fb:up:{rid}", f"ragbot:fb:down:{rid}"]
    every_send_silenced(fake)
    sent = [e for e in storage.entries if e.event_type is EventType.RESPONSE_SENT]
    assert len(sent) == 1 and sent[0].thread_id == f"discord:{GUILD_ID}:{mid}"
    assert sent[0].execution_time is not None
    assert (sent[0].response_summary or "").startswith("discord: answered")


async def test_ask_in_thread_continues_that_thread(fake: FakeDiscord) -> None:
    services, answers, _ = services_with()
    async with logged_in(services) as client:
        first = fake.slash_payload("ask", {"question": "How do I install?"})
        await run(client, first)
        [message] = fake.messages_for(first)
        thread = thread_payload(int(message["id"]))
        follow = fake.slash_payload("ask", {"question": "And on Windows?"}, channel=thread)
        await run(client, follow)
    expected = f"discord:{GUILD_ID}:{message['id']}"
    assert answers.calls[1]["thread_id"] == answers.calls[0]["thread_id"] == expected
    [answer] = fake.messages_for(follow)
    assert answer["channel_id"] == message["id"]  # posted in the thread itself
    assert answer["embeds"][0]["title"] == "And on Windows?"
    assert len(fake.threads) == 1  # no thread inside a thread


async def test_redelivered_interaction_is_answered_once(fake: FakeDiscord) -> None:
    services, answers, _ = services_with()
    async with logged_in(services) as client:
        payload = fake.slash_payload("ask", {"question": "How do I install?", "private": True})
        await run(client, payload)
        await run(client, payload)
    assert len(answers.calls) == 1 and len(fake.messages_for(payload)) == 1


async def test_ask_in_dm_uses_the_dm_as_conversation(fake: FakeDiscord) -> None:
    services, answers, _ = services_with()
    payload = fake.slash_payload("ask", {"question": "Hi?"})
    dm_id = fake.new_id()
    payload.pop("guild_id")
    payload["user"] = payload.pop("member")["user"]
    payload["channel"] = {"id": str(dm_id), "type": 1, "recipients": [payload["user"]]}
    payload["channel_id"] = str(dm_id)
    async with logged_in(services) as client:
        await run(client, payload)
    assert answers.calls[0]["thread_id"] == f"discord:dm:{dm_id}"
    assert not fake.threads and fake.messages_for(payload)[0]["embeds"][0]["title"] == "Hi?"


@pytest.mark.parametrize(("question", "needle"), [("   ", "Please type a question"),
                                                  ("x" * 1001, "1001 characters long; the limit is 1000")])
async def test_empty_or_long_question_gets_polite_ephemeral_reply(
    fake: FakeDiscord, question: str, needle: str
) -> None:
    services, answers, _ = services_with()
    async with logged_in(services) as client:
        payload = fake.slash_payload("ask", {"question": question})
        await run(client, payload)
    callback = fake.callbacks[int(payload["id"])]
    assert callback["type"] == 4 and callback["data"]["flags"] & 64
    assert needle in callback["data"]["content"]
    assert callback["data"]["allowed_mentions"] == NONE_MENTIONS
    assert answers.calls == []


async def test_service_validation_error_is_polite(fake: FakeDiscord) -> None:
    services, answers, _ = services_with()
    answers.error = QueryValidationError("query_text mentions a forbidden field")
    async with logged_in(services) as client:
        payload = fake.slash_payload("ask", {"question": "ok?", "private": True})
        await run(client, payload)
    [message] = fake.messages_for(payload)
    assert message["content"].startswith("I can't take that question as it is: query_text mentions")
    assert message["flags"] & 64


async def test_rate_limited_user_gets_polite_ephemeral_reply(fake: FakeDiscord) -> None:
    services, answers, _ = services_with(rate_limit_per_minute=1)
    async with logged_in(services) as client:
        await run(client, fake.slash_payload("ask", {"question": "one?", "private": True}))
        payload = fake.slash_payload("ask", {"question": "two?", "private": True})
        await run(client, payload)
    callback = fake.callbacks[int(payload["id"])]
    assert callback["type"] == 4 and callback["data"]["flags"] & 64
    assert "Please try again in" in callback["data"]["content"]
    assert len(answers.calls) == 1


async def test_private_ask_is_ephemeral_without_thread(fake: FakeDiscord) -> None:
    services, answers, _ = services_with()
    async with logged_in(services) as client:
        payload = fake.slash_payload("ask", {"question": "secret?", "private": True})
        await run(client, payload)
    assert fake.callbacks[int(payload["id"])] == {"type": 5, "data": {"flags": 64}}
    [message] = fake.messages_for(payload)
    assert message["flags"] & 64 and message["embeds"][0]["title"] == "secret?"
    assert not fake.threads
    assert answers.calls[0]["thread_id"] == f"discord:{GUILD_ID}:{CHANNEL_ID}:private:{USER_ID}"


async def test_everyone_in_knowledge_base_pings_nobody(fake: FakeDiscord) -> None:
    kb_text = "Announce with @everyone or <@&123456789012345678> [1]."
    services, _, _ = services_with(RecordingAnswers(text=kb_text))
    async with logged_in(services) as client:
        payload = fake.slash_payload("ask", {"question": "@here how to announce?"})
        await run(client, payload)
    [message] = fake.messages_for(payload)
    embed = message["edits"][0]["embeds"][0]
    assert "@everyone" not in json.dumps(message) and "@here" not in embed["title"]
    assert "@\u200beveryone" in embed["description"]
    every_send_silenced(fake)


async def test_retrieval_failure_gives_reason_and_logged_reference(fake: FakeDiscord) -> None:
    services, _, storage = services_with(
        RecordingAnswers(text="The search index is unavailable.", status=ResponseStatus.RETRIEVAL_FAILED))
    async with logged_in(services) as client:
        payload = fake.slash_payload("ask", {"question": "anything?"})
        await run(client, payload)
    [error] = [e for e in storage.entries if e.event_type is EventType.ERROR]
    embed = fake.messages_for(payload)[0]["edits"][0]["embeds"][0]
    assert "The search index is unavailable." in embed["description"]
    assert embed["description"].count(error.entry_id) == 1
    assert f"give an admin this reference: `{error.entry_id}`" in embed["description"]
    assert not embed.get("footer") and not message_components(fake, payload)  # nothing to rate
    assert embed["color"] == fmt.RED.value
    assert error.thread_id == payload_thread(fake, payload)


def message_components(fake: FakeDiscord, payload: dict[str, Any]) -> list[Any]:
    return list(fake.messages_for(payload)[0]["edits"][0].get("components") or [])


def payload_thread(fake: FakeDiscord, payload: dict[str, Any]) -> str:
    return f"discord:{GUILD_ID}:{fake.messages_for(payload)[0]['id']}"


async def test_service_exception_gives_reference_never_silence(fake: FakeDiscord) -> None:
    services, answers, storage = services_with()
    answers.error = RuntimeError("boom")
    async with logged_in(services) as client:
        payload = fake.slash_payload("ask", {"question": "anything?"})
        await run(client, payload)
    [error] = [e for e in storage.entries if e.event_type is EventType.ERROR]
    assert "RuntimeError: boom" in (error.error_details or "")
    content = fake.messages_for(payload)[0]["edits"][0]["content"]
    assert content.startswith("Sorry, I couldn't answer that") and error.entry_id in content


async def test_unexpected_error_is_logged_and_reported(
    fake: FakeDiscord, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise KeyError("embed")

    monkeypatch.setattr(fmt, "answer_embeds", broken)
    services, _, storage = services_with()
    async with logged_in(services) as client:
        payload = fake.slash_payload("ask", {"question": "anything?", "private": True})
        await run(client, payload)
    [error] = [e for e in storage.entries if e.event_type is EventType.ERROR]
    assert "KeyError" in (error.error_details or "")
    [message] = fake.messages_for(payload)
    assert error.entry_id in message["content"] and message["flags"] & 64


async def test_thread_forbidden_answers_in_channel(fake: FakeDiscord) -> None:
    fake.thread_status = 403
    services, answers, _ = services_with()
    async with logged_in(services) as client:
        payload = fake.slash_payload("ask", {"question": "How do I install?"})
        await run(client, payload)
    [message] = fake.messages_for(payload)
    assert not fake.threads and message["edits"][0]["embeds"]
    assert answers.calls[0]["thread_id"] == f"discord:{GUILD_ID}:{message['id']}"


async def test_long_answer_continues_in_the_thread(fake: FakeDiscord) -> None:
    long_text = " ".join(f"Step {i} of the install [1]." for i in range(1500))
    services, _, _ = services_with(RecordingAnswers(text=long_text))
    async with logged_in(services) as client:
        payload = fake.slash_payload("ask", {"question": "Everything?"})
        await run(client, payload)
    [message] = fake.messages_for(payload)
    pages = fake.calls_to("POST", f"/channels/{message['id']}/messages")
    assert pages and all(len(p.json["embeds"]) == 1 for p in pages)
    every_send_silenced(fake)


# --------------------------------------------------------------------------- /export-logs


def _rows(raw: bytes, file_format: str) -> list[dict[str, Any]]:
    text = raw.decode()
    if file_format == "csv":
        return list(csv.DictReader(io.StringIO(text)))
    return [json.loads(line) for line in text.splitlines()]


@pytest.mark.parametrize("file_format", ["jsonl", "csv"])
async def test_admin_export_sends_log_and_feedback_files(fake: FakeDiscord, file_format: str) -> None:
    services, _, storage = services_with(discord_admin_user_ids=[str(USER_ID)])
    async with logged_in(services) as client:
        await run(client, fake.slash_payload("ask", {"question": "How do I install?"}))
        before = list(storage.entries)
        payload = fake.slash_payload("export-logs", {"format": file_format})
        await run(client, payload)
    assert fake.callbacks[int(payload["id"])] == {"type": 5, "data": {"flags": 64}}
    [message] = fake.messages_for(payload)
    [call] = [c for c in fake.calls_to("POST", "/webhooks/") if c.files]
    assert message["flags"] & 64 and call.json["allowed_mentions"] == NONE_MENTIONS
    log_name, votes_name = sorted(call.files)[::-1] if "log" in sorted(call.files)[1] else sorted(call.files)
    assert re.fullmatch(rf"ragbot-log-\d{{8}}-\d{{6}}\.{file_format}", log_name)
    rows = _rows(call.files[log_name], file_format)
    assert [r["entry_id"] for r in rows] == [e.entry_id for e in before]
    assert [r["event_type"] for r in rows] == [e.event_type.value for e in before]
    assert re.fullmatch(rf"ragbot-feedback-\d{{8}}-\d{{6}}\.{file_format}", votes_name)
    done = [e for e in storage.entries if e.event_type is EventType.ADMIN_EXPORT]
    assert len(done) == 1 and done[0].error_details is None and f"{len(before)} log entries" in (
        done[0].response_summary or "")


async def test_admin_role_may_export_since(fake: FakeDiscord) -> None:
    # Member.roles needs the guild's roles: connected through the gateway, as in production.
    services, _, _ = services_with(discord_admin_role_ids=[str(ADMIN_ROLE_ID)])
    async with connected(services) as client:
        payload = fake.slash_payload("export-logs", {"since": "1d"}, roles=(ADMIN_ROLE_ID,))
        await run(client, payload)
    [message] = fake.messages_for(payload)
    assert len(message["attachments"]) == 2 and "since" in message["content"]


@pytest.mark.parametrize("raised", [None, OverflowError("date value out of range")])
async def test_export_with_unreadable_since_answers_privately(
    fake: FakeDiscord, monkeypatch: pytest.MonkeyPatch, raised: Exception | None
) -> None:
    if raised is not None:
        # parse_when once let OverflowError escape; the admin must still get a reply.
        def failing(text: str) -> datetime:
            raise raised

    services, _, storage = services_with(discord_admin_user_ids=[str(USER_ID)])
    if raised is not None:
        monkeypatch.setattr(services.exports, "parse_when", failing)
    async with logged_in(services) as client:
        payload = fake.slash_payload("export-logs", {"since": "99999999999d"})
        await run(client, payload)
    callback = fake.callbacks[int(payload["id"])]
    assert callback["type"] == 4 and callback["data"]["flags"] & 64
    content = callback["data"]["content"]
    assert "'99999999999d' is not a start" in content and "Usage:" in content and "7d" in content
    assert ("out of range" if raised else "'99999999999d'") in content
    assert not [c for c in fake.calls if c.files]
    assert not [e for e in storage.entries if e.event_type in (EventType.ADMIN_EXPORT, EventType.ERROR)]


async def test_non_admin_export_is_refused_and_logged(fake: FakeDiscord) -> None:
    # Discord says the user is an Administrator, but ragbot's own lists are what count.
    services, _, storage = services_with(discord_admin_user_ids=["1"])
    async with logged_in(services) as client:
        command = client.tree.get_command("export-logs")
        assert command is not None and len(command.checks) == 1  # the app_commands check
        payload = fake.slash_payload("export-logs", {}, member_permissions=8)
        await run(client, payload)
    callback = fake.callbacks[int(payload["id"])]
    assert callback["type"] == 4 and callback["data"]["flags"] & 64
    assert "only ragbot admins" in callback["data"]["content"]
    assert not [c for c in fake.calls if c.files]
    [refusal] = [e for e in storage.entries if e.event_type is EventType.ADMIN_EXPORT]
    details = refusal.error_details or ""
    assert details.startswith("refused") and str(USER_ID) in details


# --------------------------------------------------------------------------- end to end through the gateway


async def test_gateway_round_trip_ask_then_feedback_after_restart(fake: FakeDiscord) -> None:
    services, answers, storage = services_with()
    async with connected(services):
        assert fake.identified.is_set()
        payload = fake.slash_payload("ask", {"question": "How do I install?"})
        await fake.interact(payload)
        await eventually(lambda: [e for e in storage.entries if e.event_type is EventType.RESPONSE_SENT])
    assert fake.callbacks[int(payload["id"])]["type"] == 5
    [message] = fake.messages_for(payload)
    edit = message["edits"][0]
    assert edit["allowed_mentions"] == NONE_MENTIONS
    assert edit["embeds"][0]["fields"][0]["value"].startswith("[1] [Install")
    every_send_silenced(fake)

    # A new client on the same storage: the button's custom_id still leads to the response.
    restarted = fake_services(services.settings, answers=answers, storage=storage)
    async with connected(restarted):
        up = next(b["custom_id"] for b in message["components"][0]["components"] if ":up:" in b["custom_id"])
        click = fake.click_payload(int(message["id"]), up, user_id=USER_ID + 1)
        await fake.interact(click)
        await fake.wait_for(lambda: int(click["id"]) in fake.callbacks)
    rid = up.rsplit(":", 1)[1]
    [vote] = storage.votes.values()
    assert (vote.response_id, vote.user_id, vote.vote, vote.platform) == (rid, str(USER_ID + 1), 1, "discord")
    thanks = fake.callbacks[int(click["id"])]
    assert thanks["type"] == 4 and thanks["data"]["flags"] & 64 and "Thanks" in thanks["data"]["content"]
    [logged] = [e for e in storage.entries if e.event_type is EventType.FEEDBACK_RECEIVED]
    assert rid in (logged.response_summary or "")
    assert logged.thread_id == f"discord:{GUILD_ID}:{message['id']}"


async def test_run_discord_starts_and_stops_cleanly(fake: FakeDiscord) -> None:
    services, _, _ = services_with()
    task = asyncio.create_task(run_discord(services))
    await asyncio.wait_for(fake.ready_sent.wait(), 10)
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not fake.commands  # `ragbot discord sync` registers them, not every start
