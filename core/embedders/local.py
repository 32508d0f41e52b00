"""Local embeddings that need no key and no network: BM25 sparse + WordLlama dense.

The sparse side is Qdrant's own BM25 (``qdrant_edge.Bm25``: English stemming and
stopwords; documents get saturated term frequencies, queries a weight of 1 per
term) and the collection applies IDF, so scores are true BM25. The dense side
is WordLlama's 256-dimension ``l2_supercat`` model, whose weights and tokenizer
ship inside the wheel.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from core.errors import ConfigurationError
from core.models import EmbeddingRequest, EmbeddingResponse, SparseVector

WORDLLAMA_CONFIG = "l2_supercat"
WORDLLAMA_DIM = 256
#: Changing the tokenizer settings changes sparse term ids: bump the id with them.
LOCAL_MODEL_ID = f"local:bm25-en+wordllama-{WORDLLAMA_CONFIG}-{WORDLLAMA_DIM}"
#: Passage vectors kept for ``cosines`` (256 floats each: 20,000 take about 20 MB).
_VECTOR_CACHE = 20_000
#: Passages whose term ids ``terms`` keeps, least recently read out first (a 1,500-character
#: passage takes about 15 kB with its text: 1,024 take about 15 MB).
_TERMS_CACHE = 1_024
#: Texts shorter than this (a word, a question) are read once: caching them would push out passages.
_PASSAGE_CHARS = 200


@lru_cache(maxsize=1)
def load_wordllama() -> Any:
    """Load WordLlama from the installed package only, never from a model hub.

    A plain ``WordLlama.load()`` looks for its tokenizer in a user cache and
    downloads it when missing; pointing ``cache_dir`` at the package folder
    (where the wheel ships both files) and disabling downloads keeps it offline.

    Raises:
        ConfigurationError: the wheel's files are missing.
    """
    import wordllama
    from wordllama import WordLlama

    package_dir = Path(wordllama.__file__).parent
    try:
        return WordLlama.load(
            config=WORDLLAMA_CONFIG, dim=WORDLLAMA_DIM, cache_dir=package_dir, disable_download=True
        )
    except (FileNotFoundError, ValueError, OSError) as exc:
        raise ConfigurationError(
            f"WordLlama {WORDLLAMA_CONFIG}-{WORDLLAMA_DIM} is not installed with the package "
            f"in {package_dir}: reinstall wordllama==0.4.0.post1"
        ) from exc


@lru_cache(maxsize=1)
def _bm25() -> Any:
    import qdrant_edge

    return qdrant_edge.Bm25(qdrant_edge.Bm25Config(language="english"))


def _sparse(raw: Any) -> SparseVector:
    return SparseVector.model_construct(indices=list(raw.indices), values=list(raw.values))


class LocalEmbedder:
    """The ``Embedder`` of the embedded default: BM25 sparse + WordLlama dense."""

    def __init__(self) -> None:
        self._model = load_wordllama()
        self._bm25 = _bm25()
        self._vectors: dict[str, Any] = {}
        self._passage_terms = lru_cache(maxsize=_TERMS_CACHE)(self._term_ids)

    @property
    def model_id(self) -> str:
        return LOCAL_MODEL_ID

    @property
    def dimension(self) -> int:
        return WORDLLAMA_DIM

    def sparse_query(self, text: str) -> SparseVector:
        """BM25 query vector (one weight per distinct stemmed term)."""
        return _sparse(self._bm25.embed_query(text))

    def terms(self, text: str) -> frozenset[int]:
        """The BM25 term ids of ``text``: what relevance counts as the words a passage holds.

        A passage's are cached: every question reads the terms of twenty candidates, and
        popular passages come back question after question.
        """
        return self._passage_terms(text) if len(text) >= _PASSAGE_CHARS else self._term_ids(text)

    def _term_ids(self, text: str) -> frozenset[int]:
        return frozenset(self._bm25.embed_query(text).indices)

    def sparse_document(self, text: str) -> SparseVector:
        """BM25 document vector (saturated term frequencies)."""
        return _sparse(self._bm25.embed_document(text))

    def dense(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-length WordLlama vectors."""
        return [row.tolist() for row in self._model.embed(list(texts), norm=True)]

    def cosines(self, query: str, texts: Sequence[str]) -> list[float]:
        """Cosine similarity of ``query`` with each text (passage vectors are cached)."""
        missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        vectors = self._model.embed([query, *missing], norm=True)
        for text, vector in zip(missing, vectors[1:], strict=True):
            if len(self._vectors) >= _VECTOR_CACHE:
                # Popular passages come back question after question; the oldest make room.
                del self._vectors[next(iter(self._vectors))]
            self._vectors[text] = vector
        q = vectors[0]
        return [float(self._vectors[t] @ q) for t in texts]

    def similarity(self, a: str, b: str) -> float:
        """Cosine similarity of two texts in [-1, 1] (used by grounding checks)."""
        va, vb = self._model.embed([a, b], norm=True)
        return float((va * vb).sum())

    async def embed_query(self, request: EmbeddingRequest) -> EmbeddingResponse:
        # Both models run in well under a millisecond per query, so they run inline:
        # a thread hop would cost more than the work.
        start = time.perf_counter()
        dense = self.dense([request.query_text])[0]
        sparse = (
            self.sparse_document(request.query_text)
            if request.input_type == "search_document"
            else self.sparse_query(request.query_text)
        )
        return EmbeddingResponse(
            embedding_vector=dense,
            sparse_vector=sparse,
            model_used=LOCAL_MODEL_ID,
            execution_time=time.perf_counter() - start,
        )

    async def embed_documents(self, texts: Sequence[str]) -> list[EmbeddingResponse]:
        # A batch of documents takes tens of milliseconds, and an ingest handed to `ragbot serve`
        # embeds thousands: off the event loop, so answers in the meantime are not held up.
        return await asyncio.to_thread(self._embed_documents, list(texts))

    def _embed_documents(self, texts: Sequence[str]) -> list[EmbeddingResponse]:
        start = time.perf_counter()
        dense = self.dense(texts)
        elapsed = (time.perf_counter() - start) / max(1, len(texts))
        # model_construct: these vectors come from our own model, validating 256 floats per
        # chunk again would only slow ingestion down.
        return [
            EmbeddingResponse.model_construct(
                embedding_vector=vec,
                sparse_vector=self.sparse_document(text),
                model_used=LOCAL_MODEL_ID,
                execution_time=elapsed,
            )
            for text, vec in zip(texts, dense, strict=True)
        ]
