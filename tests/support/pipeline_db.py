"""Fill a data folder the way production does: the real pipeline, Slack over Socket Mode, Discord, the CLI.

``fill(data_dir)`` ingests a small guide, then asks answerable and unanswerable questions on
Slack (the real bolt Socket Mode handler against ``FakeSocketMode``), on Discord (discord.py
against ``FakeDiscord``) and through the CLI path, and votes thumbs up / down on both
platforms. The admin commands are then tested on the database it leaves.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from bots.chat.asking import log_sent
from bots.runtime import Runtime, build_runtime, ingest
from bots.slack import format as slack_fmt
from core.settings import Settings
from tests.support.fake_discord import FakeDiscord
from tests.support.fake_slack import FakeSlack
from tests.support.fake_socket_mode import FakeSocketMode, button_click, mention_event

GUIDE = {
    "install.md": "# Install\n\n## Quick start\n\nInstall ragbot with make demo. The demo creates a virtual "
                  "environment, ingests the user guide and answers a sample question with citations.\n",
    "slack.md": "# Slack set-up\n\n## Tokens\n\nCreate a Slack app from the manifest. Put the bot token in "
                "SLACK_BOT_TOKEN and the signing secret in SLACK_SIGNING_SECRET, then run ragbot serve.\n",
    "testing.md": "# Testing\n\n## Running the suite\n\nRun make test to lint, type-check and run the whole "
                  "suite of tests. Benchmarks run with make bench.\n",
}
ANSWERABLE = "how do I install ragbot?"
UNANSWERABLE = ["does ragbot support microsoft teams?", "microsoft teams support", "how much does it cost?"]


def write_guide(folder: Path) -> Path:
    """The small guide as Markdown files under ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in GUIDE.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def settings_for(data_dir: Path, slack: FakeSlack | None = None, **extra: Any) -> Settings:
    """Settings on ``data_dir``; with ``slack``, Socket Mode tokens pointing at the fake."""
    tokens: dict[str, Any] = {}
    if slack is not None:
        tokens = {"slack_bot_token": SecretStr("xoxb-test"), "slack_app_token": SecretStr("xapp-test"),
                  "slack_api_url": slack.api_url, "slack_admin_user_ids": ["UADMIN"]}
    return Settings(_env_file=None, data_dir=data_dir, port=0, slack_host="127.0.0.1",  # type: ignore[call-arg]
                    **tokens, **extra)


@dataclass(kw_only=True)
class Filled:
    """What ``fill`` did: ids to look up afterwards."""

    settings: Settings
    slack_query_ids: list[str] = field(default_factory=list)
    thumbs_down_response: str = ""
    cli_query_id: str = ""


@contextlib.asynccontextmanager
async def socket_mode_slack(
    runtime: Runtime, slack: FakeSlack, report: Any = None
) -> AsyncIterator[FakeSocketMode]:
    """``run_slack`` in Socket Mode against ``slack`` and a fresh ``FakeSocketMode``, stopped on exit."""
    from bots.slack.app import run_slack

    socket = await FakeSocketMode().start()
    socket.attach(slack)
    task = asyncio.create_task(run_slack(runtime.services, report=report))
    try:
        await asyncio.wait_for(socket.connected.wait(), 15)
        yield socket
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await socket.close()


async def ask_on_slack(socket: FakeSocketMode, slack: FakeSlack, text: str, *, n: int) -> dict[str, Any]:
    """Mention the bot in C1 (thread ``200.<n>``) and wait for the answer's ``chat.update``; return it."""
    before = len(slack.calls_to("chat.update"))
    ts = f"200.{n:06d}"
    await socket.wait_ack(await socket.send("events_api", mention_event(text, event_id=f"Ev{n}", ts=ts)))
    updates = await slack.wait_for("chat.update", before + 1, timeout=20)
    return updates[-1]


def response_id_of(update: dict[str, Any]) -> str:
    """The response id carried by the feedback buttons of an answer."""
    for block in update.get("blocks") or []:
        for element in block.get("elements", []):
            if element.get("action_id") == slack_fmt.ACTION_UP:
                return str(element["value"])
    raise AssertionError(f"no feedback buttons in {json.dumps(update)[:300]}")


async def _fill_slack(runtime: Runtime, slack: FakeSlack) -> str:
    async with socket_mode_slack(runtime, slack) as socket:
        answered = await ask_on_slack(socket, slack, ANSWERABLE, n=1)
        for n, question in enumerate(UNANSWERABLE, start=2):
            await ask_on_slack(socket, slack, question, n=n)
        rid = response_id_of(answered)
        click = button_click(slack_fmt.ACTION_DOWN, rid, user="U7", channel="C1", message_ts="200.9",
                             thread_ts="200.000001")
        await socket.wait_ack(await socket.send("interactive", click))
        await slack.wait_for("chat.postEphemeral", 1, timeout=10)
    return rid


async def _fill_discord(runtime: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    from bots.discord.client import run_discord

    fake = await FakeDiscord().start()
    fake.patch(monkeypatch)
    task = asyncio.create_task(run_discord(runtime.services))
    try:
        await asyncio.wait_for(fake.ready_sent.wait(), 20)
        for question in (ANSWERABLE, UNANSWERABLE[1]):
            payload = fake.slash_payload("ask", {"question": question})
            await fake.interact(payload)
            await fake.wait_for(lambda p=payload: any(m.get("edits") for m in fake.messages_for(p)), 20)
        [message] = fake.messages_for(payload)
        up = next(b["custom_id"] for b in message["components"][0]["components"] if ":up:" in b["custom_id"])
        click = fake.click_payload(int(message["id"]), up)
        await fake.interact(click)
        await fake.wait_for(lambda: int(click["id"]) in fake.callbacks, 10)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await fake.close()


async def fill(data_dir: Path, docs: Path) -> Filled:
    """Ingest ``docs`` and ask on every platform; the runtime is closed afterwards."""
    slack = await FakeSlack().start()
    settings = settings_for(data_dir, slack, discord_token=SecretStr("fake-discord-token"))
    runtime = await build_runtime(settings)
    filled = Filled(settings=settings)
    try:
        await ingest(runtime, str(write_guide(docs)), progress=False)
        filled.thumbs_down_response = await _fill_slack(runtime, slack)
        with pytest.MonkeyPatch.context() as monkeypatch:
            await _fill_discord(runtime, monkeypatch)
        for question in ("how do I run the test suite?", "and what about benchmarks?"):
            response = await runtime.pipeline.answer(question, thread_id="cli:t1")
            await log_sent(runtime.services.activity, response, platform="cli")
        filled.cli_query_id = response.query_id  # a follow-up: borrows the thread's first question
    finally:
        await runtime.aclose()
        await slack.close()
    return filled
