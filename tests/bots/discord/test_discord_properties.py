"""Hypothesis properties over what the Discord adapter reads from users (issue 10 acceptance).

Whatever a user types into ``/ask`` (mentions, control characters, 2,000 characters) or into
``/export-logs since:``, the adapter answers once, never pings anyone, and never raises.
"""

from __future__ import annotations

import asyncio
import json
import re
from datetime import datetime
from typing import Any

import discord.gateway
import discord.http
import yarl
from hypothesis import given, settings
from hypothesis import strategies as st

from bots.chat import export
from bots.chat.export import ExportUsageError
from bots.discord import format as fmt
from bots.runtime import StorageExports
from core.fakes import InMemoryStorage
from tests.bots.drivers import NONE_MENTIONS, Answers, discord_settings, logged_in, run, services_over
from tests.support.fake_discord import FakeDiscord

ACTIVE_MENTION = re.compile(r"<@[!&]?\d+>|(?<![\w\u200b])@(?:everyone|here)\b")
#: Text users type: any characters, with mentions and markup mixed in more often than chance would.
TYPED = st.lists(st.one_of(
    st.text(max_size=30),
    st.sampled_from(["<@123>", "<@!123>", "<@&456>", "@everyone", "@here", "x@here", "<#789>", "**",
                     "`", "\n", "\u200b", "https://evil.example", "||spoiler||"]),
), max_size=12).map("".join)


@given(question=TYPED)
def test_thread_names_fit_discord(question: str) -> None:
    name = fmt.thread_name(question)
    assert 1 <= len(name) <= 100 and "\n" not in name


@given(text=TYPED)
def test_defused_text_pings_nobody(text: str) -> None:
    assert ACTIVE_MENTION.search(fmt.defuse(text)) is None


@given(since=st.one_of(st.none(), st.text(max_size=40), st.sampled_from(
    ["7d", "24h", "2w", "2025-01-31", "2025-01-31T12:00Z", "99999999999d"])))
def test_export_since_is_a_start_or_a_usage_error(since: str | None) -> None:
    storage = InMemoryStorage()
    try:
        parsed = export.parse_since(StorageExports(log=storage, feedback=storage), since)
    except ExportUsageError as exc:
        assert str(exc)
    else:
        assert parsed is None or isinstance(parsed, datetime)


async def _ask(question: str) -> list[dict[str, Any]]:
    fake = await FakeDiscord().start()
    saved = discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY
    discord.http.Route.BASE = fake.api_base
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(fake.gateway_url)
    try:
        storage = InMemoryStorage()
        services = services_over(discord_settings(rate_limit_per_minute=0), storage, Answers(storage))
        async with logged_in(services) as client:
            await run(client, fake.slash_payload("ask", {"question": question}))
        return [c.json for c in fake.calls if c.method in ("POST", "PATCH") and isinstance(c.json, dict)]
    finally:
        discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = saved
        await fake.close()


@settings(max_examples=25, deadline=None)
@given(question=TYPED.filter(lambda q: len(q) <= 2000))
def test_any_ask_gets_a_reply_that_pings_nobody(question: str) -> None:
    sent = asyncio.run(_ask(question))
    replies = [body.get("data", body) for body in sent]
    assert replies, "the user got nothing"
    for reply in replies:
        if "allowed_mentions" in reply:
            assert reply["allowed_mentions"] == NONE_MENTIONS
        shown = {k: v for k, v in reply.items() if k != "allowed_mentions"}
        assert ACTIVE_MENTION.search(json.dumps(shown, ensure_ascii=False)) is None
