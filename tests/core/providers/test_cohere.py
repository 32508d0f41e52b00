"""CohereEmbedder and CohereReranker against a fake Cohere v2 API on 127.0.0.1."""

from __future__ import annotations

import socket
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from cohere.core.api_error import ApiError
from pydantic import SecretStr

from core.errors import (
    ConfigurationError,
    ProviderResponseError,
    ProviderTimeoutError,
    RateLimitedError,
)
from core.models import EmbeddingRequest, RetrievedChunk, SparseVector
from core.protocols import Embedder, Reranker
from core.providers.cohere import EMBED_BATCH, CohereEmbedder, CohereReranker, RetryPolicy
from core.settings import Settings
from tests.support.fake_cohere import API_KEY, FakeCohere, Scripted, vector

KEY = SecretStr(API_KEY)
FAST: dict[str, Any] = {"retry_base_delay": 0.001, "retry_max_delay": 0.01}


@pytest.fixture
async def fake() -> AsyncIterator[FakeCohere]:
    server = await FakeCohere().start()
    yield server
    await server.close()
    assert server.unexpected == [], "the SDK called routes the fake does not know"


class Recorder:
    """An httpx client whose every request URL is recorded, to prove nothing goes elsewhere."""

    def __init__(self, timeout: float = 5.0) -> None:
        self.urls: list[str] = []

        async def record(request: httpx.Request) -> None:
            self.urls.append(str(request.url))

        self.client = httpx.AsyncClient(timeout=timeout, event_hooks={"request": [record]})


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


def embedder(fake: FakeCohere, recorder: Recorder, **kwargs: Any) -> CohereEmbedder:
    options: dict[str, Any] = {**FAST, "retries": 2, **kwargs}
    return CohereEmbedder(api_key=KEY, base_url=fake.url, http_client=recorder.client, **options)


def reranker(fake: FakeCohere, recorder: Recorder, **kwargs: Any) -> CohereReranker:
    options: dict[str, Any] = {**FAST, "retries": 2, **kwargs}
    return CohereReranker(api_key=KEY, base_url=fake.url, http_client=recorder.client, **options)


def retrieved(i: int, content: str, score: float = 0.5) -> RetrievedChunk:
    return RetrievedChunk(
        chunk_id=f"c{i}", content=content, score=score, url=f"https://ragbot.dev/docs/p{i}",
        title=f"Page {i}", section=f"Page {i} > Part", chunk_index=0, source_document=f"p{i}.md",
    )


# ----------------------------------------------------------------------------- embeddings


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


def test_configuration_is_checked() -> None:
    with pytest.raises(ConfigurationError, match="COHERE_API_KEY"):
        CohereEmbedder(api_key=None)
    with pytest.raises(ConfigurationError, match="COHERE_API_KEY"):
        CohereReranker.from_settings(Settings(_env_file=None))  # type: ignore[call-arg]
    with pytest.raises(ConfigurationError, match="output_dimension 300"):
        CohereEmbedder(api_key=KEY, output_dimension=300)
    with pytest.raises(ConfigurationError, match="retry policy"):
        RetryPolicy(retries=-1)


async def test_from_settings_uses_the_provider_settings(fake: FakeCohere) -> None:
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None, cohere_api_key=KEY, cohere_base_url=fake.url, provider_retries=1,
        cohere_embed_model="embed-english-v3.0",
    )
    emb = CohereEmbedder.from_settings(settings)
    rer = CohereReranker.from_settings(settings)
    fake.script["/v2/embed"] = [Scripted(status=503), Scripted(status=503)]
    with pytest.raises(ProviderResponseError, match="503"):
        await emb.embed_query(EmbeddingRequest(query_text="hello"))
    assert len(fake.bodies("/v2/embed")) == 2, "provider_retries=1 means two attempts"
    out = await emb.embed_query(EmbeddingRequest(query_text="hello"))
    assert emb.model_id == "cohere:embed-english-v3.0" and out.dimension == 1024 == emb.dimension
    assert rer.name == "cohere:rerank-v3.5"
    await emb.aclose()
    await rer.aclose()


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


# ----------------------------------------------------------------------------- retries


async def test_429_then_success_is_retried_once(fake: FakeCohere, recorder: Recorder) -> None:
    fake.script["/v2/embed"] = [Scripted(status=429, body={"message": "slow down"})]
    emb = embedder(fake, recorder)
    out = await emb.embed_query(EmbeddingRequest(query_text="hello"))
    await emb.aclose()
    assert out.dimension == 1536
    assert len(fake.bodies("/v2/embed")) == 2, "one failure, one retry; the SDK added none"


async def test_429_until_exhaustion_is_rate_limited(fake: FakeCohere, recorder: Recorder) -> None:
    fake.script["/v2/embed"] = [Scripted(status=429, headers={"Retry-After": "0"})] * 5
    emb = embedder(fake, recorder, retries=3)
    with pytest.raises(RateLimitedError, match=r"429.*after 4 attempt") as err:
        await emb.embed_documents(["a", "b"])
    await emb.aclose()
    assert isinstance(err.value.__cause__, ApiError) and err.value.provider == "cohere"
    assert len(fake.bodies("/v2/embed")) == 4


