"""Check Slack's tokens before serving, so a refused token is said at once with its fix.

Without this a revoked bot token is noticed at the first mention, and a bad app token makes
slack_sdk retry ``apps.connections.open`` forever, only in the log file. A network failure is
not a verdict on the token: it is reported and serving goes on (slack_sdk keeps retrying).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from core.errors import ConfigurationError

#: Slack's answers that mean the token itself is wrong (retrying cannot help).
REFUSED = frozenset({"invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired",
                     "not_allowed_token_type", "missing_scope", "no_permission"})
TIMEOUT = 10.0


async def _call(client: AsyncWebClient, method: str, token: str) -> dict[str, Any]:
    response = await client.api_call(method, headers={"Authorization": f"Bearer {token}"})
    return dict(response.data) if isinstance(response.data, dict) else {}


async def check_tokens(
    *, api_url: str, bot_token: str, app_token: str | None, report: Callable[[str, str], None] | None = None,
    session: aiohttp.ClientSession | None = None,
) -> str | None:
    """Call ``auth.test`` with the bot token and, in Socket Mode, ``apps.connections.open``.

    Returns:
        The bot's identity (``"ragbot in Acme"``), or None when Slack could not be reached.

    Raises:
        ConfigurationError: Slack refused a token; the message names it and what to do.
    """
    client = AsyncWebClient(base_url=api_url, timeout=int(TIMEOUT), session=session)
    checks = [("auth.test", bot_token, "SLACK_BOT_TOKEN", "the Bot User OAuth Token (xoxb-...)")]
    if app_token:
        checks.append(("apps.connections.open", app_token, "SLACK_APP_TOKEN",
                       "an app-level token (xapp-...) with the connections:write scope"))
    identity = None
    for method, token, variable, what in checks:
        try:
            data = await asyncio.wait_for(_call(client, method, token), TIMEOUT)
        except SlackApiError as exc:
            error = str(exc.response.get("error", exc))
            if error in REFUSED:
                raise ConfigurationError(f"Slack refused {variable} ({error}): set it to {what}") from None
            if report:
                report("connecting", f"{method} answered {error}; retrying")
            return None
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            if report:
                report("connecting", f"cannot reach Slack yet ({type(exc).__name__}: {exc}); retrying")
            return None
        if method == "auth.test":
            identity = f"{data.get('user', 'bot')} in {data.get('team', data.get('team_id', '?'))}"
    return identity
