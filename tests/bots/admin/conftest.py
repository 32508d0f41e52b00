"""Two databases for the admin commands: one filled by the real pipeline on every platform, one generated."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.support.generated_db import generate_history
from tests.support.pipeline_db import Filled, fill

BIG_QUESTIONS = 20_000


@pytest.fixture(scope="session")
def pipeline_db(tmp_path_factory: pytest.TempPathFactory) -> Filled:
    """A data folder after the real pipeline answered on Slack (Socket Mode), Discord and the CLI."""
    root = tmp_path_factory.mktemp("pipeline")
    return asyncio.run(fill(root / "data", root / "guide"))


@pytest.fixture(scope="session")
def big_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder whose database holds 20,000 generated questions over 14 days."""
    data = tmp_path_factory.mktemp("big") / "data"
    data.mkdir(mode=0o700)
    asyncio.run(generate_history(data / "ragbot.sqlite3", questions=BIG_QUESTIONS, days=14))
    return data


@pytest.fixture
def admin_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """No ragbot variable from the developer's shell and no .env file."""
    import os

    for key in list(os.environ):
        if key.startswith(("RAGBOT_", "SLACK_", "DISCORD_", "COHERE_", "GEMINI_", "GOOGLE_", "QDRANT_")):
            monkeypatch.delenv(key)
    monkeypatch.setenv("PORT", "0")
    monkeypatch.chdir(tmp_path)
    return monkeypatch
