"""One scenario, every platform: Slack, Discord (and the terminal where it applies) decide alike.

Each test runs the same scenario through the real slack-bolt and discord.py clients
against the loopback fakes and asserts the same outcome and the same log rows, with the
platform's name and ids replaced (``normalized``). These are the drifts issue 9 fixed:
a notice shown twice, a silent Discord feedback failure, the export logged before it was
sent, and Discord dropping answers in flight at shutdown.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import re
import socket
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import pytest

from bots.chat.notices import notice_for
from bots.discord.client import run_discord
from bots.slack import listeners as slack_listeners
from bots.slack.app import run_slack
from bots.terminal import run_chat
from core.answer.generators.fallback import VALIDATION_NOTE
from core.answer.responses import NOT_FOUND_TEXT
from core.fakes import InMemoryStorage
from core.models import AgentLogEntry, AgentResponse, EventType, Feedback, ResponseStatus
from tests.bots.drivers import (
    Answers,
    SlackHarness,
    all_text,
    connected,
    discord_settings,
    event_body,
    logged_in,
    mention,
    run,
    services_over,
    signed_headers,
    slack_settings,
)
from tests.support.fake_discord import USER_ID, FakeDiscord
from tests.support.fake_slack import FakeSlack

SLACK_USER = "U1"
SLACK_ADMIN = "UADMIN"
QUESTION = "how do I install ragbot?"
RESPONSE_ID = "0123456789abcdef0123456789abcdef"
Row = tuple[str, str | None, str | None]


def normalized(entries: list[AgentLogEntry], *, platform: str, user: str) -> list[Row]:
    """The log rows with what differs by platform replaced: its name, the user id, generated ids."""

    def norm(text: str | None) -> str | None:
        if text is None:
            return None
        text = re.sub(r"\b[0-9a-f]{32}\b", "<id>", text.replace(platform, "<platform>"))
        return text.replace(user, "<user>")

    return [(e.event_type.value, norm(e.response_summary), norm(e.error_details)) for e in entries]


def slack_notice(update: dict[str, Any]) -> str | None:
    """The notice line Slack put above the answer, emoji dropped."""
    blocks = update["blocks"]
    if blocks[0]["type"] != "context":
        return None
    return re.sub(r"^:[a-z_]+: ", "", blocks[0]["elements"][0]["text"])


# --------------------------------------------------------------------------- 1. a notice said once

VALIDATION_TEXT = f"{VALIDATION_NOTE}\n\nRun make demo to install ragbot."

CASES = {
    "not_found": (NOT_FOUND_TEXT, ResponseStatus.NO_RELEVANT_DOCUMENTS, {}),
    "validation_failed": (VALIDATION_TEXT, ResponseStatus.VALIDATION_FAILED, {}),
    "low_confidence": ("Ragbot answers from your docs [1].", ResponseStatus.ANSWERED,
                       {"confidence_score": 0.1}),
}


def case_answers(case: str) -> Answers:
    text, status, changes = CASES[case]
    answers = Answers(text=text, status=status)
    answers.changes = changes
    return answers


async def slack_shows(fake: FakeSlack, case: str) -> tuple[str, str | None, list[Row]]:
    storage, answers = InMemoryStorage(), case_answers(case)
    async with SlackHarness(fake, services_over(slack_settings(fake), storage, answers)) as slack:
        await slack.event(mention())
        [update] = await fake.wait_for("chat.update")
        await slack.drain()
    return all_text(update["blocks"]), slack_notice(update), normalized(
        storage.entries, platform="slack", user=SLACK_USER)


async def discord_shows(fake: FakeDiscord, case: str) -> tuple[str, str | None, list[Row]]:
    storage, answers = InMemoryStorage(), case_answers(case)
    async with logged_in(services_over(discord_settings(), storage, answers)) as client:
        payload = fake.slash_payload("ask", {"question": QUESTION})
        await run(client, payload)
    embed = fake.messages_for(payload)[0]["edits"][0]["embeds"][0]
    shown = "\n".join([embed.get("title", ""), (embed.get("author") or {}).get("name", ""),
                       embed.get("description", ""), (embed.get("footer") or {}).get("text", "")])
    return shown, (embed.get("author") or {}).get("name"), normalized(
        storage.entries, platform="discord", user=str(USER_ID))


async def terminal_shows(case: str) -> tuple[str, str | None]:
    answers = case_answers(case)

    async def ask(question: str, thread_id: str | None, user_context: str | None) -> AgentResponse:
        return await answers.answer(question, thread_id=thread_id)

    out = io.StringIO()
    await run_chat(ask, thread_id="cli:t", stdin=io.StringIO(QUESTION + "\n"), stdout=out)
    notices = re.findall(r"^\((.*)\)$", out.getvalue(), re.MULTILINE)
    return out.getvalue(), notices[0] if notices else None


@pytest.mark.parametrize("case", list(CASES))
async def test_each_platform_says_a_status_once_with_the_same_notice(
    slack_fake: FakeSlack, discord_fake: FakeDiscord, case: str
) -> None:
    text = CASES[case][0]
    expected = notice_for(await case_answers(case).answer(QUESTION)).text
    slack_text, slack_seen, slack_rows = await slack_shows(slack_fake, case)
    discord_text, discord_seen, discord_rows = await discord_shows(discord_fake, case)
    terminal_text, terminal_seen = await terminal_shows(case)
    # The core's sentence is what says "not found" / "not checked": shown once, nothing added.
    first_line = text.splitlines()[0].split(" [")[0][:60]  # Slack links the citation markers
    for shown in (slack_text, discord_text, terminal_text):
        assert shown.count(first_line) == 1, shown
    assert slack_seen == discord_seen == terminal_seen == expected
    if case != "low_confidence":
        assert expected is None
    assert slack_rows == discord_rows
    [(event, summary, _)] = slack_rows
    assert event == "response_sent" and summary and summary.startswith("<platform>: ")


# --------------------------------------------------------------------------- 2. a failed vote is answered


class BrokenVotes(InMemoryStorage):
    """Storage whose vote table fails to write."""

    async def record_feedback(self, feedback: Feedback) -> None:
        raise RuntimeError("disk full")


async def slack_vote(fake: FakeSlack) -> tuple[str, list[AgentLogEntry]]:
    storage = BrokenVotes()
    async with SlackHarness(fake, services_over(slack_settings(fake), storage, Answers())) as slack:
        await slack.click("ragbot_feedback_up", RESPONSE_ID)
        [note] = await fake.wait_for("chat.postEphemeral")
        await slack.drain()
    return note["text"], storage.entries


async def discord_vote(fake: FakeDiscord) -> tuple[str, list[AgentLogEntry]]:
    storage = BrokenVotes()
    async with connected(services_over(discord_settings(), storage, Answers())):
        payload = fake.slash_payload("ask", {"question": QUESTION})
        await fake.interact(payload)
        message = await fake.wait_for(lambda: next((m for m in fake.messages_for(payload) if m.get("edits")),
                                                   None))
        up = next(b["custom_id"] for b in message["components"][0]["components"] if ":up:" in b["custom_id"])
        click = fake.click_payload(int(message["id"]), up)
        await fake.interact(click)
        await fake.wait_for(lambda: int(click["id"]) in fake.callbacks)
    return fake.callbacks[int(click["id"])]["data"]["content"], [
        e for e in storage.entries if e.event_type in (EventType.ERROR, EventType.FEEDBACK_RECEIVED)]


async def test_a_vote_the_store_refuses_gets_a_reference_on_every_platform(
    slack_fake: FakeSlack, discord_fake: FakeDiscord
) -> None:
    slack_reply, slack_entries = await slack_vote(slack_fake)
    discord_reply, discord_entries = await discord_vote(discord_fake)
    for reply, entries in ((slack_reply, slack_entries), (discord_reply, discord_entries)):
        [error] = entries
        assert f"`{error.entry_id}`" in reply and reply.startswith("Sorry, I couldn't record your vote")
    slack_rows = normalized(slack_entries, platform="slack", user=SLACK_USER)
    assert slack_rows == normalized(discord_entries, platform="discord", user=str(USER_ID)) == [
        ("error", None, "<platform>: storing feedback on <id> failed: RuntimeError: disk full")]


# --------------------------------------------------------------------------- 3. the export, in one order


def seeded() -> InMemoryStorage:
    storage = InMemoryStorage()
    storage.entries.append(AgentLogEntry(event_type=EventType.ERROR, error_details="earlier"))
    return storage


async def slack_export(fake: FakeSlack, *, fail: bool = False) -> tuple[list[AgentLogEntry], str | None]:
    storage = seeded()
    settings = slack_settings(fake, slack_admin_user_ids=SLACK_ADMIN)
    if fail:
        fake.fail["files.completeUploadExternal"] = "not_allowed_token_type"
    async with SlackHarness(fake, services_over(settings, storage, Answers())) as slack:
        await slack.command("csv", user=SLACK_ADMIN)
        await slack.settle()
    notes = fake.calls_to("chat.postEphemeral")
    log_file = next((fake.uploads[f] for f, name in fake.filenames.items() if "-log-" in name), None)
    assert log_file is None or b"admin_export" not in log_file  # logged after it was sent
    return storage.entries[1:], notes[0]["text"] if notes else None


async def discord_export(
    fake: FakeDiscord, *, upload_limit: int = 10 * 1024 * 1024
) -> tuple[list[AgentLogEntry], str | None]:
    storage = seeded()
    settings = discord_settings(discord_admin_user_ids=[str(USER_ID)])
    async with logged_in(services_over(settings, storage, Answers())) as client:
        payload = fake.slash_payload("export-logs", {"format": "csv"}, upload_limit=upload_limit)
        await run(client, payload)
    uploaded = [c for c in fake.calls if c.files and c.method == "POST"]
    if uploaded and fake.upload_status == 200:
        log_file = next(raw for name, raw in uploaded[0].files.items() if "-log-" in name)
        assert b"admin_export" not in log_file  # logged after it was sent
    notes = [m["content"] for m in fake.messages_for(payload) if not m["attachments"]]
    return storage.entries[1:], notes[0] if notes else None


def rows_of(slack: list[AgentLogEntry], discord: list[AgentLogEntry]) -> tuple[list[Row], list[Row]]:
    return (normalized(slack, platform="slack", user=SLACK_ADMIN),
            normalized(discord, platform="discord", user=str(USER_ID)))


async def test_an_export_is_logged_once_it_was_sent_on_every_platform(
    slack_fake: FakeSlack, discord_fake: FakeDiscord
) -> None:
    slack_entries, _ = await slack_export(slack_fake)
    discord_entries, _ = await discord_export(discord_fake)
    done = "<platform>: user <user> exported 1 log entries and 0 votes as csv (all time)"
    assert rows_of(slack_entries, discord_entries) == ([("admin_export", done, None)],) * 2


async def test_an_export_over_the_upload_limit_is_not_logged_as_done_on_every_platform(
    slack_fake: FakeSlack, discord_fake: FakeDiscord, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(slack_listeners, "UPLOAD_LIMIT", 100)
    slack_entries, slack_note = await slack_export(slack_fake)
    discord_entries, discord_note = await discord_export(discord_fake, upload_limit=100)
    slack_rows, discord_rows = rows_of(slack_entries, discord_entries)
    assert slack_rows == discord_rows
    [(event, summary, details)] = slack_rows
    assert event == "admin_export" and summary is None and details
    assert details.startswith("not sent: <platform>: user <user>'s export as csv (all time) of 1 log entries")
    assert details.endswith("over the 100-byte upload limit")
    assert slack_note and discord_note and "over the 100-byte upload limit" in slack_note
    assert "over the 100-byte upload limit" in discord_note
    assert slack_fake.uploads == {} and not [c for c in discord_fake.calls if c.files]


async def test_an_export_the_platform_refuses_is_an_error_with_a_reference_on_every_platform(
    slack_fake: FakeSlack, discord_fake: FakeDiscord
) -> None:
    discord_fake.upload_status = 403
    slack_entries, slack_note = await slack_export(slack_fake, fail=True)
    discord_entries, discord_note = await discord_export(discord_fake)
    for entries, note in ((slack_entries, slack_note), (discord_entries, discord_note)):
        [error] = entries
        assert note and f"`{error.entry_id}`" in note and note.startswith("Sorry, the export failed")
    slack_rows, discord_rows = rows_of(slack_entries, discord_entries)
    prefix = "<platform>: admin export for user <user> failed: "
    assert [(e, s, (d or "")[:len(prefix)]) for e, s, d in slack_rows] == [
        (e, s, (d or "")[:len(prefix)]) for e, s, d in discord_rows] == [("error", None, prefix)]


# --------------------------------------------------------------------------- 4. shutdown drains answers


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def stop_mid_answer(task: asyncio.Task[None], answers: Answers) -> None:
    """Cancel the adapter while an answer is held back; release the answer a moment later."""
    assert answers.gate is not None
    asyncio.get_running_loop().call_later(0.2, answers.gate.set)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def slack_stopped_mid_answer(fake: FakeSlack) -> tuple[bool, list[AgentLogEntry]]:
    storage, answers = InMemoryStorage(), Answers()
    answers.gate = asyncio.Event()
    port = free_port()
    task = asyncio.create_task(run_slack(services_over(slack_settings(fake, port=port), storage, answers),
                                         host="127.0.0.1"))
    body = event_body(mention(), event_id="EvDrain")
    async with aiohttp.ClientSession() as http:
        await until_up(lambda: http.get(f"http://127.0.0.1:{port}/healthz"))
        async with http.post(f"http://127.0.0.1:{port}/slack/events", data=body,
                             headers=signed_headers(body)) as posted:
            assert posted.status == 200
    await fake.wait_for("chat.postMessage")  # the placeholder: the answer is in flight
    await stop_mid_answer(task, answers)
    return bool(fake.calls_to("chat.update")), storage.entries


async def until_up(get: Callable[[], Any]) -> None:
    async with asyncio.timeout(5):
        while True:
            with contextlib.suppress(aiohttp.ClientConnectionError):
                async with get() as resp:
                    if resp.status == 200:
                        return
            await asyncio.sleep(0.02)


async def discord_stopped_mid_answer(fake: FakeDiscord) -> tuple[bool, list[AgentLogEntry]]:
    storage, answers = InMemoryStorage(), Answers()
    answers.gate = asyncio.Event()
    task = asyncio.create_task(run_discord(services_over(discord_settings(), storage, answers)))
    await asyncio.wait_for(fake.ready_sent.wait(), 10)
    await asyncio.sleep(0.05)
    payload = fake.slash_payload("ask", {"question": QUESTION})
    await fake.interact(payload)
    await fake.wait_for(lambda: fake.messages_for(payload))  # the placeholder: the answer is in flight
    await stop_mid_answer(task, answers)
    return bool(fake.messages_for(payload)[0].get("edits")), storage.entries


async def test_stopping_an_adapter_finishes_the_answers_in_flight_on_every_platform(
    slack_fake: FakeSlack, discord_fake: FakeDiscord
) -> None:
    runs: list[Awaitable[tuple[bool, list[AgentLogEntry]]]] = [
        slack_stopped_mid_answer(slack_fake), discord_stopped_mid_answer(discord_fake)]
    (slack_sent, slack_entries), (discord_sent, discord_entries) = [await r for r in runs]
    assert slack_sent and discord_sent
    slack_rows = normalized(slack_entries, platform="slack", user=SLACK_USER)
    assert slack_rows == normalized(discord_entries, platform="discord", user=str(USER_ID))
    assert [row[0] for row in slack_rows] == ["response_sent"]
