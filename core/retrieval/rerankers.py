"""Rerankers: the ``Reranker`` Protocol's implementations (one so far, Cohere rerank).

``CohereReranker`` calls Cohere rerank (v2 API, rerank-v3.5 by default) through
``core/providers/cohere.py:CohereClient``, with the one retry policy and error table
every provider shares. The retriever (core/retrieval/retriever.py) runs it after fusion.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import httpx
from pydantic import SecretStr

from core.errors import ProviderResponseError
from core.models import RetrievedChunk
from core.providers.cohere import PROVIDER, CohereClient
from core.providers.retry import RetryPolicy
from core.settings import Settings

DEFAULT_RERANK_MODEL = "rerank-v3.5"


class CohereReranker(CohereClient):
    """``Reranker`` on Cohere rerank (v2 API): scores become relevance in [0, 1].

    Raises:
        RateLimitedError: 429 after the retries.
        ProviderTimeoutError: no answer (or no connection) after the retries.
        ProviderResponseError: 5xx after the retries, another 4xx, or a malformed body.
    """

    def __init__(
        self,
        *,
        api_key: SecretStr | None,
        model: str = DEFAULT_RERANK_MODEL,
        base_url: str | None = None,
        timeout: float = 30.0,
        retries: int = 3,
        retry_base_delay: float = 0.5,
        retry_max_delay: float = 8.0,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        """Build the client (nothing is sent until the first rerank).

        Args:
            api_key: Cohere API key.
            model: rerank model, e.g. ``rerank-v3.5``.
            base_url: API root (``COHERE_BASE_URL``); None for Cohere's own.
            timeout: seconds per HTTP request.
            retries: extra attempts on 429, 5xx and timeouts.
            retry_base_delay: first backoff delay in seconds.
            retry_max_delay: upper bound of one backoff delay.
            http_client: the httpx client to use (tests); closed by ``aclose()``.

        Raises:
            ConfigurationError: no API key.
        """
        super().__init__(
            api_key=api_key, base_url=base_url, timeout=timeout, http_client=http_client,
            retry=RetryPolicy(retries=retries, base_delay=retry_base_delay, max_delay=retry_max_delay),
        )
        self.model = model

    @classmethod
    def from_settings(cls, settings: Settings) -> CohereReranker:
        """Build from ``COHERE_API_KEY``, ``COHERE_BASE_URL``, ``RAGBOT_COHERE_RERANK_MODEL`` and
        the provider timeout/retries.

        Raises:
            ConfigurationError: ``COHERE_API_KEY`` is not set.
        """
        return cls(
            api_key=settings.cohere_api_key, model=settings.cohere_rerank_model,
            base_url=settings.cohere_base_url, timeout=settings.provider_timeout,
            retries=settings.provider_retries,
        )

    @property
    def name(self) -> str:
        """``cohere:<model>``, recorded as the ranking algorithm."""
        return f"{PROVIDER}:{self.model}"

    async def rerank(
        self, query: str, chunks: Sequence[RetrievedChunk], *, top_k: int
    ) -> list[RetrievedChunk]:
        """Return at most ``top_k`` chunks, best first, scores replaced by Cohere's relevance.

        Args:
            query: the user's question.
            chunks: candidates from retrieval.
            top_k: how many to keep.

        Returns:
            Copies of the chunks with ``score`` = relevance clamped to [0, 1].
        """
        if not chunks or top_k < 1:
            return []
        # The section path (or title) gives the model the context a bare passage lacks.
        documents = [f"{c.section or c.title}\n\n{c.content}" for c in chunks]
        top_n = min(top_k, len(chunks))
        what = f"reranking {len(chunks)} chunk(s) with {self.model}"
        response = await self._with_retries(what, lambda: self._client.rerank(
            model=self.model, query=query, documents=documents, top_n=top_n,
            request_options={"max_retries": 0},
        ))
        results = getattr(response, "results", None)
        if not isinstance(results, list):
            raise ProviderResponseError(f"{what} returned no results list", provider=PROVIDER)
        scored: list[tuple[float, int]] = []
        seen: set[int] = set()
        for item in results:
            index = getattr(item, "index", None)
            score = getattr(item, "relevance_score", None)
            if not isinstance(index, int) or not 0 <= index < len(chunks) or index in seen:
                raise ProviderResponseError(
                    f"{what} returned index {index!r}; expected a new one in 0..{len(chunks) - 1}",
                    provider=PROVIDER,
                )
            if not isinstance(score, int | float) or math.isnan(score):
                raise ProviderResponseError(f"{what} returned relevance {score!r}", provider=PROVIDER)
            seen.add(index)
            scored.append((min(1.0, max(0.0, float(score))), index))
        scored.sort(key=lambda pair: (-pair[0], pair[1]))
        return [chunks[i].model_copy(update={"score": s}) for s, i in scored[:top_n]]
