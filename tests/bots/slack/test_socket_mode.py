"""Socket Mode proven: the real bolt Socket Mode handler against a fake Socket Mode server on loopback.

``apps.connections.open`` (the fake Web API) returns the fake's ``ws://`` URL; envelopes go in
over the websocket and acks come out, through mention -> threaded answer, a retried delivery
answered once, a feedback click, the admin export, and a refused app token.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from bots.health import HealthBoard
from bots.runtime import Runtime, build_runtime, ingest
from bots.slack import format as slack_fmt
from bots.slack.app import run_slack
from core.errors import ConfigurationError
from core.models import EventType
from tests.support.fake_slack import FakeSlack
from tests.support.fake_socket_mode import button_click, export_command, mention_event
from tests.support.pipeline_db import (
    ANSWERABLE,
    ask_on_slack,
    response_id_of,
    settings_for,
    socket_mode_slack,
    write_guide,
)


@pytest.fixture
async def runtime(tmp_path: Path, slack_fake: FakeSlack) -> AsyncIterator[Runtime]:
    """The real core over a small guide, with Socket Mode tokens pointing at the fakes."""
    rt = await build_runtime(settings_for(tmp_path / "data", slack_fake))
    await ingest(rt, str(write_guide(tmp_path / "guide")), progress=False)
    yield rt
    await rt.aclose()


async def test_mention_answer_retry_feedback_export(runtime: Runtime, slack_fake: FakeSlack) -> None:
    board = HealthBoard(console=lambda line: None)
    async with socket_mode_slack(runtime, slack_fake, report=board.reporter("slack")) as socket:
        # Mention -> acked at once -> placeholder in the thread -> the cited answer replaces it.
        update = await ask_on_slack(socket, slack_fake, ANSWERABLE, n=1)
        [placeholder] = slack_fake.calls_to("chat.postMessage")
        assert placeholder["thread_ts"] == "200.000001" and placeholder["channel"] == "C1"
        assert "make demo" in update["text"]
        rid = response_id_of(update)
        for _ in range(50):  # the health board polls the connection twice a second
            if board.adapters["slack"].state == "connected":
                break
            await asyncio.sleep(0.05)
        assert board.adapters["slack"] == board.adapters["slack"].__class__(
            state="connected", detail="Socket Mode", since=board.adapters["slack"].since)

        # Slack retries the same event (our ack was "late"): acked, never answered twice.
        retry = await socket.send("events_api", mention_event(ANSWERABLE, event_id="Ev1", ts="200.000001"),
                                  retry_attempt=1)
        assert (await socket.wait_ack(retry)) == {"envelope_id": retry}
        await slack_fake.settle(0.3)
        assert len(slack_fake.calls_to("chat.update")) == 1

        # Thumbs down on the answer: acked, stored, the voter thanked privately.
        click = button_click(slack_fmt.ACTION_DOWN, rid, user="U7", channel="C1", message_ts="200.9",
                             thread_ts="200.000001")
        await socket.wait_ack(await socket.send("interactive", click))
        [thanks] = await slack_fake.wait_for("chat.postEphemeral", 1, timeout=10)
        assert thanks["user"] == "U7"

        # The admin export over Socket Mode: the slash command is acked, two files arrive by DM.
        command = await socket.send("slash_commands", export_command("csv 7d", user="UADMIN"))
        ack = await socket.wait_ack(command)
        assert ack["envelope_id"]
        await slack_fake.wait_for("files.completeUploadExternal", 1, timeout=10)
        assert sorted(slack_fake.filenames.values())[0].startswith("ragbot-feedback-")

    db = runtime.database
    votes = [v async for v in db.export_feedback()]
    assert [(v.response_id, v.vote, v.platform) for v in votes] == [(rid, -1, "slack")]
    sent = [e async for e in db.export(event_type=EventType.RESPONSE_SENT)]
    assert len(sent) == 1 and (sent[0].response_summary or "").startswith("slack: answered")
    assert [e async for e in db.export(event_type=EventType.ADMIN_EXPORT)]


async def test_refused_app_token_fails_at_once_with_the_fix(tmp_path: Path, slack_fake: FakeSlack) -> None:
    settings = settings_for(tmp_path / "data", slack_fake).model_copy(
        update={"slack_app_token": SecretStr("not-an-app-token")})
    rt = await build_runtime(settings)
    try:
        with pytest.raises(ConfigurationError, match=r"Slack refused SLACK_APP_TOKEN \(invalid_auth\)"):
            await asyncio.wait_for(run_slack(rt.services), 10)
        slack_fake.fail["auth.test"] = "invalid_auth"
        with pytest.raises(ConfigurationError, match="SLACK_BOT_TOKEN"):
            await asyncio.wait_for(run_slack(rt.services), 10)
    finally:
        await rt.aclose()
