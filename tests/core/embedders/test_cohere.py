"""CohereEmbedder against a fake Cohere v2 API on 127.0.0.1: batching, dimensions, hybrid vectors."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import SecretStr

from core.embedders.cohere import EMBED_BATCH, CohereEmbedder
from core.errors import ConfigurationError, ProviderResponseError
from core.models import EmbeddingRequest, SparseVector
from core.protocols import Embedder
from tests.support.fake_cohere import (  # noqa: F401 (fixtures)
    API_KEY,
    FAST_RETRIES,
    FakeCohere,
    Recorder,
    fake_cohere,
    recorder_fixture,
    serving,
    vector,
)

KEY = SecretStr(API_KEY)


def embedder(fake: FakeCohere, recorder: Recorder, **kwargs: Any) -> CohereEmbedder:
    options: dict[str, Any] = {**FAST_RETRIES, "retries": 2, **kwargs}
    return CohereEmbedder(api_key=KEY, base_url=fake.url, http_client=recorder.client, **options)


async def test_embed_documents_batches_96_per_call_in_order(fake: FakeCohere, recorder: Recorder) -> None:
    emb = embedder(fake, recorder, output_dimension=256)
    assert isinstance(emb, Embedder)
    texts = [f"passage number {i}" for i in range(2 * EMBED_BATCH + 8)]
    out = await emb.embed_documents(texts)
    await emb.aclose()
    bodies = fake.bodies("/v2/embed")
    assert [len(b["texts"]) for b in bodies] == [96, 96, 8]
    for body in bodies:
        assert body["model"] == "embed-v4.0"
        assert body["input_type"] == "search_document"
        assert body["embedding_types"] == ["float"]
        assert body["output_dimension"] == 256
    assert [o.embedding_vector for o in out] == [vector(t, 256) for t in texts]
    assert all(o.model_used == "cohere:embed-v4.0" and o.sparse_vector is None for o in out)
    assert emb.dimension == 256 and emb.model_id == "cohere:embed-v4.0"
    assert fake.violations == []
    assert recorder.urls == [f"{fake.url}/v2/embed"] * 3

async def test_embed_query_uses_search_query_and_default_dimension(
    fake: FakeCohere, recorder: Recorder
) -> None:
    emb = embedder(fake, recorder)
    assert emb.dimension == 1536
    out = await emb.embed_query(EmbeddingRequest(query_text="How do I connect Slack?"))
    await emb.aclose()
    (body,) = fake.bodies("/v2/embed")
    assert body["input_type"] == "search_query" and body["texts"] == ["How do I connect Slack?"]
    assert "output_dimension" not in body
    assert out.dimension == 1536 and out.execution_time >= 0
    assert fake.violations == []

async def test_embed_documents_of_nothing_calls_nothing(fake: FakeCohere, recorder: Recorder) -> None:
    emb = embedder(fake, recorder)
    assert await emb.embed_documents([]) == []
    await emb.aclose()
    assert fake.calls == []

async def test_sparse_functions_make_it_hybrid(fake: FakeCohere, recorder: Recorder) -> None:
    seen: list[tuple[str, str]] = []

    def sparse_query(text: str) -> SparseVector:
        seen.append(("query", text))
        return SparseVector(indices=[1], values=[1.0])

    def sparse_document(text: str) -> SparseVector:
        seen.append(("document", text))
        return SparseVector(indices=[2, 3], values=[0.5, 0.7])

    emb = embedder(fake, recorder, sparse_query=sparse_query, sparse_document=sparse_document)
    assert emb.hybrid
    query = await emb.embed_query(EmbeddingRequest(query_text="slack token"))
    docs = await emb.embed_documents(["Slack needs a token.", "Discord too."])
    await emb.aclose()
    assert query.sparse_vector == SparseVector(indices=[1], values=[1.0])
    assert [d.sparse_vector.indices for d in docs if d.sparse_vector] == [[2, 3], [2, 3]]
    assert seen == [("query", "slack token"), ("document", "Slack needs a token."),
                    ("document", "Discord too.")]

def test_sparse_functions_come_in_pairs() -> None:
    with pytest.raises(ConfigurationError, match="sparse_query and sparse_document"):
        CohereEmbedder(api_key=KEY, sparse_query=lambda t: SparseVector(indices=[], values=[]))

async def test_unknown_model_learns_its_dimension(fake: FakeCohere, recorder: Recorder) -> None:
    fake.return_dimension = 12
    emb = embedder(fake, recorder, model="embed-english-v3.0")
    emb._dimension = None  # as for a model this module does not know yet
    with pytest.raises(ConfigurationError, match="unknown until its first embedding"):
        _ = emb.dimension
    await emb.embed_query(EmbeddingRequest(query_text="hello"))
    assert emb.dimension == 12
    await emb.aclose()

async def test_wrong_vector_length_is_a_response_error(fake: FakeCohere, recorder: Recorder) -> None:
    fake.return_dimension = 4
    emb = embedder(fake, recorder, output_dimension=256)
    with pytest.raises(ProviderResponseError, match="length 4; expected 256"):
        await emb.embed_query(EmbeddingRequest(query_text="hello"))
    await emb.aclose()

def test_hybrid_and_dense_only_collections_have_different_model_ids() -> None:
    def sparse(text: str) -> SparseVector:
        return SparseVector(indices=[1], values=[1.0])

    key = SecretStr("test-key")
    dense_only = CohereEmbedder(api_key=key)
    hybrid = CohereEmbedder(api_key=key, sparse_query=sparse, sparse_document=sparse)
    assert dense_only.model_id == "cohere:embed-v4.0"
    assert hybrid.model_id == "cohere:embed-v4.0+bm25"
