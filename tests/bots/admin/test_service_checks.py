"""``ragbot doctor``'s service checks against loopback fakes: reached, refused, broken, unreachable."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Awaitable, Callable

import discord
import pytest
from aiohttp import web
from pydantic import SecretStr

from bots.admin.services import check_services
from core.settings import Settings
from tests.support.loopback import start_app


@pytest.fixture
async def services() -> AsyncIterator[str]:
    """One loopback server playing Cohere (OK), Gemini (key refused), Qdrant (500) and Discord (OK)."""
    def answer(body: dict[str, str], status: int = 200) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def handler(request: web.Request) -> web.Response:
            return web.json_response(body, status=status)
        return handler

    app = web.Application()
    app.router.add_get("/v1/models", answer({"models": ""}))
    app.router.add_get("/v1beta/models/{model}", answer({"error": "bad key"}, 403))
    app.router.add_get("/collections", answer({"status": "boom"}, 500))
    app.router.add_get("/api/v10/users/@me", answer({"id": "1"}))
    runner, port = await start_app(app)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_each_configured_service_gets_one_line(services: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(discord.http.Route, "BASE", f"{services}/api/v10")
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None, cohere_api_key=SecretStr("k"), cohere_base_url=services,
        gemini_api_key=SecretStr("k"), gemini_base_url=services, qdrant_url=services,
        discord_token=SecretStr("t"),
    )
    checks = {c.name: c for c in await check_services(settings)}
    assert checks["cohere"].level == "OK" and checks["discord"].level == "OK"
    assert checks["gemini"].level == "FAIL" and "GEMINI_API_KEY was refused" in checks["gemini"].detail
    assert checks["qdrant"].level == "FAIL" and "HTTP 500" in checks["qdrant"].detail


async def test_an_unreachable_service_is_a_failure_with_a_fix() -> None:
    settings = Settings(_env_file=None, qdrant_url=f"http://127.0.0.1:{free_port()}")  # type: ignore[call-arg]
    [check] = await check_services(settings)
    assert check.level == "FAIL" and "not reached" in check.detail and check.fix
