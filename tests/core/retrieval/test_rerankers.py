"""CohereReranker against a fake Cohere v2 API on 127.0.0.1."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import SecretStr

from core.errors import ProviderResponseError
from core.models import RetrievedChunk
from core.protocols import Reranker
from core.retrieval.rerankers import CohereReranker
from tests.support.fake_cohere import (  # noqa: F401 (fixtures)
    API_KEY,
    FAST_RETRIES,
    FakeCohere,
    Recorder,
    Scripted,
    fake_cohere,
    recorder_fixture,
    serving,
)

KEY = SecretStr(API_KEY)


def reranker(fake: FakeCohere, recorder: Recorder, **kwargs: Any) -> CohereReranker:
    options: dict[str, Any] = {**FAST_RETRIES, "retries": 2, **kwargs}
    return CohereReranker(api_key=KEY, base_url=fake.url, http_client=recorder.client, **options)


def retrieved(i: int, content: str, score: float = 0.5) -> RetrievedChunk:
    return RetrievedChunk(
        chunk_id=f"c{i}", content=content, score=score, url=f"https://ragbot.dev/docs/p{i}",
        title=f"Page {i}", section=f"Page {i} > Part", chunk_index=0, source_document=f"p{i}.md",
    )


async def test_rerank_reorders_and_clamps_scores(fake: FakeCohere, recorder: Recorder) -> None:
    rer = reranker(fake, recorder)
    assert isinstance(rer, Reranker) and rer.name == "cohere:rerank-v3.5"
    chunks = [retrieved(0, "Discord guild ids."), retrieved(1, "Slack bot token."),
              retrieved(2, "Install with pip.")]
    fake.rerank_scores = {0: -0.2, 1: 1.3, 2: 0.4}
    out = await rer.rerank("slack token", chunks, top_k=2)
    await rer.aclose()
    assert [(c.chunk_id, c.score) for c in out] == [("c1", 1.0), ("c2", 0.4)]
    assert out[0].content == chunks[1].content and out[0].url == chunks[1].url
    (body,) = fake.bodies("/v2/rerank")
    assert body["model"] == "rerank-v3.5" and body["query"] == "slack token" and body["top_n"] == 2
    assert body["documents"][1] == "Page 1 > Part\n\nSlack bot token."
    assert fake.violations == []
    assert recorder.urls == [f"{fake.url}/v2/rerank"]

async def test_rerank_of_nothing_calls_nothing(fake: FakeCohere, recorder: Recorder) -> None:
    rer = reranker(fake, recorder)
    assert await rer.rerank("q", [], top_k=5) == []
    await rer.aclose()
    assert fake.calls == []

async def test_rerank_retries_429_and_refuses_bad_indexes(fake: FakeCohere, recorder: Recorder) -> None:
    rer = reranker(fake, recorder)
    chunks = [retrieved(0, "Slack bot token.")]
    fake.script["/v2/rerank"] = [
        Scripted(status=429),
        Scripted(body={"id": "r", "results": [{"index": 5, "relevance_score": 0.9}]}),
    ]
    with pytest.raises(ProviderResponseError, match="index 5"):
        await rer.rerank("slack", chunks, top_k=3)
    assert len(fake.bodies("/v2/rerank")) == 2
    out = await rer.rerank("slack", chunks, top_k=3)
    assert [c.chunk_id for c in out] == ["c0"] and 0.0 <= out[0].score <= 1.0
    await rer.aclose()
