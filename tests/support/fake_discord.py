"""A fake Discord on 127.0.0.1: the REST routes ragbot's bot uses and a gateway websocket.

The real ``discord.py`` client talks to it unchanged once two class attributes are
pointed here (``FakeDiscord.patch``): ``discord.http.Route.BASE`` for REST and
``DiscordWebSocket.DEFAULT_GATEWAY`` for the gateway (discord.py 2.7's plain
``Client.connect`` uses that constant and does not call ``GET /gateway/bot``; the
route is served anyway for clients that do).

Every reply has ``Content-Type: application/json`` exactly: discord.py parses the
body as JSON only on that exact header value.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import discord
import discord.gateway
import discord.http
import yarl
from aiohttp import web

from tests.support.loopback import start_app

APP_ID = 1_100_000_000_000_000_001
BOT_ID = APP_ID
GUILD_ID = 1_100_000_000_000_000_100
CHANNEL_ID = 1_100_000_000_000_000_200
THREAD_ID = 1_100_000_000_000_000_300
USER_ID = 1_100_000_000_000_000_400
ADMIN_ROLE_ID = 1_100_000_000_000_000_500
#: What the bot may do in the fake guild: Send Messages, Embed Links, Attach Files,
#: Read Message History, Create Public Threads, Send Messages in Threads.
APP_PERMISSIONS = (1 << 11) | (1 << 14) | (1 << 15) | (1 << 16) | (1 << 35) | (1 << 38) | (1 << 10)
#: Obviously fake; never a real-looking token.
FAKE_TOKEN = "fake-discord-token-for-tests"


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _json(data: Any, status: int = 200) -> web.Response:
    # web.json_response would say "application/json; charset=utf-8", which discord.py reads as text.
    return web.Response(body=json.dumps(data).encode(), status=status,
                        headers={"Content-Type": "application/json"})


def user_payload(user_id: int, name: str, *, bot: bool = False) -> dict[str, Any]:
    """A Discord user object."""
    return {"id": str(user_id), "username": name, "discriminator": "0", "global_name": name,
            "avatar": None, "bot": bot, "public_flags": 0}


def text_channel_payload(channel_id: int = CHANNEL_ID, *, name: str = "general") -> dict[str, Any]:
    """A guild text channel object."""
    return {"id": str(channel_id), "type": 0, "guild_id": str(GUILD_ID), "name": name, "position": 0,
            "permission_overwrites": [], "nsfw": False, "parent_id": None, "topic": None,
            "last_message_id": None, "rate_limit_per_user": 0}


def thread_payload(thread_id: int, *, parent_id: int = CHANNEL_ID, name: str = "thread") -> dict[str, Any]:
    """A public thread object."""
    return {"id": str(thread_id), "type": 11, "guild_id": str(GUILD_ID), "parent_id": str(parent_id),
            "owner_id": str(BOT_ID), "name": name, "message_count": 0, "member_count": 1,
            "rate_limit_per_user": 0, "flags": 0, "last_message_id": None,
            "thread_metadata": {"archived": False, "auto_archive_duration": 1440,
                                "archive_timestamp": _now(), "locked": False}}


@dataclass
class Call:
    """One REST request the bot made."""

    method: str
    path: str
    query: dict[str, str]
    json: Any = None
    files: dict[str, bytes] = field(default_factory=dict)


class FakeDiscord:
    """REST and gateway of a one-guild Discord, recording everything the bot sends.

    Args:
        guild_ids: guilds the bot is in (READY lists them, GUILD_CREATE follows).
        thread_status: HTTP status for starting a thread; 403 simulates a missing permission.
        upload_status: HTTP status for a follow-up carrying files; 403 simulates a refused upload.
    """

    def __init__(self, *, guild_ids: tuple[int, ...] = (GUILD_ID,), thread_status: int = 200,
                 upload_status: int = 200) -> None:
        self.guild_ids = guild_ids
        self.thread_status = thread_status
        self.upload_status = upload_status
        self.calls: list[Call] = []
        self.messages: dict[int, dict[str, Any]] = {}
        self.callbacks: dict[int, dict[str, Any]] = {}
        self.followups: dict[str, list[int]] = {}
        self.threads: dict[int, dict[str, Any]] = {}
        self.commands: dict[str, list[dict[str, Any]]] = {}
        self._token_channel: dict[str, int] = {}
        self.identified = asyncio.Event()
        self.ready_sent = asyncio.Event()
        self._ids = itertools.count(1_200_000_000_000_000_000)
        self._seq = 0
        self._ws: web.WebSocketResponse | None = None
        self._runner: web.AppRunner | None = None
        self._changed = asyncio.Condition()
        self.port = 0

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> FakeDiscord:
        """Serve on 127.0.0.1 on a free port."""
        app = web.Application()
        app.router.add_get("/ws/", self._gateway)
        app.router.add_route("*", "/api/v10/{tail:.*}", self._rest)
        self._runner, self.port = await start_app(app, handle_signals=False)
        return self

    async def close(self) -> None:
        """Stop serving; closes the gateway socket first."""
        if self._ws is not None and not self._ws.closed:
            await self._ws.close()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def api_base(self) -> str:
        """What ``Route.BASE`` must be."""
        return f"http://127.0.0.1:{self.port}/api/v10"

    @property
    def gateway_url(self) -> str:
        """The websocket URL."""
        return f"ws://127.0.0.1:{self.port}/ws/"

    def patch(self, monkeypatch: Any) -> None:
        """Point discord.py's REST base and default gateway at this fake (test-scoped)."""
        monkeypatch.setattr(discord.http.Route, "BASE", self.api_base)
        monkeypatch.setattr(discord.gateway.DiscordWebSocket, "DEFAULT_GATEWAY", yarl.URL(self.gateway_url))

    def new_id(self) -> int:
        """A fresh snowflake."""
        return next(self._ids)

    # ------------------------------------------------------------------ waiting

    async def wait_for(self, predicate: Callable[[], Any], timeout: float = 10.0) -> Any:
        """Wait until ``predicate()`` is truthy (re-checked after every request); return its value."""
        async with asyncio.timeout(timeout), self._changed:
            while not (value := predicate()):
                await self._changed.wait()
            return value

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    # ------------------------------------------------------------------ gateway

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        self._ws = ws
        await ws.send_json({"op": 10, "d": {"heartbeat_interval": 41_250}})
        async for msg in ws:
            data = json.loads(msg.data)
            if data["op"] == 1:
                await ws.send_json({"op": 11})
            elif data["op"] == 2:
                self.identified.set()
                await self._send_ready()
        return ws

    async def dispatch(self, event: str, data: dict[str, Any]) -> None:
        """Send one DISPATCH event over the gateway."""
        assert self._ws is not None, "no gateway connection"
        self._seq += 1
        await self._ws.send_json({"op": 0, "t": event, "s": self._seq, "d": data})

    async def _send_ready(self) -> None:
        await self.dispatch("READY", {
            "v": 10, "user": user_payload(BOT_ID, "ragbot", bot=True),
            "guilds": [{"id": str(g), "unavailable": True} for g in self.guild_ids],
            "session_id": "fake-session", "resume_gateway_url": self.gateway_url,
            "application": {"id": str(APP_ID), "flags": 0}, "private_channels": [],
        })
        for gid in self.guild_ids:
            await self.dispatch("GUILD_CREATE", {
                "id": str(gid), "name": "Fake guild", "owner_id": str(USER_ID), "icon": None,
                "roles": [{"id": str(gid), "name": "@everyone", "permissions": "0", "position": 0,
                           "color": 0, "hoist": False, "managed": False, "mentionable": False},
                          {"id": str(ADMIN_ROLE_ID), "name": "ragbot-admins", "permissions": "0",
                           "position": 1, "color": 0, "hoist": False, "managed": False,
                           "mentionable": True}],
                "channels": [text_channel_payload()], "threads": [], "members": [], "emojis": [],
                "stickers": [], "features": [], "member_count": 2, "large": False,
                "unavailable": False, "joined_at": _now(), "voice_states": [], "presences": [],
                "stage_instances": [], "guild_scheduled_events": [], "soundboard_sounds": [],
            })
        self.ready_sent.set()

    # ------------------------------------------------------------------ interactions to send

    def slash_payload(
        self,
        name: str,
        options: dict[str, Any],
        *,
        user_id: int = USER_ID,
        roles: tuple[int, ...] = (),
        channel: dict[str, Any] | None = None,
        member_permissions: int = 0,
        upload_limit: int = 10 * 1024 * 1024,
    ) -> dict[str, Any]:
        """An APPLICATION_COMMAND interaction as Discord would deliver it (``upload_limit`` in bytes)."""
        types = {bool: 5, int: 4, str: 3}
        channel = channel or text_channel_payload()
        data: dict[str, Any] = {
            "id": str(self.new_id()), "name": name, "type": 1,
            "options": [{"name": k, "type": types[type(v)], "value": v} for k, v in options.items()],
        }
        if f"/guilds/{GUILD_ID}/commands" in " ".join(self.commands):
            data["guild_id"] = str(GUILD_ID)
        payload = self._interaction(2, data, user_id=user_id, roles=roles, channel=channel,
                                    member_permissions=member_permissions)
        payload["attachment_size_limit"] = upload_limit
        return payload

    def click_payload(self, message_id: int, custom_id: str, *, user_id: int = USER_ID) -> dict[str, Any]:
        """A MESSAGE_COMPONENT interaction: ``user_id`` clicked ``custom_id`` on a stored message."""
        message = self.messages[message_id]
        channel = self.threads.get(int(message["channel_id"])) or text_channel_payload()
        payload = self._interaction(3, {"custom_id": custom_id, "component_type": 2},
                                    user_id=user_id, roles=(), channel=channel, member_permissions=0)
        payload["message"] = message
        return payload

    def _interaction(
        self, kind: int, data: dict[str, Any], *, user_id: int, roles: tuple[int, ...],
        channel: dict[str, Any], member_permissions: int,
    ) -> dict[str, Any]:
        token = f"itoken-{self.new_id()}"
        self._token_channel[token] = int(channel["id"])
        return {
            "id": str(self.new_id()), "application_id": str(APP_ID), "type": kind,
            "token": token, "version": 1, "guild_id": str(GUILD_ID),
            "channel_id": channel["id"], "channel": channel,
            "member": {"user": user_payload(user_id, f"user{user_id % 1000}"),
                       "roles": [str(r) for r in roles], "joined_at": _now(), "deaf": False,
                       "mute": False, "flags": 0, "permissions": str(member_permissions)},
            "app_permissions": str(APP_PERMISSIONS), "locale": "en-US", "guild_locale": "en-US",
            "entitlements": [], "authorizing_integration_owners": {"0": str(GUILD_ID)}, "context": 0,
            "attachment_size_limit": 10 * 1024 * 1024, "data": data,
        }

    async def interact(self, payload: dict[str, Any]) -> int:
        """Deliver an interaction over the gateway; return its id."""
        await self.dispatch("INTERACTION_CREATE", payload)
        return int(payload["id"])

    # ------------------------------------------------------------------ what the bot sent

    def calls_to(self, method: str, fragment: str) -> list[Call]:
        """Recorded calls whose path contains ``fragment``."""
        return [c for c in self.calls if c.method == method and fragment in c.path]

    def messages_for(self, payload: dict[str, Any]) -> list[dict[str, Any]]:
        """Messages posted through the follow-up webhook of this interaction, in order."""
        return [self.messages[m] for m in self.followups.get(payload["token"], [])]

    # ------------------------------------------------------------------ REST

    async def _rest(self, request: web.Request) -> web.Response:
        path = "/" + request.match_info["tail"]
        body: Any = None
        files: dict[str, bytes] = {}
        if request.content_type == "application/json":
            body = await request.json()
        elif request.content_type.startswith("multipart/"):
            reader = await request.multipart()
            async for part in reader:
                raw = await part.read()  # type: ignore[union-attr]
                if part.name == "payload_json":  # type: ignore[union-attr]
                    body = json.loads(raw)
                else:
                    files[part.filename or str(part.name)] = bytes(raw)  # type: ignore[union-attr]
        call = Call(request.method, path, dict(request.query), body, files)
        self.calls.append(call)
        try:
            return self._route(call)
        finally:
            await self._notify()

    def _route(self, call: Call) -> web.Response:
        parts = call.path.strip("/").split("/")
        m, p = call.method, parts
        if m == "GET" and p == ["gateway", "bot"]:
            return _json({"url": self.gateway_url, "shards": 1, "session_start_limit": {
                "total": 1000, "remaining": 1000, "reset_after": 0, "max_concurrency": 1}})
        if m == "GET" and p == ["gateway"]:
            return _json({"url": self.gateway_url})
        if m == "GET" and p == ["users", "@me"]:
            return _json(user_payload(BOT_ID, "ragbot", bot=True))
        if m == "GET" and p[-2:] == ["applications", "@me"]:
            return _json({"id": str(APP_ID), "name": "ragbot", "description": "", "icon": None,
                          "bot_public": False, "bot_require_code_grant": False, "verify_key": "00",
                          "owner": user_payload(USER_ID, "owner"), "flags": 0, "summary": "",
                          "interactions_endpoint_url": None})
        if m == "PUT" and p[0] == "applications" and p[-1] == "commands":
            self.commands[call.path] = call.json
            return _json([{**c, "id": str(self.new_id()), "application_id": str(APP_ID), "version": "1",
                           "default_member_permissions": c.get("default_member_permissions")}
                          for c in call.json])
        if m == "POST" and p[0] == "interactions" and p[-1] == "callback":
            return self._callback(call, int(p[1]))
        if p[0] == "webhooks":
            return self._webhook(call, token=p[2], rest=p[3:])
        if m == "POST" and p[0] == "channels" and p[2:3] == ["messages"] and p[-1] == "threads":
            return self._start_thread(call, channel_id=int(p[1]), message_id=int(p[3]))
        if m == "POST" and p[0] == "channels" and p[2:] == ["messages"]:
            message = self._store_message(int(p[1]), call.json or {}, webhook=False)
            return _json(message)
        return _json({"message": f"fake Discord has no route {m} {call.path}", "code": 0}, status=404)

    def _callback(self, call: Call, interaction_id: int) -> web.Response:
        # discord.py 2.7 sends ?with_response=1 and reads an InteractionCallback back.
        self.callbacks[interaction_id] = call.json
        kind = call.json["type"]
        flags = (call.json.get("data") or {}).get("flags", 0)
        result: dict[str, Any] = {"interaction": {
            "id": str(interaction_id), "type": 2,
            "response_message_loading": kind == 5,
            "response_message_ephemeral": bool(flags & 64),
        }}
        if kind == 4:
            message = self._store_message(CHANNEL_ID, call.json.get("data") or {}, webhook=True)
            result["interaction"]["response_message_id"] = message["id"]
            result["resource"] = {"type": 4, "message": message}
        return _json(result)

    def _webhook(self, call: Call, *, token: str, rest: list[str]) -> web.Response:
        if call.method == "POST" and not rest:
            if call.files and self.upload_status != 200:
                return _json({"message": "Missing Permissions", "code": 50013}, status=self.upload_status)
            data = dict(call.json or {})
            if call.files:
                data["attachments"] = [
                    {"id": str(self.new_id()), "filename": name, "size": len(raw), "url": f"fake://{name}",
                     "proxy_url": f"fake://{name}"} for name, raw in call.files.items()]
            message = self._store_message(self._token_channel.get(token, CHANNEL_ID), data, webhook=True)
            self.followups.setdefault(token, []).append(int(message["id"]))
            return _json(message)
        if call.method == "PATCH" and rest[:1] == ["messages"]:
            target = rest[1]
            ids = self.followups.get(token, [])
            message_id = ids[0] if target == "@original" and ids else int(target)
            message = self.messages[message_id]
            message.update({k: v for k, v in (call.json or {}).items() if k != "allowed_mentions"})
            message["content"] = message.get("content") or ""
            message["edited_timestamp"] = _now()
            message.setdefault("edits", []).append(call.json)
            return _json({k: v for k, v in message.items() if k != "edits"})
        if call.method == "DELETE":
            return web.Response(status=204)
        return _json({"message": "unknown webhook route", "code": 0}, status=404)

    def _start_thread(self, call: Call, *, channel_id: int, message_id: int) -> web.Response:
        if self.thread_status != 200:
            return _json({"message": "Missing Permissions", "code": 50013}, status=self.thread_status)
        # Discord gives a thread started from a message the message's id.
        thread = thread_payload(message_id, parent_id=channel_id, name=call.json["name"])
        self.threads[message_id] = thread
        return _json(thread)

    def _store_message(self, channel_id: int, data: dict[str, Any], *, webhook: bool) -> dict[str, Any]:
        message_id = self.new_id()
        message = {
            "id": str(message_id), "channel_id": str(channel_id), "type": 0,
            "content": data.get("content") or "", "embeds": data.get("embeds", []),
            "components": data.get("components", []), "attachments": data.get("attachments", []),
            "author": user_payload(BOT_ID, "ragbot", bot=True), "timestamp": _now(),
            "edited_timestamp": None, "tts": False, "mention_everyone": False, "mentions": [],
            "mention_roles": [], "pinned": False, "flags": data.get("flags", 0),
            "allowed_mentions": data.get("allowed_mentions"),
        }
        if webhook:
            message["webhook_id"] = str(APP_ID)
            message["application_id"] = str(APP_ID)
        self.messages[message_id] = message
        return message
