"""A fake Slack Socket Mode endpoint on 127.0.0.1: envelopes in, acks out.

Slack's Socket Mode: the app calls ``apps.connections.open`` with its app-level token and gets a
``wss://`` URL; over that websocket Slack sends envelopes (``{"envelope_id", "type":
"events_api" | "interactive" | "slash_commands", "payload", ...}``) and the app answers each
with ``{"envelope_id": ...}`` (plus a ``payload`` for commands) within 3 seconds, or Slack
retries it. ``FakeSocketMode.attach(fake_slack)`` makes the fake Web API answer
``apps.connections.open`` with this server's ``ws://`` URL (and refuse any token that is not
``xapp-``); ``send`` delivers an envelope and ``wait_ack`` returns the app's answer to it.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from typing import Any

from aiohttp import WSMsgType, web

from tests.support.fake_slack import FakeSlack
from tests.support.loopback import start_app


class FakeSocketMode:
    """The websocket side of Slack's Socket Mode."""

    def __init__(self) -> None:
        self.sockets: list[web.WebSocketResponse] = []
        self.acks: dict[str, dict[str, Any]] = {}
        self.connected = asyncio.Event()
        self.connections = 0
        self._changed = asyncio.Condition()
        self._ids = itertools.count(1)
        self._runner: web.AppRunner | None = None
        self.url = ""

    async def start(self) -> FakeSocketMode:
        """Listen on a free loopback port."""
        app = web.Application()
        app.router.add_get("/link", self._link)
        self._runner, port = await start_app(app)
        self.url = f"ws://127.0.0.1:{port}/link"
        return self

    async def close(self) -> None:
        """Close the sockets and stop the server."""
        for ws in list(self.sockets):
            await ws.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def attach(self, slack: FakeSlack) -> None:
        """Make ``slack`` answer ``apps.connections.open`` with this server's URL."""
        slack.connections_url = self.url

    async def _link(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        self.sockets.append(ws)
        self.connections += 1
        self.connected.set()
        await ws.send_str(json.dumps({"type": "hello", "num_connections": 1,
                                      "debug_info": {"host": "fake", "approximate_connection_time": 3600}}))
        async for message in ws:
            if message.type == WSMsgType.TEXT:
                ack = json.loads(message.data)
                async with self._changed:
                    self.acks[str(ack.get("envelope_id"))] = ack
                    self._changed.notify_all()
        self.sockets.remove(ws)
        return ws

    async def send(self, kind: str, payload: dict[str, Any], *, retry_attempt: int = 0,
                   envelope_id: str | None = None) -> str:
        """Deliver one envelope on the newest connection; return its envelope id."""
        await asyncio.wait_for(self.connected.wait(), 10)
        envelope_id = envelope_id or f"env-{next(self._ids)}-{time.time_ns()}"
        envelope = {"envelope_id": envelope_id, "type": kind, "payload": payload,
                    "accepts_response_payload": kind == "slash_commands"}
        if kind == "events_api":
            envelope["retry_attempt"] = retry_attempt
            envelope["retry_reason"] = "timeout" if retry_attempt else ""
        await self.sockets[-1].send_str(json.dumps(envelope))
        return envelope_id

    async def wait_ack(self, envelope_id: str, timeout: float = 5.0) -> dict[str, Any]:
        """The app's acknowledgement of ``envelope_id``."""
        async with asyncio.timeout(timeout), self._changed:
            await self._changed.wait_for(lambda: envelope_id in self.acks)
        return self.acks[envelope_id]


def mention_event(text: str, *, event_id: str, ts: str, user: str = "U1", channel: str = "C1",
                  team: str = "T1") -> dict[str, Any]:
    """An Events API ``app_mention`` callback as Slack puts it in an envelope's payload."""
    return {"token": "unused", "team_id": team, "api_app_id": "A1", "type": "event_callback",
            "event_id": event_id, "event_time": int(time.time()),
            "event": {"type": "app_mention", "user": user, "text": f"<@UBOT> {text}", "channel": channel,
                      "ts": ts, "event_ts": ts, "team": team}}


def button_click(action_id: str, response_id: str, *, user: str, channel: str, message_ts: str,
                 thread_ts: str, team: str = "T1") -> dict[str, Any]:
    """A ``block_actions`` payload: ``user`` clicked a feedback button under an answer."""
    return {"type": "block_actions", "team": {"id": team}, "user": {"id": user}, "api_app_id": "A1",
            "token": "unused", "trigger_id": "1.2.3", "channel": {"id": channel},
            "container": {"type": "message", "message_ts": message_ts, "channel_id": channel},
            "message": {"ts": message_ts, "thread_ts": thread_ts, "text": "answer"},
            "actions": [{"action_id": action_id, "block_id": "ragbot_feedback", "value": response_id,
                         "type": "button", "action_ts": str(time.time())}]}


def export_command(text: str, *, user: str, channel: str = "C1", team: str = "T1") -> dict[str, Any]:
    """The ``/ragbot-export`` slash command payload."""
    return {"token": "unused", "team_id": team, "channel_id": channel, "user_id": user,
            "command": "/ragbot-export", "text": text, "api_app_id": "A1", "trigger_id": "1.2.3",
            "response_url": "http://127.0.0.1:9/unused"}
