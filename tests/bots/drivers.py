"""Drive the real Slack and Discord SDKs against the loopback fakes: shared by every bots test."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlencode

import discord
from aiohttp import ClientResponse
from aiohttp.test_utils import TestClient, TestServer
from pydantic import SecretStr
from slack_sdk.signature import SignatureVerifier

from bots.chat.services import Services, fake_services
from bots.discord.client import RagbotDiscord
from bots.runtime import StorageExports
from bots.slack import format as slack_fmt
from bots.slack.app import build_slack_app
from bots.slack.server import RagbotSlackApp, slack_web_app
from core.fakes import FakeAnswerService, InMemoryStorage
from core.models import AgentResponse, ConversationTurn, TurnRole
from core.protocols import ConversationStore
from core.settings import Settings
from tests.support.fake_discord import FAKE_TOKEN, FakeDiscord
from tests.support.fake_slack import FakeSlack

SECRET = "test-signing-secret"
TOKEN = "xoxb-test"
TEAM = "T1"
NONE_MENTIONS: dict[str, list[str]] = {"parse": []}


class Answers(FakeAnswerService):
    """FakeAnswerService that keeps its responses and, like the pipeline, remembers turns."""

    def __init__(self, conversations: ConversationStore | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.conversations = conversations
        self.responses: list[AgentResponse] = []
        self.reference_id: str | None = None
        #: Fields to change in every response (``{"confidence_score": 0.1}``).
        self.changes: dict[str, Any] = {}
        #: Set to hold answers back until the test releases them.
        self.gate: asyncio.Event | None = None

    async def answer(
        self, question: str, *, thread_id: str | None = None, user_id: str | None = None,
        user_context: str | None = None,
    ) -> AgentResponse:
        if self.gate is not None:
            await self.gate.wait()
        response = await super().answer(question, thread_id=thread_id, user_id=user_id,
                                        user_context=user_context)
        changes = {**self.changes, **({"reference_id": self.reference_id} if self.reference_id else {})}
        if changes:
            response = response.model_copy(update=changes)
        if thread_id and self.conversations is not None:
            await self.conversations.add_turn(ConversationTurn(thread_id=thread_id, role=TurnRole.USER,
                                                               content=question))
            await self.conversations.add_turn(ConversationTurn(
                thread_id=thread_id, role=TurnRole.ASSISTANT, content=response.response_text,
                response_id=response.response_id,
            ))
        self.responses.append(response)
        return response


def services_over(settings: Settings, storage: InMemoryStorage, answers: FakeAnswerService) -> Services:
    """Fake services whose exports are storage/export.py's over ``storage``."""
    return fake_services(settings, answers=answers, storage=storage,
                         exports=StorageExports(log=storage, feedback=storage))


# --------------------------------------------------------------------------- Slack


def slack_settings(fake: FakeSlack, **overrides: Any) -> Settings:
    """Settings for a Slack app talking to ``fake`` in HTTP mode."""
    values: dict[str, Any] = {
        "slack_bot_token": TOKEN, "slack_signing_secret": SECRET, "slack_api_url": fake.api_url,
        **overrides,
    }
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


class SlackHarness:
    """One ragbot Slack app served on a loopback port, talking to ``fake``."""

    def __init__(self, fake: FakeSlack, services: Services) -> None:
        self.fake = fake
        self.services = services
        self.app: RagbotSlackApp = build_slack_app(services=services)
        self.client = TestClient(TestServer(slack_web_app(self.app)))
        self._n = 0

    async def __aenter__(self) -> SlackHarness:
        await self.client.start_server()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.drain()
        await self.client.close()

    async def drain(self) -> None:
        """Wait for the listeners still working."""
        await self.app.bot.drain(timeout=5)

    async def settle(self) -> None:
        """Wait until our listeners are done and the fake heard nothing more."""
        await self.drain()
        await self.fake.settle()

    async def post(self, body: str, *, content_type: str, timestamp: int | None = None,
                   signature: str | None = None, headers: dict[str, str] | None = None) -> ClientResponse:
        """POST a signed request to /slack/events."""
        ts = str(timestamp if timestamp is not None else int(time.time()))
        sig = signature or SignatureVerifier(SECRET).generate_signature(timestamp=ts, body=body)
        assert sig is not None
        return await self.client.post("/slack/events", data=body.encode(), headers={
            "Content-Type": content_type, "X-Slack-Request-Timestamp": ts, "X-Slack-Signature": sig,
            **(headers or {}),
        })

    async def event(
        self, event: dict[str, Any], *, event_id: str | None = None, **kwargs: Any
    ) -> ClientResponse:
        """Deliver one Events API callback."""
        self._n += 1
        return await self.post(event_body(event, event_id=event_id or f"Ev{self._n:04d}"),
                               content_type="application/json", **kwargs)

    async def form(self, fields: dict[str, str]) -> ClientResponse:
        """POST a form (interactivity payloads, slash commands)."""
        return await self.post(urlencode(fields), content_type="application/x-www-form-urlencoded")

    async def click(self, action_id: str, response_id: str, *, user: str = "U1",
                    thread_ts: str = "100.000001") -> ClientResponse:
        """Click a feedback button under an answer in thread ``thread_ts`` of C1."""
        payload = {
            "type": "block_actions", "team": {"id": TEAM}, "user": {"id": user}, "api_app_id": "A1",
            "channel": {"id": "C1"}, "trigger_id": "1.2.3",
            "container": {"type": "message", "message_ts": "100.000009", "channel_id": "C1",
                          "thread_ts": thread_ts},
            "message": {"ts": "100.000009", "thread_ts": thread_ts, "text": "answer"},
            "actions": [{"type": "button", "action_id": action_id, "block_id": slack_fmt.FEEDBACK_BLOCK_ID,
                         "value": response_id, "action_ts": "100.1"}],
        }
        return await self.form({"payload": json.dumps(payload)})

    async def command(self, text: str, *, user: str) -> ClientResponse:
        """Run ``/ragbot-export text`` as ``user`` in C1."""
        return await self.form({
            "token": "unused", "team_id": TEAM, "channel_id": "C1", "user_id": user,
            "command": "/ragbot-export", "text": text, "trigger_id": "1.2.3",
            "response_url": f"{self.fake.root}/response",
        })


