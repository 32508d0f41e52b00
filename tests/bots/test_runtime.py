"""The composition root: one exit stack closes what was opened, even when wiring fails part-way."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

import bots.runtime as runtime_module
from bots.runtime import build_runtime
from core.fakes import InMemoryVectorStore
from core.settings import Settings


def keyed_settings(tmp_path: Path) -> Settings:
    """Cohere and Gemini switched on (nothing is called: wiring opens clients, it sends no request)."""
    return Settings(  # type: ignore[call-arg]
        _env_file=None, data_dir=tmp_path / "data", cohere_api_key=SecretStr("test-key"),
        cohere_base_url="http://127.0.0.1:9", gemini_api_key=SecretStr("test-key"),
        gemini_base_url="http://127.0.0.1:9",
    )


def http_clients(part: Any) -> list[httpx.AsyncClient]:
    """The HTTP connection pools a provider object holds."""
    return [v for v in vars(part).values() if isinstance(v, httpx.AsyncClient)]


def capture(monkeypatch: pytest.MonkeyPatch, name: str, made: list[Any]) -> None:
    """Keep what ``bots.runtime.<name>`` builds."""
    original = getattr(runtime_module, name)

    def building(*args: Any) -> Any:
        part = original(*args)
        made.append(part)
        return part

    monkeypatch.setattr(runtime_module, name, building)


def fail(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    def failing(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"{name} failed")

    monkeypatch.setattr(runtime_module, name, failing)


@pytest.mark.parametrize(("failing", "built"), [
    ("RagPipeline", ["build_embedder", "build_generator", "build_reranker"]),
    ("build_generator", ["build_embedder"]),
])
async def test_wiring_that_fails_part_way_closes_what_it_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str, built: list[str]
) -> None:
    made: list[Any] = []
    for name in built:
        capture(monkeypatch, name, made)
    fail(monkeypatch, failing)
    store = InMemoryVectorStore()
    with pytest.raises(RuntimeError, match=f"{failing} failed"):
        await build_runtime(keyed_settings(tmp_path), store=store)
    assert len(made) == len(built)
    for part in made:
        clients = http_clients(part)
        assert clients and all(c.is_closed for c in clients), type(part).__name__
    assert store.closed


async def test_closing_the_runtime_closes_every_client_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[Any] = []
    for name in ("build_embedder", "build_generator", "build_reranker"):
        capture(monkeypatch, name, made)
    store = InMemoryVectorStore()
    runtime = await build_runtime(keyed_settings(tmp_path), store=store)
    assert not any(c.is_closed for part in made for c in http_clients(part))
    await runtime.aclose()
    assert store.closed and all(c.is_closed for part in made for c in http_clients(part))
    await runtime.aclose()  # a second close has nothing left to close


async def test_events_are_pruned_through_the_runtime(tmp_path: Path) -> None:
    from datetime import UTC, datetime, timedelta

    runtime = await build_runtime(Settings(_env_file=None, data_dir=tmp_path / "data"),  # type: ignore[call-arg]
                                  store=InMemoryVectorStore())
    try:
        assert await runtime.services.events.first_delivery("slack", "Ev1")
        assert await runtime.prune_events(before=datetime.now(UTC) + timedelta(seconds=1)) == 1
        assert await runtime.services.events.first_delivery("slack", "Ev1")
    finally:
        await runtime.aclose()
