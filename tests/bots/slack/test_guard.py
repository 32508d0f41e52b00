"""Issue 10 items 4 and 19: what reaches /slack/events from outside is checked before bolt parses it."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import time
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlencode

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bots.chat.loglimit import LimitedLog
from bots.slack import app as slack_app
from bots.slack.guard import Rejected, check_signature, parse_body, shape_problem
from bots.slack.server import refusals, serve_socket_mode, watch_connection
from core.fakes import InMemoryStorage
from core.models import EventType
from tests.bots.drivers import SECRET, Answers, SlackHarness, services_over, slack_settings
from tests.support.fake_slack import FakeSlack


def sign(body: bytes, *, stamp: int | None = None) -> dict[str, str]:
    ts = str(int(time.time()) if stamp is None else stamp)
    digest = hmac.new(SECRET.encode(), b"v0:" + ts.encode() + b":" + body, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}"}


@pytest.fixture
def storage() -> InMemoryStorage:
    return InMemoryStorage()


@pytest.fixture
async def slack(slack_fake: FakeSlack, storage: InMemoryStorage) -> AsyncIterator[SlackHarness]:
    refusals.suppressed = 0
    services = services_over(slack_settings(slack_fake), storage, Answers(storage))
    async with SlackHarness(slack_fake, services) as harness:
        yield harness


BAD_BODIES = [
    (b"[1]", "application/json"),
    (b"{bad", "application/json"),
    (b"\xff\xfe\x00", "application/json"),
    (b'{"type": "event_callback", "event": "a string"}', "application/json"),
    (b'{"type": "event_callback", "event": {"type": "app_mention", "user": 5}}', "application/json"),
    (b"payload=%7Bbroken", "application/x-www-form-urlencoded"),
    (b"payload=%5B1%5D", "application/x-www-form-urlencoded"),
    (b'payload={"type": "block_actions", "actions": "x"}', "application/x-www-form-urlencoded"),
    (b"", "application/json"),
]


@pytest.mark.parametrize(("body", "content_type"), BAD_BODIES)
async def test_bad_bodies_get_401_unsigned_and_400_signed_without_a_traceback(
    slack: SlackHarness, caplog: pytest.LogCaptureFixture, body: bytes, content_type: str
) -> None:
    caplog.set_level(logging.WARNING)
    unsigned = await slack.client.post("/slack/events", data=body, headers={"Content-Type": content_type})
    assert unsigned.status == 401
    signed = await slack.client.post("/slack/events", data=body,
                                     headers={"Content-Type": content_type, **sign(body)})
    assert signed.status == 400
    assert "error" in await signed.json()
    await slack.settle()
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    assert slack.fake.calls == []


async def test_signature_is_checked_before_the_body_is_read(slack: SlackHarness) -> None:
    body = b'{"type": "url_verification", "challenge": "abc"}'
    for headers in (sign(body, stamp=int(time.time()) - 3600), {**sign(body), "X-Slack-Signature": "v0=00"},
                    {**sign(body), "X-Slack-Request-Timestamp": "soon"},
                    {**sign(body), "X-Slack-Signature": "v0=é"}):
        resp = await slack.client.post("/slack/events", data=body,
                                       headers={"Content-Type": "application/json", **headers})
        assert resp.status == 401
    resp = await slack.client.post("/slack/events", data=body,
                                   headers={"Content-Type": "application/json", **sign(body)})
    assert resp.status == 200 and "abc" in await resp.text()


async def test_a_flood_of_bad_requests_logs_a_bounded_number_of_short_lines(
    slack: SlackHarness, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="bots.slack.server")
    body = b"[" + b"1," * 5000 + b"1]"
    for _ in range(60):
        resp = await slack.client.post("/slack/events", data=body,
                                       headers={"Content-Type": "application/json"})
        assert resp.status == 401
    lines = [r.getMessage() for r in caplog.records if r.name == "bots.slack.server"]
    assert len(lines) <= refusals.per_window and refusals.suppressed >= 60 - refusals.per_window
    assert all(len(line) <= refusals.max_chars and "\n" not in line for line in lines)


def test_limited_log_reports_what_it_suppressed(caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    limited = LimitedLog(logging.getLogger("test.limited"), per_window=2, window=10, max_chars=40,
                         clock=lambda: now[0])
    caplog.set_level(logging.WARNING, logger="test.limited")
    assert [limited.warning(f"line {i}\nwith a newline " + "x" * 100) for i in range(5)] == [
        True, True, False, False, False]
    now[0] = 11
    assert limited.warning("next window")
    messages = [r.getMessage() for r in caplog.records]
    assert messages[0].startswith("line 0 with a newline") and len(messages[0]) == 40
    assert "3 similar lines suppressed" in messages[2] and messages[3] == "next window"


async def test_non_admin_export_with_a_megabyte_of_text_is_refused_and_logged(
    slack: SlackHarness, storage: InMemoryStorage
) -> None:
    resp = await slack.command("7d " + "x" * (1 << 20), user="UNOBODY")
    assert resp.status == 200 and "only ragbot admins" in await resp.text()
    [refused] = [e for e in storage.entries if e.event_type is EventType.ADMIN_EXPORT]
    assert refused.error_details and refused.error_details.startswith("refused: slack user UNOBODY")


async def test_a_body_over_the_limit_is_refused_with_413(slack: SlackHarness) -> None:
    body = b"x" * (9 * 1024 * 1024)
    resp = await slack.client.post("/slack/events", data=body, headers={"Content-Type": "text/plain"})
    assert resp.status == 413


async def test_the_http_listener_binds_the_configured_host(
    slack_fake: FakeSlack, storage: InMemoryStorage, monkeypatch: pytest.MonkeyPatch
) -> None:
    bound: list[tuple[str, int]] = []

    async def fake_serve_http(app: Any, *, host: str, port: int, **_: Any) -> None:
        bound.append((host, port))

    monkeypatch.setattr(slack_app, "serve_http", fake_serve_http)
    services = services_over(slack_settings(slack_fake, slack_host="127.0.0.1", port=0), storage,
                             Answers(storage))
    await slack_app.run_slack(services)
    assert bound == [("127.0.0.1", 0)]
    default = services_over(slack_settings(slack_fake), storage, Answers(storage))
    await slack_app.run_slack(default)
    assert bound[-1][0] == "0.0.0.0"


async def test_socket_mode_that_never_connects_is_said_on_the_console(
    slack_fake: FakeSlack, storage: InMemoryStorage
) -> None:
    said: list[str] = []
    warned = asyncio.Event()

    def console(line: str) -> None:
        said.append(line)
        warned.set()

    services = services_over(slack_settings(slack_fake, slack_app_token="xapp-test"), storage,
                             Answers(storage))
    app = slack_app.build_slack_app(services=services)
    task = asyncio.create_task(serve_socket_mode(app, "xapp-test", warn_after=0.2, console=console))
    try:
        await asyncio.wait_for(warned.wait(), 10)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    assert "Socket Mode is not connected after 0.2 s" in said[0] and "SLACK_APP_TOKEN" in said[0]


async def test_socket_mode_says_when_it_connects_after_all() -> None:
    said: list[str] = []
    states = iter([False] * 3 + [True])

    async def is_connected() -> bool:
        return next(states)

    watching = watch_connection(is_connected, warn_after=0.01, console=said.append, poll=0.01)
    await asyncio.wait_for(watching, 10)
    assert len(said) == 2 and said[1] == "ragbot: Slack Socket Mode connected"


# --------------------------------------------------------------------------- properties

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=5),
    max_leaves=25,
)
SLACK_KEYS = st.sampled_from(["type", "event", "team", "user", "channel", "event_id", "actions", "message",
                              "container", "authorizations", "team_id", "enterprise", "view", "text",
                              "command", "user_id", "payload", "response_urls"])
SLACKISH = st.recursive(
    st.none() | st.integers() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(SLACK_KEYS, inner, max_size=6),
    max_leaves=30,
)


@given(body=st.binary(max_size=300), content_type=st.sampled_from(
    ["application/json", "application/x-www-form-urlencoded", "text/plain", "", "application/json; x=1"]))
def test_parse_body_never_raises(body: bytes, content_type: str) -> None:
    result = parse_body(body, content_type)
    assert isinstance(result, Rejected) or isinstance(result[1], dict)


@given(value=JSON | SLACKISH)
def test_a_body_parse_body_accepts_never_crashes_bolts_context(value: Any) -> None:
    from slack_bolt.request.async_request import AsyncBoltRequest

    for raw in (json.dumps(value), urlencode({"payload": json.dumps(value)})):
        kind = "application/json" if raw.startswith(("{", "[", '"')) or raw[:1].isdigit() else \
            "application/x-www-form-urlencoded"
        result = parse_body(raw.encode(), kind)
        if not isinstance(result, Rejected):
            AsyncBoltRequest(body=result[0], headers={"content-type": kind})  # builds bolt's context


@given(value=SLACKISH)
def test_shape_problem_is_none_or_names_a_field(value: Any) -> None:
    if isinstance(value, dict):
        problem = shape_problem(value)
        assert problem is None or problem.startswith("body")


@given(body=st.binary(max_size=200), stamp=st.text(max_size=14), signature=st.text(max_size=80))
def test_check_signature_never_raises_and_refuses_forgeries(body: bytes, stamp: str, signature: str) -> None:
    headers = {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": signature}
    result = check_signature(SECRET, headers, body)
    assert isinstance(result, Rejected) and result.status == 401


@settings(max_examples=40, deadline=None)
@given(value=SLACKISH)
def test_any_signed_body_is_answered_without_a_server_error(value: Any) -> None:
    async def post() -> int:
        fake = await FakeSlack().start()
        storage = InMemoryStorage()
        try:
            async with SlackHarness(fake, services_over(slack_settings(fake), storage,
                                                        Answers(storage))) as harness:
                body = json.dumps(value).encode()
                resp = await harness.client.post("/slack/events", data=body,
                                                 headers={"Content-Type": "application/json", **sign(body)})
                await harness.drain()
                return resp.status
        finally:
            await fake.close()

    assert asyncio.run(post()) in (200, 400, 404)