def event_body(event: dict[str, Any], *, event_id: str) -> str:
    """An Events API callback around ``event``."""
    return json.dumps({
        "token": "unused", "team_id": TEAM, "api_app_id": "A1", "type": "event_callback",
        "event_id": event_id, "event_time": int(time.time()), "event": event,
    })


def signed_headers(body: str) -> dict[str, str]:
    """The headers Slack signs a request with."""
    stamp = str(int(time.time()))
    signature = SignatureVerifier(SECRET).generate_signature(timestamp=stamp, body=body) or ""
    return {"Content-Type": "application/json", "X-Slack-Request-Timestamp": stamp,
            "X-Slack-Signature": signature}


def mention(text: str = "<@UBOT> how do I install ragbot?", *, ts: str = "100.000001",
            channel: str = "C1", user: str = "U1", thread_ts: str | None = None) -> dict[str, Any]:
    """An app_mention event."""
    event = {"type": "app_mention", "user": user, "text": text, "ts": ts, "channel": channel,
             "event_ts": ts, "team": TEAM}
    if thread_ts:
        event["thread_ts"] = thread_ts
    return event


def message(text: str, *, ts: str, channel: str = "C1", user: str | None = "U1",
            thread_ts: str | None = None, channel_type: str = "channel", **extra: Any) -> dict[str, Any]:
    """A message event."""
    event: dict[str, Any] = {"type": "message", "text": text, "ts": ts, "channel": channel,
                             "channel_type": channel_type, "event_ts": ts, "team": TEAM, **extra}
    if user:
        event["user"] = user
    if thread_ts:
        event["thread_ts"] = thread_ts
    return event


def all_text(blocks: list[dict[str, Any]]) -> str:
    """Every text string inside ``blocks``."""
    out: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "text" and isinstance(value, str):
                    out.append(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(blocks)
    return "\n".join(out)


# --------------------------------------------------------------------------- Discord


def discord_settings(**overrides: Any) -> Settings:
    """Settings with the fake Discord token."""
    return Settings(_env_file=None, discord_token=SecretStr(FAKE_TOKEN), **overrides)  # type: ignore[call-arg]


@asynccontextmanager
async def logged_in(services: Services) -> AsyncIterator[RagbotDiscord]:
    """A client logged in over REST only (setup_hook ran), for calling commands directly."""
    async with RagbotDiscord(services=services) as client:
        await client.login(FAKE_TOKEN)
        yield client


@asynccontextmanager
async def connected(services: Services) -> AsyncIterator[RagbotDiscord]:
    """A client connected through the fake gateway, ready for interactions."""
    async with RagbotDiscord(services=services) as client:
        # discord.py waits this long after the last GUILD_CREATE before "ready"; 2 s by default.
        client._connection.guild_ready_timeout = 0.05
        task = asyncio.create_task(client.start(FAKE_TOKEN))
        try:
            await asyncio.wait_for(client.wait_until_ready(), 10)
            yield client
        finally:
            await client.close()
            await task


async def run(client: RagbotDiscord, payload: dict[str, Any]) -> None:
    """Build the Interaction from the raw payload as discord.py does and run the command to the end."""
    interaction: discord.Interaction[Any] = discord.Interaction(
        data=payload, state=client._connection  # type: ignore[arg-type]
    )
    # _call is what CommandTree runs for an INTERACTION_CREATE; awaiting it directly keeps tests sequential.
    await client.tree._call(interaction)


async def eventually(predicate: Callable[[], Any], timeout: float = 10.0) -> Any:
    """Poll ``predicate`` until truthy: storage writes have no event to wait on."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not (value := predicate()):
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.01)
    return value


def every_send_silenced(fake: FakeDiscord) -> None:
    """Every message-creating or -editing call carried allowed_mentions == {"parse": []}."""
    sends = [c for c in fake.calls
             if c.method in ("POST", "PATCH") and ("webhooks" in c.path or c.path.endswith("/messages")
                                                   or ("messages/" in c.path and "threads" not in c.path))]
    sends += [c for c in fake.calls if c.path.endswith("/callback") and c.json["type"] == 4]
    assert sends
    for call in sends:
        body = call.json.get("data", call.json) if call.path.endswith("/callback") else call.json
        assert body["allowed_mentions"] == NONE_MENTIONS, call
