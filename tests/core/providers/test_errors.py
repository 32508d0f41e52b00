"""One failure, one error: Cohere and Gemini map the same HTTP status or transport failure alike.

Each scenario runs through the real SDKs against the loopback fakes (tests/support/fake_cohere.py
and the FakeGemini of tests/core/answer/test_gemini.py) and must give the same ProviderError
subclass, the same number of attempts and the SDK's exception as the cause for both providers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from core.answer.generators.gemini import GeminiGenerator
from core.embedders.cohere import CohereEmbedder
from core.errors import ProviderError, ProviderResponseError, ProviderTimeoutError, RateLimitedError
from core.models import AgentConfig, EmbeddingRequest, RetrievedChunk, UserQuery
from core.protocols import GenerationRequest
from core.providers.errors import Failure, rule_for, transport_failure
from tests.support.fake_cohere import API_KEY, FAST_RETRIES, Scripted, unused_loopback_url
from tests.support.fake_cohere import serving as serving_cohere
from tests.support.fake_gemini import FakeGemini, text_reply
from tests.support.fake_gemini import serving as serving_gemini

RETRIES = 1
MODEL = "gemini-2.5-flash"
EXPECTED: dict[int, tuple[type[ProviderError], int]] = {
    # status: (error, attempts made with RETRIES=1)
    400: (ProviderResponseError, 1),
    401: (ProviderResponseError, 1),
    403: (ProviderResponseError, 1),
    404: (ProviderResponseError, 1),
    408: (ProviderTimeoutError, 2),
    429: (RateLimitedError, 2),
    500: (ProviderResponseError, 2),
    502: (ProviderResponseError, 2),
    503: (ProviderResponseError, 2),
    504: (ProviderTimeoutError, 2),
}


@dataclass
class Outcome:
    error: ProviderError
    attempts: int


async def _searched_nothing(query: str, top_k: int, filters: dict[str, Any] | None) -> list[RetrievedChunk]:
    return []


async def _failing(call: Callable[[], Awaitable[object]]) -> ProviderError:
    with pytest.raises(ProviderError) as info:
        await call()
    assert info.value.__cause__ is not None, "the SDK's exception must be kept as the cause"
    return info.value


async def cohere_outcome(
    answer: Scripted | None, *, base_url: str | None = None, timeout: float = 5.0
) -> Outcome:
    """Embed once against FakeCohere answering ``answer`` every time (or against ``base_url``)."""
    async with serving_cohere() as fake:
        fake.script["/v2/embed"] = [answer] * 5 if answer else []
        embedder = CohereEmbedder(api_key=SecretStr(API_KEY), base_url=base_url or fake.url, retries=RETRIES,
                                  timeout=timeout, **FAST_RETRIES)
        try:
            error = await _failing(lambda: embedder.embed_query(EmbeddingRequest(query_text="hello")))
        finally:
            await embedder.aclose()
        return Outcome(error, len(fake.calls))


async def gemini_outcome(answer: Any, *, base_url: str | None = None, timeout: float = 5.0) -> Outcome:
    """Generate once against FakeGemini answering ``answer`` every time (or against ``base_url``)."""
    async with serving_gemini(FakeGemini()) as fake:
        fake.script = [answer]
        generator = GeminiGenerator(api_key="test-key", base_url=base_url or fake.url, retries=RETRIES,
                                    timeout=timeout, config=AgentConfig(model_name=MODEL), **FAST_RETRIES)
        request = GenerationRequest(query=UserQuery(query_text="What does Gazebo simulate?"), chunks=[])
        try:
            error = await _failing(lambda: generator.generate(request, search=_searched_nothing))
        finally:
            await generator.aclose()
        return Outcome(error, len(fake.requests))


@pytest.fixture
async def unreachable() -> AsyncIterator[str]:
    yield unused_loopback_url()


@pytest.mark.parametrize("status", sorted(EXPECTED))
async def test_the_same_status_is_the_same_error_for_both_providers(status: int) -> None:
    cohere = await cohere_outcome(Scripted(status=status, body={"message": "scripted failure"}))
    gemini = await gemini_outcome((status, {"error": {"code": status, "message": "scripted failure",
                                                       "status": "SCRIPTED"}}))
    error, attempts = EXPECTED[status]
    assert (type(cohere.error), cohere.attempts) == (error, attempts)
    assert (type(gemini.error), gemini.attempts) == (error, attempts)
    assert (cohere.error.provider, gemini.error.provider) == ("cohere", "gemini")
    assert f"({status})" in str(cohere.error) and f"({status})" in str(gemini.error)
    if status in (401, 403):
        assert "check COHERE_API_KEY" in str(cohere.error) and "check GEMINI_API_KEY" in str(gemini.error)


async def test_an_unreachable_api_is_a_timeout_for_both_providers(unreachable: str) -> None:
    cohere = await cohere_outcome(None, base_url=unreachable)
    gemini = await gemini_outcome(text_reply("never sent"), base_url=unreachable)
    for outcome in (cohere, gemini):
        assert type(outcome.error) is ProviderTimeoutError
        assert "could not reach the API after 2 attempt(s)" in str(outcome.error)
        assert isinstance(outcome.error.__cause__, httpx.ConnectError)


async def test_no_answer_in_time_is_a_timeout_for_both_providers() -> None:
    cohere = await cohere_outcome(Scripted(delay=0.6), timeout=0.2)
    gemini = await gemini_outcome(("sleep", 0.6), timeout=0.2)
    for outcome in (cohere, gemini):
        assert type(outcome.error) is ProviderTimeoutError and outcome.attempts == 2
        assert "no answer in time after 2 attempt(s)" in str(outcome.error)
        assert isinstance(outcome.error.__cause__, httpx.TimeoutException)


async def test_a_malformed_body_is_a_response_error_not_retried_for_both_providers() -> None:
    cohere = await cohere_outcome(Scripted(raw="{not json"))
    gemini = await gemini_outcome("{not json")
    for outcome in (cohere, gemini):
        assert type(outcome.error) is ProviderResponseError and outcome.attempts == 1
        assert "malformed body" in str(outcome.error)


@pytest.mark.parametrize(
    ("exc", "error", "retry"),
    [
        (httpx.ConnectTimeout("slow"), ProviderTimeoutError, True),
        (httpx.ReadTimeout("slow"), ProviderTimeoutError, True),
        (TimeoutError(), ProviderTimeoutError, True),
        (httpx.ConnectError("refused"), ProviderTimeoutError, True),
        (httpx.RemoteProtocolError("dropped"), ProviderTimeoutError, True),
        (httpx.TooManyRedirects("loop"), ProviderResponseError, False),
    ],
)
def test_transport_rules_pick_the_most_specific_match(
    exc: BaseException, error: type[ProviderError], retry: bool
) -> None:
    rule = rule_for(transport_failure(exc))
    assert (rule.error, rule.retry) == (error, retry)


def test_statuses_nobody_listed_are_response_errors() -> None:
    for status in (0, 101, 302):
        rule = rule_for(Failure(status=status))
        assert (rule.error, rule.retry) == (ProviderResponseError, False)
