"""The Cohere client's retries and error mapping, through CohereEmbedder, against a fake Cohere API.

That Gemini maps the same failures to the same errors is in test_errors.py.
"""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
from cohere.core.api_error import ApiError
from pydantic import SecretStr

from core.embedders.cohere import CohereEmbedder
from core.errors import (
    ConfigurationError,
    ProviderResponseError,
    ProviderTimeoutError,
    RateLimitedError,
)
from core.models import EmbeddingRequest
from core.providers.retry import RetryPolicy
from core.retrieval.rerankers import CohereReranker
from core.settings import Settings
from tests.support.fake_cohere import (  # noqa: F401 (fixtures)
    API_KEY,
    FAST_RETRIES,
    FakeCohere,
    Recorder,
    Scripted,
    fake_cohere,
    recorder_fixture,
    serving,
    unused_loopback_url,
)

KEY = SecretStr(API_KEY)


def embedder(fake: FakeCohere, recorder: Recorder, **kwargs: Any) -> CohereEmbedder:
    options: dict[str, Any] = {**FAST_RETRIES, "retries": 2, **kwargs}
    return CohereEmbedder(api_key=KEY, base_url=fake.url, http_client=recorder.client, **options)


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
    with pytest.raises(ProviderResponseError, match=r"server error \(500\) after 3 attempt") as err:
        await emb.embed_query(EmbeddingRequest(query_text="hello"))
    await emb.aclose()
    assert isinstance(err.value.__cause__, ApiError)
    assert len(fake.bodies("/v2/embed")) == 3

async def test_client_errors_are_not_retried(fake: FakeCohere, recorder: Recorder) -> None:
    fake.script["/v2/embed"] = [Scripted(status=400, body={"message": "texts too long"})]
    emb = embedder(fake, recorder)
    with pytest.raises(ProviderResponseError, match=r"refused \(400\).*texts too long"):
        await emb.embed_query(EmbeddingRequest(query_text="hello"))
    await emb.aclose()
    assert len(fake.bodies("/v2/embed")) == 1

async def test_wrong_key_is_reported_without_retry(fake: FakeCohere) -> None:
    emb = CohereEmbedder(api_key=SecretStr("wrong-key"), base_url=fake.url, **FAST_RETRIES)
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
    url = unused_loopback_url()
    emb = CohereEmbedder(api_key=KEY, base_url=url, http_client=recorder.client, retries=1, **FAST_RETRIES)
    with pytest.raises(ProviderTimeoutError, match="could not reach") as err:
        await emb.embed_query(EmbeddingRequest(query_text="hello"))
    assert isinstance(err.value.__cause__, httpx.ConnectError)
    assert recorder.urls == [f"{url}/v2/embed"] * 2
    await emb.aclose()
