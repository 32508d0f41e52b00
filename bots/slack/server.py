"""Serving Slack over HTTP (``/slack/events``, ``/healthz``) or Socket Mode; both drain at shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import aiohttp
from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest

from bots.chat.loglimit import LimitedLog
from bots.slack.guard import MAX_BODY, Rejected, check_signature, parse_body
from bots.slack.listeners import SlackBot

log = logging.getLogger(__name__)
#: Refused requests come from outside: their log lines are rate- and size-limited.
refusals = LimitedLog(log)

EVENTS_PATH = "/slack/events"
HEALTH_PATH = "/healthz"
#: Seconds before a Socket Mode connection that is not up is reported on the console.
SOCKET_MODE_WARN_AFTER = 15.0


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


def _signing_secret(bolt_app: AsyncApp) -> str:
    if isinstance(bolt_app, RagbotSlackApp):
        secret = bolt_app.bot.services.settings.slack_signing_secret
        if secret is not None:
            return secret.get_secret_value()
    return str(getattr(bolt_app, "_signing_secret", "") or "")


async def _refuse(request: web.Request, rejected: Rejected) -> web.Response:
    refusals.warning(f"refused a Slack request from {request.remote}: HTTP {rejected.status}, "
                     f"{rejected.reason}")
    return web.json_response({"ok": False, "error": rejected.reason}, status=rejected.status)


async def dispatch(bolt_app: AsyncApp, request: web.Request) -> web.Response:
    """Check the signature, then the body, then hand the request to bolt; never a 500 for a bad body."""
    try:
        body = await request.read()
    except web.HTTPRequestEntityTooLarge:
        return await _refuse(request, Rejected(413, f"body over {MAX_BODY} bytes"))
    secret = _signing_secret(bolt_app)
    if secret and (rejected := check_signature(secret, request.headers, body)) is not None:
        return await _refuse(request, rejected)
    parsed = parse_body(body, request.headers.get("Content-Type"))
    if isinstance(parsed, Rejected):
        return await _refuse(request, parsed)
    text, _ = parsed
    try:
        bolt_request = AsyncBoltRequest(body=text, query=request.query_string,
                                        headers=dict(request.headers))
        bolt_response = await bolt_app.async_dispatch(bolt_request)
    except Exception as exc:  # a signed body of a shape bolt cannot read; not our listeners' failure
        return await _refuse(request, Rejected(400, f"unreadable request: {type(exc).__name__}: {exc}"))
    return await to_aiohttp_response(bolt_response)


def slack_web_app(
    bolt_app: AsyncApp, *, health: Callable[[web.Request], Awaitable[web.Response]] | None = None
) -> web.Application:
    """An aiohttp application serving ``POST /slack/events`` and ``GET /healthz``.

    Args:
        bolt_app: the app from ``build_slack_app``; ``dispatch`` checks each request's signature
            and body before bolt sees it (bolt checks the signature again).

    Returns:
        The aiohttp application (``ragbot serve`` can mount it or run it as is).
    """

    async def events(request: web.Request) -> web.Response:
        return await dispatch(bolt_app, request)

    async def healthz(request: web.Request) -> web.Response:
        if health is not None:  # `ragbot serve`'s board: every adapter's state
            return await health(request)
        return web.json_response({"ok": True})

    async def drain(_: web.Application) -> None:
        if isinstance(bolt_app, RagbotSlackApp):
            await bolt_app.bot.drain()

    async def session(_: web.Application) -> AsyncIterator[None]:
        async with shared_session(bolt_app):
            yield

    web_app = web.Application(client_max_size=MAX_BODY)
    web_app.router.add_post(EVENTS_PATH, events)
    web_app.router.add_get(HEALTH_PATH, healthz)
    # Shutdown hooks run before cleanup contexts close, so answers in flight can finish.
    web_app.on_shutdown.append(drain)
    web_app.cleanup_ctx.append(session)
    return web_app


async def serve_http(
    bolt_app: AsyncApp, *, host: str, port: int, report: Callable[[str, str], None] | None = None,
    health: Callable[[web.Request], Awaitable[web.Response]] | None = None,
) -> None:
    """Serve ``slack_web_app`` on ``host:port`` until cancelled; answers in flight finish first."""
    runner = web.AppRunner(slack_web_app(bolt_app, health=health), access_log=None)
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    log.warning("ragbot Slack bot listening on http://%s:%d%s", host, port, EVENTS_PATH)
    if report is not None:
        report("connected", f"HTTP on {host}:{runner.addresses[0][1]}{EVENTS_PATH}")
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


def _to_console(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


async def watch_connection(
    is_connected: Callable[[], Awaitable[bool]], *, warn_after: float = SOCKET_MODE_WARN_AFTER,
    console: Callable[[str], None] = _to_console, poll: float = 0.25,
) -> None:
    """Say on the console when Socket Mode is not up after ``warn_after`` s, and again once it is.

    slack_sdk retries a failed connection forever and reports each try only in the log file;
    an operator watching ``ragbot serve`` must see that the bot is not connected.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + warn_after
    while not await is_connected():
        if loop.time() >= deadline:
            break
        await asyncio.sleep(poll)
    else:
        return
    message = (f"ragbot: Slack Socket Mode is not connected after {warn_after:g} s; still retrying. "
               "Check SLACK_APP_TOKEN (xapp-..., with connections:write) and outbound HTTPS access")
    log.error("%s", message)
    console(message)
    while True:  # slack_sdk offers no event to wait on: poll
        if await is_connected():
            break
        await asyncio.sleep(max(poll, 1.0))
    log.warning("Slack Socket Mode connected")
    console("ragbot: Slack Socket Mode connected")


async def report_connection(
    is_connected: Callable[[], Awaitable[bool]], report: Callable[[str, str], None], *, poll: float = 0.5
) -> None:
    """Tell ``report`` each time the Socket Mode connection comes up or goes down."""
    up: bool | None = None
    while True:
        now = await is_connected()
        if now != up:
            report("connected" if now else ("reconnecting" if up else "connecting"), "Socket Mode")
            up = now
        await asyncio.sleep(poll)


async def serve_socket_mode(
    bolt_app: RagbotSlackApp, app_token: str, *, warn_after: float = SOCKET_MODE_WARN_AFTER,
    console: Callable[[str], None] = _to_console, report: Callable[[str, str], None] | None = None,
) -> None:
    """Take events over Socket Mode until cancelled; answers in flight finish before the session closes.

    ``report`` (``ragbot serve``'s health board) hears "connected" / "reconnecting" as they happen.
    """
    from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

    handler = AsyncSocketModeHandler(bolt_app, app_token)
    log.warning("ragbot Slack bot connecting in Socket Mode")
    watcher = asyncio.create_task(watch_connection(handler.client.is_connected, warn_after=warn_after,
                                                   console=console))
    reporter = asyncio.create_task(report_connection(handler.client.is_connected, report)) if report else None
    async with shared_session(bolt_app):
        try:
            await handler.start_async()
        finally:
            watcher.cancel()
            if reporter is not None:
                reporter.cancel()
            await handler.close_async()
            await bolt_app.bot.drain()
