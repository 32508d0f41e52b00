"""Slack adapter: answers @mentions in threads, DMs and thread follow-ups from the docs.

The adapter depends on ``bots.chat`` and ``Services`` only. Bolt acknowledges each
event before our listener runs (``process_before_response=False``), so Slack
gets its answer within 3 s however long the pipeline takes; the listener then
reacts with :eyes:, posts a placeholder in the thread, asks the AnswerService and
replaces the placeholder with the cited answer. Retried deliveries are recognised
by their ``event_id`` through ``services.events`` and answered once.

Run it alone with ``python -m bots.slack.app`` (Socket Mode when ``SLACK_APP_TOKEN``
is set, otherwise HTTP on ``PORT`` at ``/slack/events``); ``docs/slack.md`` walks
through the set-up. The listeners are in ``listeners.py``, serving in ``server.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from aiohttp import web
from pydantic import SecretStr
from slack_sdk.web.async_client import AsyncWebClient

from bots.chat.services import Services
from bots.slack import format as fmt
from bots.slack.listeners import EXPORT_COMMAND, SlackBot
from bots.slack.server import RagbotSlackApp, serve_http, serve_socket_mode, slack_web_app
from core.errors import ConfigurationError
from core.settings import Settings

__all__ = ["RagbotSlackApp", "build_slack_app", "check_slack_settings", "run_slack", "slack_web_app"]

log = logging.getLogger(__name__)

DEFAULT_API_URL = "https://slack.com/api/"


def _secret(value: SecretStr | None) -> str | None:
    return value.get_secret_value() if value is not None and value.get_secret_value() else None


def slack_api_base(settings: Settings) -> str:
    """The Web API base URL: ``SLACK_API_URL`` (for tests and proxies) or slack.com's, ending with ``/``."""
    url = settings.slack_api_url or DEFAULT_API_URL
    return url if url.endswith("/") else url + "/"


def check_slack_settings(settings: Settings) -> tuple[str, str | None]:
    """Check that the Slack credentials needed for the chosen mode are set.

    Args:
        settings: ragbot's settings.

    Returns:
        ``(bot_token, signing_secret)``; the secret is None in Socket Mode without one.

    Raises:
        ConfigurationError: SLACK_BOT_TOKEN missing, or SLACK_SIGNING_SECRET missing in HTTP mode.
    """
    token = _secret(settings.slack_bot_token)
    if not token:
        raise ConfigurationError("SLACK_BOT_TOKEN is not set: copy the Bot User OAuth Token (xoxb-...)")
    signing_secret = _secret(settings.slack_signing_secret)
    if not signing_secret and not _secret(settings.slack_app_token):
        raise ConfigurationError(
            "SLACK_SIGNING_SECRET is not set: HTTP mode needs it to verify Slack's requests "
            "(or set SLACK_APP_TOKEN to use Socket Mode)"
        )
    return token, signing_secret


def build_slack_app(*, services: Services) -> RagbotSlackApp:
    """Build the bolt AsyncApp with ragbot's listeners.

    Args:
        services: the answer service and stores; ``services.settings`` gives the tokens.

    Returns:
        A ``RagbotSlackApp`` (an AsyncApp) whose Web API client talks to
        ``SLACK_API_URL`` or slack.com.

    Raises:
        ConfigurationError: SLACK_BOT_TOKEN missing, or SLACK_SIGNING_SECRET missing in HTTP mode.
    """
    settings = services.settings
    token, signing_secret = check_slack_settings(settings)
    bot = SlackBot(services=services)
    # The client carries the token; giving bolt both would only make it log a warning.
    app = RagbotSlackApp(
        bot=bot,
        name="ragbot",
        signing_secret=signing_secret or "",
        client=AsyncWebClient(token=token, base_url=slack_api_base(settings)),
        process_before_response=False,
    )
    app.event("app_mention")(bot.on_app_mention)
    app.event("message")(bot.on_message)
    app.action(fmt.ACTION_UP)(bot.on_feedback)
    app.action(fmt.ACTION_DOWN)(bot.on_feedback)
    app.command(EXPORT_COMMAND)(bot.on_export)
    return app


async def run_slack(
    services: Services, *, host: str | None = None, report: Callable[[str, str], None] | None = None,
    health: Callable[[web.Request], Awaitable[web.Response]] | None = None,
) -> None:
    """Serve Slack until cancelled: Socket Mode with SLACK_APP_TOKEN, else HTTP on PORT.

    Answers in flight when it is cancelled are finished and delivered before it returns.

    Args:
        services: the answer service and stores (the caller closes them).
        host: interface for HTTP mode; default ``RAGBOT_SLACK_HOST``.
        report: hears the adapter's state (``ragbot serve``'s health board).
        health: answers ``GET /healthz`` in HTTP mode (default: ``{"ok": true}``).

    Raises:
        ConfigurationError: from ``build_slack_app``, or Slack refused a token (``check_tokens``).
    """
    from bots.slack.preflight import check_tokens

    app = build_slack_app(services=services)
    app_token = _secret(services.settings.slack_app_token)
    if report is not None:
        report("connecting", "Socket Mode" if app_token else "HTTP")
    await check_tokens(api_url=slack_api_base(services.settings), bot_token=_secret(
        services.settings.slack_bot_token) or "", app_token=app_token, report=report)
    if app_token:
        await serve_socket_mode(app, app_token, report=report)
    else:
        await serve_http(app, host=host or services.settings.slack_host, port=services.settings.port,
                         report=report, health=health)


async def _main() -> int:
    from core.settings import load_settings

    try:
        settings = load_settings()
        logging.basicConfig(level=settings.log_level.upper())
        check_slack_settings(settings)  # before opening stores: fail fast on a missing token
        try:
            from bots.runtime import build_services  # the real pipeline; heavy, so only here
        except ImportError as exc:
            raise ConfigurationError(f"ragbot's core is not available ({exc})") from exc
        services = await build_services(settings)
    except ConfigurationError as exc:
        print(f"ragbot: {exc}")
        return exc.exit_code
    try:
        await run_slack(services)
    except ConfigurationError as exc:
        print(f"ragbot: {exc}")
        return exc.exit_code
    finally:
        await services.aclose()
    return 0


def main() -> None:
    """Entry point of ``python -m bots.slack.app``."""
    with contextlib.suppress(KeyboardInterrupt):
        raise SystemExit(asyncio.run(_main()))


if __name__ == "__main__":
    main()
