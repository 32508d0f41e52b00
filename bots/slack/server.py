"""Serving Slack over HTTP (``/slack/events``, ``/healthz``) or Socket Mode; both drain at shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.async_app import AsyncApp

from bots.slack.listeners import SlackBot

log = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"
HEALTH_PATH = "/healthz"


class RagbotSlackApp(AsyncApp):
    """Bolt's AsyncApp carrying ragbot's listeners as ``bot`` (to drain them at shutdown)."""

    def __init__(self, *, bot: SlackBot, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.bot = bot


@contextlib.asynccontextmanager
async def shared_session(bolt_app: AsyncApp) -> AsyncIterator[None]:
    """Give the app's Web API client one connection pool for its lifetime.

    Without it slack_sdk opens a new aiohttp session (and connection) for every
    call; bolt copies ``client.session`` into each request's client, so setting it
    here covers every listener.

    Args:
        bolt_app: the app whose ``client`` should share the session.
    """
    if bolt_app.client.session is not None:
        yield
        return
    session = aiohttp.ClientSession()
    bolt_app.client.session = session
    try:
        yield
    finally:
        bolt_app.client.session = None
        await session.close()


def slack_web_app(bolt_app: AsyncApp) -> web.Application:
    """An aiohttp application serving ``POST /slack/events`` and ``GET /healthz``.

    Args:
        bolt_app: the app from ``build_slack_app``; bolt verifies each request's signature.

    Returns:
        The aiohttp application (``ragbot serve`` can mount it or run it as is).
    """

    async def events(request: web.Request) -> web.Response:
        bolt_response = await bolt_app.async_dispatch(await to_bolt_request(request))
        return await to_aiohttp_response(bolt_response)

    async def healthz(request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    async def drain(_: web.Application) -> None:
        if isinstance(bolt_app, RagbotSlackApp):
            await bolt_app.bot.drain()

    async def session(_: web.Application) -> AsyncIterator[None]:
        async with shared_session(bolt_app):
            yield

    web_app = web.Application()
    web_app.router.add_post(EVENTS_PATH, events)
    web_app.router.add_get(HEALTH_PATH, healthz)
    # Shutdown hooks run before cleanup contexts close, so answers in flight can finish.
    web_app.on_shutdown.append(drain)
    web_app.cleanup_ctx.append(session)
    return web_app


async def serve_http(bolt_app: AsyncApp, *, host: str, port: int) -> None:
    """Serve ``slack_web_app`` on ``host:port`` until cancelled; answers in flight finish first."""
    runner = web.AppRunner(slack_web_app(bolt_app), access_log=None)
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    log.warning("ragbot Slack bot listening on http://%s:%d%s", host, port, EVENTS_PATH)
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


async def serve_socket_mode(bolt_app: RagbotSlackApp, app_token: str) -> None:
    """Take events over Socket Mode until cancelled; answers in flight finish before the session closes."""
    from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

    handler = AsyncSocketModeHandler(bolt_app, app_token)
    log.warning("ragbot Slack bot connecting in Socket Mode")
    async with shared_session(bolt_app):
        try:
            await handler.start_async()
        finally:
            await handler.close_async()
            await bolt_app.bot.drain()
