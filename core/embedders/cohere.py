"""``CohereEmbedder``: the ``Embedder`` on Cohere embed (v2 API, embed-v4.0 by default).

Calls go through ``core/providers/cohere.py:CohereClient`` (one retry policy, one error
table for every provider). Cohere returns dense vectors only. Hybrid search keeps
working when the embedder is given the local BM25 functions
(``LocalEmbedder.sparse_query`` and ``sparse_document``): each response then carries
both vectors.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import httpx
from pydantic import SecretStr

from core.errors import ConfigurationError, ProviderResponseError
from core.models import EmbeddingRequest, EmbeddingResponse, InputType, SparseVector
from core.providers.cohere import PROVIDER, CohereClient
from core.providers.retry import RetryPolicy
from core.settings import Settings

DEFAULT_EMBED_MODEL = "embed-v4.0"
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


class CohereEmbedder(CohereClient):
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
