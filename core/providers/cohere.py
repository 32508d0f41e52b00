"""Cohere's hosted models: ``CohereEmbedder`` (embed-v4.0) and ``CohereReranker`` (rerank-v3.5).

Both talk to the v2 API (``POST /v2/embed``, ``POST /v2/rerank``) through
``cohere.AsyncClientV2`` on an httpx client they own. The SDK's own retries are
turned off (``max_retries=0``) so that the one retry loop here decides:
429, 5xx, timeouts and connection failures are retried with bounded
exponential backoff and jitter (``provider_retries`` times), then raised as
``RateLimitedError`` / ``ProviderResponseError`` / ``ProviderTimeoutError``
with the SDK's exception as the cause. Other 4xx answers and malformed bodies
are not retried: asking again would get the same answer.

Cohere returns dense vectors only. Hybrid search keeps working when the
embedder is given the local BM25 functions (``LocalEmbedder.sparse_query`` and
``sparse_document``): each response then carries both vectors.
"""

from __future__ import annotations

import asyncio
import math
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import cohere
import httpx
from cohere.core.api_error import ApiError
from cohere.core.parse_error import ParsingError
from pydantic import SecretStr

from core.errors import (
    ConfigurationError,
    ProviderError,
    ProviderResponseError,
    ProviderTimeoutError,
    RateLimitedError,
)
from core.models import EmbeddingRequest, EmbeddingResponse, InputType, RetrievedChunk, SparseVector
from core.settings import Settings

PROVIDER = "cohere"
DEFAULT_EMBED_MODEL = "embed-v4.0"
DEFAULT_RERANK_MODEL = "rerank-v3.5"
#: The v2 embed endpoint accepts at most 96 texts per call.
EMBED_BATCH = 96
#: Output dimension of each model when ``output_dimension`` is not given.
KNOWN_DIMENSIONS = {
    "embed-v4.0": 1536,
    "embed-english-v3.0": 1024,
    "embed-multilingual-v3.0": 1024,
    "embed-english-light-v3.0": 384,
    "embed-multilingual-light-v3.0": 384,
}
#: embed-v4.0 can shorten its vectors (Matryoshka) to one of these sizes.
V4_DIMENSIONS = frozenset({256, 512, 1024, 1536})

SparseFn = Callable[[str], SparseVector]
T = TypeVar("T")