async def test_500_until_exhaustion_is_a_response_error(fake: FakeCohere, recorder: Recorder) -> None:
    fake.script["/v2/embed"] = [Scripted(status=500, body={"message": "boom"})] * 5
    emb = embedder(fake, recorder, retries=2)
    with pytest.raises(ProviderResponseError, match="500 after 3 attempt") as err:
        await emb.embed_query(EmbeddingRequest(query_text="hello"))
    await emb.aclose()
    assert isinstance(err.value.__cause__, ApiError)
    assert len(fake.bodies("/v2/embed")) == 3


async def test_client_errors_are_not_retried(fake: FakeCohere, recorder: Recorder) -> None:
    fake.script["/v2/embed"] = [Scripted(status=400, body={"message": "texts too long"})]
    emb = embedder(fake, recorder)
    with pytest.raises(ProviderResponseError, match=r"rejected \(400\).*texts too long"):
        await emb.embed_query(EmbeddingRequest(query_text="hello"))
    await emb.aclose()
    assert len(fake.bodies("/v2/embed")) == 1


async def test_wrong_key_is_reported_without_retry(fake: FakeCohere) -> None:
    emb = CohereEmbedder(api_key=SecretStr("wrong-key"), base_url=fake.url, **FAST)
    with pytest.raises(ProviderResponseError, match=r"refused \(401\): check COHERE_API_KEY"):
        await emb.embed_query(EmbeddingRequest(query_text="hello"))
    await emb.aclose()
    assert len(fake.calls) == 1
    fake.violations.clear()


@pytest.mark.parametrize(
    "answer",
    [Scripted(raw="{not json"), Scripted(body={"id": "x", "embeddings": {"float": []}}),
     Scripted(body={"id": "x", "embeddings": {"float": [["a", "b"]]}}), Scripted(body={"id": "x"})],
    ids=["not-json", "too-few", "not-numbers", "no-embeddings"],
)
async def test_malformed_bodies_are_response_errors(
    fake: FakeCohere, recorder: Recorder, answer: Scripted
) -> None:
    fake.script["/v2/embed"] = [answer]
    emb = embedder(fake, recorder)
    with pytest.raises(ProviderResponseError, match=r"malformed|float embeddings|non-numeric"):
        await emb.embed_query(EmbeddingRequest(query_text="hello"))
    await emb.aclose()
    assert len(fake.bodies("/v2/embed")) == 1, "a malformed answer is not retried"


async def test_timeouts_are_retried_then_raised(fake: FakeCohere) -> None:
    fake.script["/v2/embed"] = [Scripted(delay=0.5)] * 2
    recorder = Recorder()
    emb = embedder(fake, recorder, retries=1, timeout=0.1)
    start = time.perf_counter()
    with pytest.raises(ProviderTimeoutError, match="no answer in time after 2 attempt") as err:
        await emb.embed_query(EmbeddingRequest(query_text="hello"))
    assert isinstance(err.value.__cause__, httpx.TimeoutException)
    assert time.perf_counter() - start < 1.0
    assert len(recorder.urls) == 2
    await emb.aclose()


async def test_unreachable_api_is_a_timeout_error(recorder: Recorder) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    emb = CohereEmbedder(api_key=KEY, base_url=url, http_client=recorder.client, retries=1, **FAST)
    with pytest.raises(ProviderTimeoutError, match="could not reach") as err:
        await emb.embed_query(EmbeddingRequest(query_text="hello"))
    assert isinstance(err.value.__cause__, httpx.ConnectError)
    assert recorder.urls == [f"{url}/v2/embed"] * 2
    await emb.aclose()


def test_backoff_is_bounded_and_jittered() -> None:
    policy = RetryPolicy(retries=5, base_delay=0.1, max_delay=1.0)
    for attempt, backoff in enumerate([0.1, 0.2, 0.4, 0.8, 1.0, 1.0]):
        delays = {policy.delay(attempt) for _ in range(50)}
        assert all(backoff / 2 <= d <= backoff for d in delays)
        assert len(delays) > 1, "jitter"
    assert policy.delay(0, retry_after=0.7) >= 0.7
    assert policy.delay(0, retry_after=30.0) == 1.0


# ----------------------------------------------------------------------------- rerank


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


def test_hybrid_and_dense_only_collections_have_different_model_ids() -> None:
    from core.models import SparseVector
    from core.providers.cohere import CohereEmbedder

    def sparse(text: str) -> SparseVector:
        return SparseVector(indices=[1], values=[1.0])

    key = SecretStr("test-key")
    dense_only = CohereEmbedder(api_key=key)
    hybrid = CohereEmbedder(api_key=key, sparse_query=sparse, sparse_document=sparse)
    assert dense_only.model_id == "cohere:embed-v4.0"
    assert hybrid.model_id == "cohere:embed-v4.0+bm25"
