"""``ragbot doctor``'s service checks: each configured service reached once, with a short timeout.

A 2xx answer is OK; 401/403 means the key or token was refused; anything else, or no answer
within ``SERVICE_TIMEOUT`` seconds, is a failure naming what happened. Base URLs come from the
settings (``SLACK_API_URL``, ``COHERE_BASE_URL``, ``GEMINI_BASE_URL``, ``QDRANT_URL``), so the
checks go wherever the bot itself would.
"""

from __future__ import annotations

from typing import Any

import aiohttp
from pydantic import SecretStr

from core.settings import Settings

SERVICE_TIMEOUT = 5.0
COHERE_URL = "https://api.cohere.com"
GEMINI_URL = "https://generativelanguage.googleapis.com"


async def http_call(url: str, *, headers: dict[str, str], method: str = "GET") -> tuple[int, Any]:
    """``(status, JSON body or None)`` of one request with the service timeout."""
    timeout = aiohttp.ClientTimeout(total=SERVICE_TIMEOUT)
    async with aiohttp.ClientSession(timeout=timeout) as http, \
            http.request(method, url, headers=headers) as r:
        try:
            body = await r.json(content_type=None)
        except ValueError:
            body = None
        return r.status, body


def _secret(value: SecretStr | None) -> str:
    return value.get_secret_value() if value is not None else ""


async def _probe(name: str, url: str, *, headers: dict[str, str], method: str = "GET",
                 variable: str) -> Any:
    from bots.admin.doctor import Check

    try:
        status, body = await http_call(url, headers=headers, method=method)
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        return Check(name, "FAIL", f"{url} not reached: {type(exc).__name__} {exc}".strip(),
                     "check the network, a proxy, or the base URL setting")
    if status in (401, 403) or (isinstance(body, dict) and body.get("ok") is False
                                and body.get("error") in {"invalid_auth", "not_authed", "token_revoked"}):
        error = body.get("error") if isinstance(body, dict) and body.get("error") else f"HTTP {status}"
        return Check(name, "FAIL", f"{variable} was refused ({error})", f"set {variable} to a valid key")
    if status >= 300 or (isinstance(body, dict) and body.get("ok") is False):
        detail = body.get("error") if isinstance(body, dict) else None
        return Check(name, "FAIL", f"{url} answered HTTP {status}" + (f" ({detail})" if detail else ""),
                     "see the service's status page, then ragbot.log")
    return Check(name, "OK", f"reached ({url.split('?')[0]})")


async def check_services(settings: Settings) -> list[Any]:
    """One check per configured service."""
    from bots.slack.app import slack_api_base

    checks = []
    if settings.slack_bot_token:
        base = slack_api_base(settings)
        checks.append(await _probe("slack", base + "auth.test", method="POST", variable="SLACK_BOT_TOKEN",
                                   headers={"Authorization": f"Bearer {_secret(settings.slack_bot_token)}"}))
        if settings.slack_app_token:
            checks.append(await _probe(
                "slack socket", base + "apps.connections.open", method="POST", variable="SLACK_APP_TOKEN",
                headers={"Authorization": f"Bearer {_secret(settings.slack_app_token)}"}))
    if settings.discord_token:
        import discord

        checks.append(await _probe("discord", f"{discord.http.Route.BASE}/users/@me",
                                   variable="DISCORD_TOKEN",
                                   headers={"Authorization": f"Bot {_secret(settings.discord_token)}"}))
    if settings.cohere_api_key:
        base = (settings.cohere_base_url or COHERE_URL).rstrip("/")
        checks.append(await _probe("cohere", f"{base}/v1/models?page_size=1", variable="COHERE_API_KEY",
                                   headers={"Authorization": f"Bearer {_secret(settings.cohere_api_key)}"}))
    if settings.gemini_api_key:
        base = (settings.gemini_base_url or GEMINI_URL).rstrip("/")
        checks.append(await _probe("gemini", f"{base}/v1beta/models/{settings.gemini_model}",
                                   variable="GEMINI_API_KEY",
                                   headers={"x-goog-api-key": _secret(settings.gemini_api_key)}))
    if settings.qdrant_url:
        key = _secret(settings.qdrant_api_key)
        checks.append(await _probe("qdrant", f"{settings.qdrant_url.rstrip('/')}/collections",
                                   variable="QDRANT_API_KEY", headers={"api-key": key} if key else {}))
    return checks
