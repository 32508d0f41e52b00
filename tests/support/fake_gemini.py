"""A scripted fake of the Gemini REST API (generateContent) on 127.0.0.1, for the real SDK."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from aiohttp import web

from core.answer.generators.gemini import TOOL_NAME
from tests.support.loopback import start_app

MODEL = "gemini-2.5-flash"
PATH = f"/v1beta/models/{MODEL}:generateContent"


def text_reply(text: str, finish: str = "STOP") -> dict[str, Any]:
    return {"candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": finish}]}


def call_reply(args: dict[str, Any], name: str = TOOL_NAME) -> dict[str, Any]:
    return {"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": name, "args": args}}]}, "finishReason": "STOP"}]}


class FakeGemini:
    """Scripted replies: a dict (JSON 200), (status, dict), a raw str body, or ("sleep", s)."""

    def __init__(self) -> None:
        self.script: list[Any] = []
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.headers: list[dict[str, str]] = []
        self.url = ""

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.paths.append(request.path)
        self.headers.append(dict(request.headers))
        self.requests.append(await request.json())
        item = self.script.pop(0) if len(self.script) > 1 else self.script[0]
        if isinstance(item, tuple) and item[0] == "sleep":
            await asyncio.sleep(item[1])
            return web.json_response(text_reply("too late [1]"))
        if isinstance(item, tuple):
            status, body = item
            return web.json_response(body, status=status)
        if isinstance(item, str):
            return web.Response(text=item, content_type="application/json")
        return web.json_response(item)


@asynccontextmanager
async def serving(server: FakeGemini) -> AsyncIterator[FakeGemini]:
    """Serve ``server`` on a free loopback port for the duration of the block."""
    app = web.Application()
    app.router.add_post("/{tail:.*}", server.handle)
    runner, port = await start_app(app)
    server.url = f"http://127.0.0.1:{port}"
    try:
        yield server
    finally:
        await runner.cleanup()
