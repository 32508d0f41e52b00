"""The fake platforms, one per test, for every adapter test."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.support.fake_discord import FakeDiscord
from tests.support.fake_slack import FakeSlack


@pytest.fixture
async def slack_fake() -> AsyncIterator[FakeSlack]:
    """A fake Slack Web API on a loopback port."""
    server = await FakeSlack().start()
    yield server
    await server.close()


@pytest.fixture
async def discord_fake(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeDiscord]:
    """A fake Discord (REST and gateway) on a loopback port, discord.py pointed at it."""
    server = await FakeDiscord().start()
    server.patch(monkeypatch)
    yield server
    await server.close()