@dataclass(frozen=True, kw_only=True, slots=True)
class RetryPolicy:
    """Bounded exponential backoff with jitter.

    Attributes:
        retries: extra attempts after the first one.
        base_delay: delay before the first retry, in seconds (doubles each time).
        max_delay: upper bound of any single delay, including a server's Retry-After.
    """

    retries: int = 3
    base_delay: float = 0.5
    max_delay: float = 8.0

    def __post_init__(self) -> None:
        if self.retries < 0 or self.base_delay < 0 or self.max_delay < self.base_delay:
            raise ConfigurationError(
                f"invalid retry policy: retries={self.retries}, base_delay={self.base_delay}, "
                f"max_delay={self.max_delay}"
            )

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Return how long to wait before retry number ``attempt`` (0-based).

        Args:
            attempt: how many retries happened before this one.
            retry_after: the server's Retry-After in seconds, if it sent one.

        Returns:
            Seconds in [backoff / 2, backoff], raised to Retry-After, never above max_delay.
        """
        backoff = min(self.max_delay, self.base_delay * 2**attempt)
        # "Equal jitter": half fixed so retries still back off, half random so many
        # clients hitting the same 429 do not come back in lockstep.
        wait = backoff / 2 + random.uniform(0, backoff / 2)
        if retry_after is not None:
            wait = max(wait, retry_after)
        return min(wait, self.max_delay)


def _retry_after(exc: ApiError) -> float | None:
    for key, value in (exc.headers or {}).items():
        if key.lower() == "retry-after":
            try:
                return max(0.0, float(value))
            except ValueError:
                return None  # an HTTP date: rare from APIs, and the backoff still applies
    return None


def _classify(exc: Exception, what: str, attempts: int) -> tuple[bool, ProviderError]:
    """Return (retryable, the error to raise if no retry is left) for one failed call."""
    tried = f"after {attempts} attempt(s)"
    if isinstance(exc, ApiError):
        status = exc.status_code or 0
        body = str(exc.body)[:300]
        if status == 429:
            return True, RateLimitedError(f"{what} was rate limited (429) {tried}", provider=PROVIDER)
        if status >= 500:
            return True, ProviderResponseError(f"{what} failed with {status} {tried}: {body}",
                                               provider=PROVIDER)
        if 200 <= status < 300:
            return False, ProviderResponseError(f"{what} returned a malformed body: {body!r}",
                                                provider=PROVIDER)
        if status in (401, 403, 498):
            return False, ProviderResponseError(
                f"{what} was refused ({status}): check COHERE_API_KEY", provider=PROVIDER)
        return False, ProviderResponseError(f"{what} was rejected ({status}): {body}", provider=PROVIDER)
    if isinstance(exc, ParsingError):
        return False, ProviderResponseError(f"{what} returned a malformed body: {str(exc.body)[:300]!r}",
                                            provider=PROVIDER)
    if isinstance(exc, httpx.TimeoutException):
        return True, ProviderTimeoutError(f"{what} got no answer in time {tried}", provider=PROVIDER)
    if isinstance(exc, httpx.TransportError):
        return True, ProviderTimeoutError(f"{what} could not reach the API {tried}: {exc!r}",
                                          provider=PROVIDER)
    return False, ProviderResponseError(f"{what} returned an unusable answer: {exc!r}", provider=PROVIDER)


class _CohereBase:
    """Client, retry loop and shutdown shared by the embedder and the reranker."""

    def __init__(
        self,
        *,
        api_key: SecretStr | None,
        base_url: str | None,
        timeout: float,
        retry: RetryPolicy,
        http_client: httpx.AsyncClient | None,
    ) -> None:
        if api_key is None or not api_key.get_secret_value().strip():
            raise ConfigurationError("COHERE_API_KEY is not set: the Cohere models need it")
        if timeout <= 0:
            raise ConfigurationError(f"provider timeout {timeout} must be positive")
        self._retry = retry
        self._http = http_client or httpx.AsyncClient(timeout=timeout)
        self.base_url = base_url
        self._client = cohere.AsyncClientV2(
            api_key=api_key.get_secret_value(),
            base_url=base_url,
            timeout=timeout,
            max_retries=0,  # the loop below retries; the SDK's own retries would multiply it
            httpx_client=self._http,
            log_warning_experimental_features=False,
        )

    async def _with_retries(self, what: str, call: Callable[[], Awaitable[T]]) -> T:
        attempt = 0
        while True:
            try:
                return await call()
            except (ApiError, ParsingError, httpx.HTTPError) as exc:
                retryable, error = _classify(exc, what, attempt + 1)
                if not retryable or attempt >= self._retry.retries:
                    raise error from exc
                retry_after = _retry_after(exc) if isinstance(exc, ApiError) else None
                await asyncio.sleep(self._retry.delay(attempt, retry_after))
                attempt += 1

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self._http.aclose()


class CohereEmbedder(_CohereBase):
    """``Embedder`` on Cohere embed (v2 API), optionally with local BM25 sparse vectors.

    Raises:
        RateLimitedError: 429 after the retries.
        ProviderTimeoutError: no answer (or no connection) after the retries.
        ProviderResponseError: 5xx after the retries, another 4xx, or a malformed body.
    """

    def __init__(
        self,
        *,
        api_key: SecretStr | None,
        model: str = DEFAULT_EMBED_MODEL,
        base_url: str | None = None,
        output_dimension: int | None = None,
        timeout: float = 30.0,
        retries: int = 3,
        retry_base_delay: float = 0.5,
        retry_max_delay: float = 8.0,
        sparse_query: SparseFn | None = None,
        sparse_document: SparseFn | None = None,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        """Build the client (nothing is sent until the first embedding).

        Args:
            api_key: Cohere API key.
            model: embedding model, e.g. ``embed-v4.0``.
            base_url: API root (``COHERE_BASE_URL``); None for Cohere's own.
            output_dimension: shorter vectors (embed-v4.0: 256, 512, 1024 or 1536).
            timeout: seconds per HTTP request.
            retries: extra attempts on 429, 5xx and timeouts.
            retry_base_delay: first backoff delay in seconds.
            retry_max_delay: upper bound of one backoff delay.
            sparse_query: BM25 query vector of a text (``LocalEmbedder.sparse_query``).
            sparse_document: BM25 document vector of a text (``LocalEmbedder.sparse_document``).
            http_client: the httpx client to use (tests); closed by ``aclose()``.

        Raises:
            ConfigurationError: no API key, only one sparse function, or a bad output_dimension.
        """
        if (sparse_query is None) != (sparse_document is None):
            raise ConfigurationError(
                "give both sparse_query and sparse_document (hybrid search) or neither (dense only)"
            )
        if output_dimension is not None and (
            output_dimension < 1 or (model == "embed-v4.0" and output_dimension not in V4_DIMENSIONS)
        ):
            raise ConfigurationError(
                f"output_dimension {output_dimension} is not supported by {model}; "
                f"embed-v4.0 offers {sorted(V4_DIMENSIONS)}"
            )
        super().__init__(
            api_key=api_key, base_url=base_url, timeout=timeout, http_client=http_client,
            retry=RetryPolicy(retries=retries, base_delay=retry_base_delay, max_delay=retry_max_delay),
        )
        self.model = model
        self._output_dimension = output_dimension
        self._dimension = output_dimension or KNOWN_DIMENSIONS.get(model)
        self._sparse_query = sparse_query
        self._sparse_document = sparse_document

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        *,
        sparse_query: SparseFn | None = None,
        sparse_document: SparseFn | None = None,
        output_dimension: int | None = None,
    ) -> CohereEmbedder:
        """Build from ``COHERE_API_KEY``, ``COHERE_BASE_URL``, ``RAGBOT_COHERE_EMBED_MODEL`` and
        the provider timeout/retries.

        Raises:
            ConfigurationError: ``COHERE_API_KEY`` is not set.
        """
        return cls(
            api_key=settings.cohere_api_key, model=settings.cohere_embed_model,
            base_url=settings.cohere_base_url,
            output_dimension=output_dimension or settings.cohere_output_dimension,
            timeout=settings.provider_timeout, retries=settings.provider_retries,
            sparse_query=sparse_query, sparse_document=sparse_document,
        )

    @property
    def model_id(self) -> str:
        """``cohere:<model>`` (``+bm25`` when hybrid); the collection records the dimension beside it.

        Hybrid and dense-only collections differ in what they store, so their ids differ: a
        dense-only collection would otherwise silently return no sparse hits to a hybrid query.
        """
        return f"{PROVIDER}:{self.model}" + ("+bm25" if self.hybrid else "")

    @property
    def dimension(self) -> int:
        """Length of the dense vectors (configured, known for the model, or learned).

        Raises:
            ConfigurationError: an unknown model asked before its first embedding.
        """
        if self._dimension is None:
            raise ConfigurationError(
                f"the dimension of Cohere model {self.model!r} is unknown until its first "
                "embedding: embed something first or set output_dimension"
            )
        return self._dimension

    @property
    def hybrid(self) -> bool:
        """True when responses carry a sparse BM25 vector too."""
        return self._sparse_query is not None

    async def _embed(self, texts: Sequence[str], input_type: InputType) -> list[list[float]]:
        kwargs: dict[str, Any] = {
            "model": self.model, "input_type": input_type, "texts": list(texts),
            "embedding_types": ["float"], "request_options": {"max_retries": 0},
        }
        if self._output_dimension is not None:
            kwargs["output_dimension"] = self._output_dimension
        what = f"embedding {len(texts)} text(s) with {self.model}"
        response = await self._with_retries(what, lambda: self._client.embed(**kwargs))
        vectors = getattr(getattr(response, "embeddings", None), "float_", None)
        if not isinstance(vectors, list) or len(vectors) != len(texts):
            got = len(vectors) if isinstance(vectors, list) else type(vectors).__name__
            raise ProviderResponseError(
                f"{what} returned {got} float embeddings for {len(texts)} texts", provider=PROVIDER
            )
        try:
            rows = [[float(x) for x in row] for row in vectors]
        except (TypeError, ValueError) as exc:
            raise ProviderResponseError(f"{what} returned non-numeric embeddings", provider=PROVIDER) from exc
        for row in rows:
            expected = self._dimension
            if expected is None:
                self._dimension = expected = len(row)
            if len(row) != expected or not row:
                raise ProviderResponseError(
                    f"{what} returned a vector of length {len(row)}; expected {expected}",
                    provider=PROVIDER,
                )
        return rows

    def _sparse(self, text: str, input_type: InputType) -> SparseVector | None:
        fn = self._sparse_document if input_type == "search_document" else self._sparse_query
        return fn(text) if fn is not None else None

    async def embed_query(self, request: EmbeddingRequest) -> EmbeddingResponse:
        """Embed one text with the request's input type (``search_query`` by default)."""
        start = time.perf_counter()
        (dense,) = await self._embed([request.query_text], request.input_type)
        return EmbeddingResponse(
            embedding_vector=dense,
            sparse_vector=self._sparse(request.query_text, request.input_type),
            model_used=self.model_id,
            execution_time=time.perf_counter() - start,
        )

    async def embed_documents(self, texts: Sequence[str]) -> list[EmbeddingResponse]:
        """Embed passages as ``search_document``, 96 per API call, in order."""
        responses: list[EmbeddingResponse] = []
        # Batches go one after another: ingestion is not latency-bound, and parallel
        # calls would only reach the per-minute rate limit sooner.
        for start_index in range(0, len(texts), EMBED_BATCH):
            batch = list(texts[start_index:start_index + EMBED_BATCH])
            start = time.perf_counter()
            dense = await self._embed(batch, "search_document")
            each = (time.perf_counter() - start) / len(batch)
            responses.extend(
                EmbeddingResponse(
                    embedding_vector=vec, sparse_vector=self._sparse(text, "search_document"),
                    model_used=self.model_id, execution_time=each,
                )
                for text, vec in zip(batch, dense, strict=True)
            )
        return responses


class CohereReranker(_CohereBase):
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
