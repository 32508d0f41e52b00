"""The relevance threshold on the real book: in-scope questions answered, off-topic ones declined.

Ingests ../shared/data/robotics-textbook/docs once per module (about 4 s) through
the real runtime and asks the acceptance questions through ``pipeline.answer``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from bots.runtime import build_runtime
from core.models import ResponseStatus
from core.settings import Settings
from tests.support.paths import SHARED_DATA

SHARED_DOCS = SHARED_DATA / "robotics-textbook" / "docs"
KEYS = ("COHERE_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "QDRANT_URL", "RAGBOT_RELEVANCE_THRESHOLD",
        "RAGBOT_DENSE_WEIGHT", "RAGBOT_CANDIDATES", "RAGBOT_TOP_K", "RAGBOT_COLLECTION")

pytestmark = [
    pytest.mark.shared,
    pytest.mark.skipif(not SHARED_DOCS.is_dir(), reason="../shared/data/robotics-textbook is absent"),
]


def _settings(data_dir: Path) -> Settings:
    return Settings(_env_file=None, data_dir=data_dir)  # type: ignore[call-arg]


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A data dir holding the whole book, ingested once for the module."""
    from core.ingest.sync import ingest_path

    data_dir = tmp_path_factory.mktemp("robotics")

    async def ingest() -> None:
        settings = _settings(data_dir)
        runtime = await build_runtime(settings)
        try:
            await ingest_path(SHARED_DOCS, store=runtime.store, embedder=runtime.embedder,
                              collection=settings.collection, progress=False)
        finally:
            await runtime.aclose()

    with pytest.MonkeyPatch.context() as mp:
        for key in KEYS:
            mp.delenv(key, raising=False)
        asyncio.run(ingest())
    yield data_dir


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in KEYS:
        monkeypatch.delenv(key, raising=False)


async def test_in_scope_question_is_answered_from_module_1(book: Path, clean_env: None) -> None:
    runtime = await build_runtime(_settings(book))
    try:
        response = await runtime.pipeline.answer("what is embodiment in physical AI?")
    finally:
        await runtime.aclose()
    assert response.status is ResponseStatus.ANSWERED
    threshold = runtime.settings.relevance_threshold
    passing = [c for c in response.retrieved_chunks if c.score >= threshold]
    assert passing and len(passing) == len(response.retrieved_chunks)
    assert any(c.source_document.startswith("module-1/") for c in passing)
    assert any("/module-1/" in s.url for s in response.sources)  # cited, not only retrieved
    assert all(0.0 <= c.score <= 1.0 for c in response.retrieved_chunks)


@pytest.mark.parametrize("question", [
    "how do I bake sourdough bread?",
    "what is the capital of France?",
    "how do I install Kubernetes?",
])
async def test_off_topic_question_is_declined(book: Path, clean_env: None, question: str) -> None:
    runtime = await build_runtime(_settings(book))
    try:
        response = await runtime.pipeline.answer(question)
    finally:
        await runtime.aclose()
    assert response.status is ResponseStatus.NO_RELEVANT_DOCUMENTS
    assert response.retrieved_chunks == [] and response.sources == []
