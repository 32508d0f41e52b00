"""A fake Slack Web API on 127.0.0.1: records every call, answers like Slack, fails on demand.

Point ``SLACK_API_URL`` (``Settings.slack_api_url``) at ``FakeSlack.api_url`` and the
real ``AsyncWebClient`` talks to it. Only the methods ragbot uses are implemented;
anything else answers ``unknown_method`` and is recorded too.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.support.loopback import start_app

#: Form fields Slack accepts as JSON strings; parsed so tests can look inside.
_JSON_FIELDS = frozenset({"blocks", "attachments", "files", "metadata"})


@dataclass(frozen=True, slots=True)
class Call:
    """One request the fake received."""

    method: str
    params: dict[str, Any]
    at: float = field(default_factory=time.perf_counter)


class FakeSlack:
    """An aiohttp server imitating the parts of slack.com/api that ragbot calls.

    Args:
        team_id: workspace id returned by auth.test.
        bot_user_id: the bot's user id returned by auth.test.
        bot_id: the bot's bot id returned by auth.test.
    """

    def __init__(self, *, team_id: str = "T1", bot_user_id: str = "UBOT", bot_id: str = "BBOT") -> None:
        self.team_id = team_id
        self.bot_user_id = bot_user_id
        self.bot_id = bot_id
        self.calls: list[Call] = []
        #: method -> Slack error code to answer with (``{"ok": false, "error": code}``).
        self.fail: dict[str, str] = {}
        #: file_id -> uploaded bytes, and file_id -> filename given to getUploadURLExternal.
        self.uploads: dict[str, bytes] = {}
        self.filenames: dict[str, str] = {}
        #: Called with every Call as it is recorded (benchmarks match answers to events here).
        self.listeners: list[Callable[[Call], None]] = []
        self._ts = itertools.count(1)
        self._files = itertools.count(1)
        self._changed = asyncio.Condition()
        self._runner: web.AppRunner | None = None
        self.root = ""
        #: What ``apps.connections.open`` answers (tests/support/fake_socket_mode.py sets it).
        self.connections_url: str | None = None

    @property
    def api_url(self) -> str:
        """Base URL for AsyncWebClient (ends with a slash)."""
        return f"{self.root}/api/"

    async def start(self) -> FakeSlack:
        """Listen on a free loopback port."""
        app = web.Application()
        app.router.add_post("/api/{method}", self._api)
        app.router.add_post("/upload/{file_id}", self._upload)
        self._runner, port = await start_app(app)
        self.root = f"http://127.0.0.1:{port}"
        return self

    async def close(self) -> None:
        """Stop the server."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # ------------------------------------------------------------------ inspection

    def calls_to(self, method: str) -> list[dict[str, Any]]:
        """Params of every call to ``method``, in order."""
        return [c.params for c in self.calls if c.method == method]

    def methods(self) -> list[str]:
        """Method names of every call, in order."""
        return [c.method for c in self.calls]

    async def wait_for(
        self, method: str, count: int = 1, *, where: Callable[[dict[str, Any]], bool] | None = None,
        timeout: float = 5.0,
    ) -> list[dict[str, Any]]:
        """Wait until ``method`` was called ``count`` times (matching ``where``); return those calls.

        Raises:
            TimeoutError: naming the method and what was received instead.
        """
        def matching() -> list[dict[str, Any]]:
            return [p for p in self.calls_to(method) if where is None or where(p)]

        try:
            async with asyncio.timeout(timeout):
                async with self._changed:
                    await self._changed.wait_for(lambda: len(matching()) >= count)
        except TimeoutError:
            raise TimeoutError(
                f"waited {timeout} s for {count} call(s) to {method}; got {len(matching())}; "
                f"calls so far: {self.methods()}"
            ) from None
        return matching()

    async def settle(self, quiet: float = 0.05) -> None:
        """Return once no call arrived for ``quiet`` seconds (to assert that nothing more comes)."""
        seen = -1
        while seen != len(self.calls):
            seen = len(self.calls)
            await asyncio.sleep(quiet)

    # ------------------------------------------------------------------ server

    async def _record(self, method: str, params: dict[str, Any]) -> None:
        call = Call(method, params)
        self.calls.append(call)
        for listener in self.listeners:
            listener(call)
        async with self._changed:
            self._changed.notify_all()

    async def _params(self, request: web.Request) -> dict[str, Any]:
        params: dict[str, Any] = dict(request.query)
        if request.content_type == "application/json":
            params.update(await request.json())
        else:
            form = await request.post()
            params.update({k: v for k, v in form.items() if isinstance(v, str)})
        for key in _JSON_FIELDS & params.keys():
            if isinstance(params[key], str):
                params[key] = json.loads(params[key])
        return params

    def _next_ts(self) -> str:
        return f"{int(time.time())}.{next(self._ts):06d}"

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        params = await self._params(request)
        params["_token"] = request.headers.get("Authorization", "").removeprefix("Bearer ")
        await self._record(method, params)
        if method in self.fail:
            return web.json_response({"ok": False, "error": self.fail[method]})
        handler = _RESPONSES.get(method)
        if handler is None:
            return web.json_response({"ok": False, "error": "unknown_method"})
        return web.json_response({"ok": True, **handler(self, params)})  # a handler may say "ok": false

    async def _upload(self, request: web.Request) -> web.Response:
        file_id = request.match_info["file_id"]
        data = await request.read()
        self.uploads[file_id] = data
        await self._record("upload", {"file_id": file_id, "size": len(data)})
        if "upload" in self.fail:
            return web.Response(status=500, text=self.fail["upload"])
        return web.Response(text=f"OK - {len(data)}")

    def _auth_test(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"url": "https://test.slack.invalid/", "team": "Test", "user": "ragbot",
                "team_id": self.team_id, "user_id": self.bot_user_id, "bot_id": self.bot_id}

    def _post_message(self, params: dict[str, Any]) -> dict[str, Any]:
        ts = self._next_ts()
        return {"channel": params.get("channel"), "ts": ts,
                "message": {"type": "message", "text": params.get("text", ""), "ts": ts,
                            "user": self.bot_user_id, "bot_id": self.bot_id}}

    def _update(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"channel": params.get("channel"), "ts": params.get("ts"), "text": params.get("text", "")}

    def _ephemeral(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"message_ts": self._next_ts()}

    def _open(self, params: dict[str, Any]) -> dict[str, Any]:
        users = str(params.get("users", ""))
        return {"channel": {"id": "D" + users.split(",")[0]}}

    def _upload_url(self, params: dict[str, Any]) -> dict[str, Any]:
        file_id = f"F{next(self._files):05d}"
        self.filenames[file_id] = str(params.get("filename"))
        return {"file_id": file_id, "upload_url": f"{self.root}/upload/{file_id}"}

    def _connections_open(self, params: dict[str, Any]) -> dict[str, Any]:
        if not params["_token"].startswith("xapp-") or self.connections_url is None:
            return {"ok": False, "error": "invalid_auth"}
        return {"url": self.connections_url}

    def _complete(self, params: dict[str, Any]) -> dict[str, Any]:
        files = params.get("files") or []
        return {"files": [{"id": f["id"], "title": f.get("title"), "name": self.filenames.get(f["id"])}
                          for f in files]}


_RESPONSES: dict[str, Callable[[FakeSlack, dict[str, Any]], dict[str, Any]]] = {
    "auth.test": FakeSlack._auth_test,
    "chat.postMessage": FakeSlack._post_message,
    "chat.update": FakeSlack._update,
    "chat.postEphemeral": FakeSlack._ephemeral,
    "reactions.add": lambda fake, params: {},
    "reactions.remove": lambda fake, params: {},
    "conversations.open": FakeSlack._open,
    "files.getUploadURLExternal": FakeSlack._upload_url,
    "files.completeUploadExternal": FakeSlack._complete,
    "apps.connections.open": FakeSlack._connections_open,
}
