"""``ragbot serve``: Slack, Discord and the CLI hand-off share one core in one event loop."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from pathlib import Path

import aiohttp
import pytest
from pydantic import SecretStr
from slack_sdk.signature import SignatureVerifier

from bots.control import call
from bots.runtime import build_runtime
from bots.serve import serve
from core.errors import ConfigurationError
from core.ingest.sitemap import ingest_source
from core.models import EventType
from core.settings import Settings
from storage.sqlite import SqliteStore
from tests.support.fake_discord import FakeDiscord
from tests.support.fake_slack import FakeSlack

SECRET = "test-signing-secret"
GUIDE = ("# Install\n\n## Quick start\n\nInstall ragbot with make demo. The demo creates a virtual "
         "environment, ingests the user guide and answers a sample question with citations.\n")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_slack_discord_and_cli_share_one_core(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "install.md").write_text(GUIDE, encoding="utf-8")
    slack = await FakeSlack().start()
    discord_fake = await FakeDiscord().start()
    discord_fake.patch(monkeypatch)
    port = free_port()
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None, data_dir=tmp_path / "data", slack_bot_token=SecretStr("xoxb-test"),
        slack_signing_secret=SecretStr(SECRET), slack_api_url=slack.api_url,
        discord_token=SecretStr("fake-discord-token"), port=port,
    )
    runtime = await build_runtime(settings)
    await ingest_source(str(docs), store=runtime.store, embedder=runtime.embedder,
                        collection=settings.collection, progress=False)
    await runtime.aclose()

    ready, stop = asyncio.Event(), asyncio.Event()
    server = asyncio.create_task(serve(settings, ready=ready, stop=stop))
    try:
        await asyncio.wait_for(ready.wait(), 30)
        with pytest.raises(ConfigurationError, match="already running"):
            await serve(settings)  # a second server on the same data folder
        # The CLI's hand-off reaches the same process.
        reply = await call(settings.control_socket, {"op": "ask", "question": "how do I install ragbot?"})
        assert reply and reply["ok"] and reply["response"]["status"] == "answered"

        # Slack: a signed mention over HTTP, answered in its thread.
        body = json.dumps({
            "token": "unused", "team_id": "T1", "api_app_id": "A1", "type": "event_callback",
            "event_id": "Ev1", "event_time": int(time.time()),
            "event": {"type": "app_mention", "user": "U1", "text": "<@UBOT> how do I install ragbot?",
                      "channel": "C1", "ts": "100.1", "team": "T1"},
        })
        ts = str(int(time.time()))
        signature = SignatureVerifier(SECRET).generate_signature(timestamp=ts, body=body)
        async with aiohttp.ClientSession() as http:
            for _ in range(100):  # the HTTP site starts right after `ready`
                try:
                    async with http.get(f"http://127.0.0.1:{port}/healthz") as health:
                        if health.status == 200:
                            break
                except aiohttp.ClientConnectionError:
                    await asyncio.sleep(0.05)
            async with http.post(f"http://127.0.0.1:{port}/slack/events", data=body.encode(), headers={
                "Content-Type": "application/json", "X-Slack-Request-Timestamp": ts,
                "X-Slack-Signature": signature or "",
            }) as posted:
                assert posted.status == 200
        [update] = await slack.wait_for("chat.update", timeout=20)
        assert "make demo" in json.dumps(update)

        # Discord: an /ask interaction through the fake gateway.
        await asyncio.wait_for(discord_fake.ready_sent.wait(), 20)
        payload = discord_fake.slash_payload("ask", {"question": "how do I install ragbot?"})
        await discord_fake.interact(payload)
        await discord_fake.wait_for(lambda: any(m.get("edits") for m in discord_fake.messages_for(payload)),
                                    timeout=20)
    finally:
        stop.set()
        code = await asyncio.wait_for(server, 30)
        await slack.close()
        await discord_fake.close()
    assert code == 0
    assert not settings.control_socket.exists()

    db = await SqliteStore.open(settings.sqlite_path)
    try:
        sent = [e async for e in db.export(event_type=EventType.RESPONSE_SENT)]
    finally:
        await db.close()
    platforms = sorted((e.response_summary or "").split(":")[0] for e in sent)
    assert platforms == ["cli", "discord", "slack"]
