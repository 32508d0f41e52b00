"""``ragbot serve`` tells its operator: adapters' states on the console and at /healthz, in every mode;
retention runs in the background; doctor reads the running server's health."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path

import aiohttp
import pytest
from pydantic import SecretStr

from bots.admin.doctor import check_store
from bots.health import HealthBoard
from bots.runtime import build_runtime, ingest
from bots.serve import serve
from core.models import AgentLogEntry, EventType
from storage.sqlite import SqliteStore
from tests.support.fake_discord import FakeDiscord
from tests.support.fake_slack import FakeSlack
from tests.support.pipeline_db import settings_for, write_guide


async def healthz(url: str) -> tuple[int, dict[str, object]]:
    async with aiohttp.ClientSession() as http, http.get(url) as r:
        return r.status, await r.json()


async def test_discord_mode_serves_healthz_and_says_who_connected(
    tmp_path: Path, discord_fake: FakeDiscord
) -> None:
    settings = settings_for(tmp_path / "data", discord_token=SecretStr("fake-discord-token"))
    runtime = await build_runtime(settings)
    await ingest(runtime, str(write_guide(tmp_path / "guide")), progress=False)
    await runtime.aclose()
    lines: list[str] = []
    board = HealthBoard(console=lines.append)
    ready, stop = asyncio.Event(), asyncio.Event()
    server = asyncio.create_task(serve(settings, ready=ready, stop=stop, board=board))
    try:
        await asyncio.wait_for(ready.wait(), 30)
        assert board.url is not None and board.url.startswith("http://127.0.0.1:")
        for _ in range(200):
            if board.adapters.get("discord") and board.adapters["discord"].state == "connected":
                break
            await asyncio.sleep(0.05)
        status, body = await healthz(board.url)
        assert status == 200 and body["ok"] is True
        assert body["adapters"]["discord"]["state"] == "connected"  # type: ignore[index]
        assert body["store"]["points"] == 3  # type: ignore[index]
        port = int(board.url.rsplit(":", 1)[1].split("/")[0])
        at_port = settings.model_copy(update={"port": port})
        [serve_check, store_check] = await check_store(at_port, serving=True)
        assert serve_check.level == "OK" and "discord connected" in serve_check.detail
        assert store_check.level == "OK" and "3 chunks" in store_check.detail
    finally:
        stop.set()
        assert await asyncio.wait_for(server, 30) == 0
    assert "ragbot: discord connecting: gateway" in lines
    assert any(line.startswith("ragbot: discord connected: as ") for line in lines)


async def test_a_refused_slack_token_is_said_on_the_console_and_at_healthz(
    tmp_path: Path, slack_fake: FakeSlack
) -> None:
    settings = settings_for(tmp_path / "data", slack_fake).model_copy(
        update={"slack_app_token": SecretStr("revoked")})
    lines: list[str] = []
    board = HealthBoard(console=lines.append)
    code = await asyncio.wait_for(serve(settings, board=board), 30)
    assert code == 1
    assert board.adapters["slack"].state == "failed"
    assert "Slack refused SLACK_APP_TOKEN (invalid_auth)" in board.adapters["slack"].detail
    assert any(line.startswith("ragbot: slack FAILED: Slack refused SLACK_APP_TOKEN") for line in lines)
    snapshot = await board.snapshot()
    assert snapshot["ok"] is False


async def test_retention_deletes_old_history_in_the_background(tmp_path: Path) -> None:
    settings = settings_for(tmp_path / "data", log_retention_days=30)
    db = await SqliteStore.open(settings.sqlite_path)
    old = AgentLogEntry(event_type=EventType.ERROR, error_details="old",
                        timestamp=datetime.now(UTC) - timedelta(days=45))
    await db.log_many([old, AgentLogEntry(event_type=EventType.ERROR, error_details="recent")])
    await db.close()
    ready, stop = asyncio.Event(), asyncio.Event()
    server = asyncio.create_task(serve(settings, ready=ready, stop=stop, board=HealthBoard(console=print)))
    try:
        await asyncio.wait_for(ready.wait(), 30)
        for _ in range(100):
            db = await SqliteStore.open(settings.sqlite_path)
            left = [e.error_details async for e in db.export(event_type=EventType.ERROR)]
            await db.close()
            if left == ["recent"]:
                break
            await asyncio.sleep(0.05)
        assert left == ["recent"]
    finally:
        stop.set()
        await asyncio.wait_for(server, 30)


def test_board_refuses_unknown_states() -> None:
    with pytest.raises(ValueError, match="unknown adapter state 'up'"):
        HealthBoard(console=print).report("slack", "up")


async def test_healthz_store_probe_says_a_store_that_cannot_write() -> None:
    from types import SimpleNamespace

    from bots.serve import store_probe
    from core.fakes import InMemoryVectorStore
    from core.protocols import StoreHealth

    store = InMemoryVectorStore()

    async def deleted() -> StoreHealth:
        return StoreHealth(ok=False, writable=False, detail="store folder deleted while ragbot was running")

    store.health = deleted  # type: ignore[method-assign]
    runtime = SimpleNamespace(settings=SimpleNamespace(collection="docs"), store=store)
    body = await store_probe(runtime)()  # type: ignore[arg-type]
    assert body["ok"] is False and "deleted" in body["detail"] and body["collection"] == "docs"
