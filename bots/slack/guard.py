"""What ``/slack/events`` checks before bolt sees a request: the signature first, then the body's shape.

Bolt parses a body before it verifies the signature and trusts its shape, so ``[1]``,
broken JSON, non-UTF-8 bytes or a string ``event`` used to end in HTTP 500 and a
traceback in the log, for anyone who could reach the port. Here an unsigned or stale
request is refused (401) without being parsed, and a signed body that is not what Slack
sends is refused (400) with one short log line.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

#: Largest body accepted. Slack's own are a few KB; a slash command with a long text stays well under.
MAX_BODY = 8 * 1024 * 1024
#: Fields Slack sends as an object or an id string.
_OBJECT_OR_TEXT = ("team", "user", "channel", "enterprise")
#: Fields Slack sends as objects.
_OBJECTS = ("event", "message", "previous_message", "view", "item", "assistant_thread", "function_data",
            "container", "state")
#: Fields Slack sends as lists of objects.
_OBJECT_LISTS = ("authorizations", "response_urls", "actions")
#: Fields Slack sends as text (ids and types bolt and the listeners compare or store).
_TEXT = ("type", "event_id", "team_id", "user_id", "channel_id", "command", "api_app_id", "action_id",
         "ts", "thread_ts", "subtype", "channel_type", "bot_id", "response_url")
_MAX_DEPTH = 4
#: How old a signed request may be (Slack's own recommendation): older ones are replays.
MAX_AGE = 5 * 60


@dataclass(frozen=True, slots=True)
class Rejected:
    """Why a request is refused, with its HTTP status."""

    status: int
    reason: str


def check_signature(
    secret: str, headers: Mapping[str, str], body: bytes, *, now: float | None = None
) -> Rejected | None:
    """401 unless ``body`` carries a valid, fresh Slack signature (checked on the raw bytes, unparsed)."""
    timestamp = headers.get("X-Slack-Request-Timestamp")
    signature = headers.get("X-Slack-Signature")
    if not timestamp or not signature:
        return Rejected(401, "no Slack signature headers")
    if not timestamp.isascii() or not timestamp.isdigit() or len(timestamp) > 12:
        return Rejected(401, f"signature timestamp {timestamp[:40]!r} is not a number")
    if abs((time.time() if now is None else now) - int(timestamp)) > MAX_AGE:
        return Rejected(401, "stale Slack signature (replayed or clock skew)")
    digest = hmac.new(secret.encode(), b"v0:" + timestamp.encode() + b":" + body, hashlib.sha256)
    # Bytes: compare_digest refuses str with non-ASCII characters, which a forged header may carry.
    if not hmac.compare_digest(f"v0={digest.hexdigest()}".encode(), signature.encode("utf-8", "replace")):
        return Rejected(401, "invalid Slack signature")
    return None


def parse_body(body: bytes, content_type: str | None) -> tuple[str, dict[str, Any]] | Rejected:
    """The body as text and as bolt will parse it, or why it is not a body Slack sends.

    Follows bolt's rule: JSON when the content type is ``application/json`` or the text starts
    with ``{``, else a form whose ``payload`` field (when there is one) holds JSON.
    """
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Rejected(400, f"body is not UTF-8 (byte {exc.start})")
    if not text:
        return Rejected(400, "empty body")
    main_type = (content_type or "").split(";")[0]
    try:
        if main_type == "application/json" or text.startswith("{"):
            parsed: Any = json.loads(text)
        elif "payload" in text:
            payload = dict(parse_qsl(text, keep_blank_values=True)).get("payload")
            parsed = json.loads(payload) if payload is not None else {}
        else:
            parsed = dict(parse_qsl(text, keep_blank_values=True))
    except ValueError as exc:  # JSONDecodeError, and parse_qsl's own errors
        return Rejected(400, f"body is not valid JSON or form data: {str(exc)[:80]}")
    if not isinstance(parsed, dict):
        return Rejected(400, f"body is a JSON {type(parsed).__name__}, not an object")
    problem = shape_problem(parsed)
    return Rejected(400, problem) if problem else (text, parsed)


def shape_problem(payload: dict[str, Any], *, depth: int = 0, where: str = "body") -> str | None:
    """The first field whose type is not what Slack sends (bolt and the listeners rely on it), or None."""
    if depth > _MAX_DEPTH:
        return None
    for key in _OBJECT_OR_TEXT:
        value = payload.get(key)
        if value is not None and not isinstance(value, dict | str):
            return f"{where}.{key} is neither an object nor text"
    for key in _TEXT:
        value = payload.get(key)
        if value is not None and not isinstance(value, str):
            return f"{where}.{key} is not text"
    children: list[tuple[str, Any]] = [(key, payload.get(key)) for key in _OBJECT_OR_TEXT]
    for key in _OBJECTS:
        value = payload.get(key)
        if key in payload and not isinstance(value, dict):  # null too: bolt reads .get("event", {}).get
            return f"{where}.{key} is not an object"
        children.append((key, value))
    for key in _OBJECT_LISTS:
        if key not in payload:  # present but null is no list either: bolt takes len() of it
            continue
        value = payload[key]
        if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
            return f"{where}.{key} is not a list of objects"
        children.extend((f"{key}[{i}]", item) for i, item in enumerate(value[:5]))
    for name, child in children:
        if isinstance(child, dict):
            problem = shape_problem(child, depth=depth + 1, where=f"{where}.{name}")
            if problem:
                return problem
    return None
