"""Hybrid retrieval as one reusable object: embed -> search both retrievers -> fuse -> score.

``RagPipeline.retrieve`` calls the three steps one by one so it can log each
(embedding_generated, retrieval_performed, results_ranked); the evaluation
(``core/eval/retrieval.py``) calls the same steps with ``top_k`` up to 100. The
store is asked through ``VectorStore.search`` with ``candidates`` per
retriever, so ``RetrievalRequest.top_k`` (capped at 20 for API callers) never
limits how deep the ranking goes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core.models import EmbeddingRequest, EmbeddingResponse, RetrievalRequest
from core.protocols import Embedder, HybridHits, VectorStore
from core.retrieval.ranking import (
    Fused,
    Normalisation,
    algorithm_name,
    coverage,
    fuse,
    relevance,
    select,
    title_boost,
)
from core.settings import Settings

#: Turns a text into the set of its search-term ids (the sparse model's vocabulary).
TermFn = Callable[[str], frozenset[int]]
#: Cosine similarities of a question with several texts, from the model relevance is calibrated on.
CosineFn = Callable[[str, Sequence[str]], list[float]]
#: RetrievalRequest refuses a larger top_k; the store does not use it (``candidates`` does).
_REQUEST_TOP_K_CAP = 20


@dataclass(frozen=True, slots=True)
class Ranked:
    """What ``HybridRetriever.rank`` kept, best first, with the algorithm's honest name.

    ``relevances`` holds the relevance of every candidate that was scored (the
    head of the fused list), kept or not: calibration reads it.
    """

    picked: list[tuple[Fused, float]]
    algorithm: str
    seconds: float
    relevances: dict[str, float]
    #: What ``core.retrieval.answerability`` judges from, read off the fused order: the
    #: relevances of the first three candidates, the best question-chunk cosine among the
    #: first ten (local model's scale) and how many pages the first five come from.
    top_relevances: tuple[float, ...] = ()
    best_cosine: float = 0.0
    top_pages: int = 0


def chunk_text(payload: Mapping[str, Any]) -> str:
    """The text whose terms a chunk covers: its title, section and content."""
    return f"{payload.get('title', '')} {payload.get('section', '')} {payload.get('content', '')}"


class HybridRetriever:
    """Dense + sparse search with convex fusion and calibrated relevance.

    Args:
        embedder: embeds questions (dense + sparse).
        store: holds the chunks.
        terms: search-term ids of a text, for the relevance score's coverage part.
        collection: the collection searched.
        candidates: hits asked of each retriever before fusion.
        dense_weight: weight of the dense list in the fusion.
        normalisation: how each list is normalised before fusion.
        cosine: when the retrieval embedder is not the local model (Cohere), the question-chunk
            cosines used for relevance come from here instead: relevance is calibrated on the
            local model's cosine scale, so its meaning (and the one threshold) stays the same
            whichever embedder retrieved the chunks.
    """

    def __init__(
        self,
        *,
        embedder: Embedder,
        store: VectorStore,
        terms: TermFn,
        collection: str,
        candidates: int,
        dense_weight: float,
        normalisation: Normalisation = "minmax",
        cosine: CosineFn | None = None,
    ) -> None:
        self.embedder = embedder
        self.store = store
        self.terms = terms
        self.collection = collection
        self.candidates = candidates
        self.dense_weight = dense_weight
        self.normalisation = normalisation
        self.cosine = cosine

    @classmethod
    def from_settings(
        cls, settings: Settings, *, embedder: Embedder, store: VectorStore, terms: TermFn,
        collection: str | None = None, cosine: CosineFn | None = None,
    ) -> HybridRetriever:
        """Build one from ``candidates`` and ``dense_weight`` of the settings."""
        return cls(
            embedder=embedder, store=store, terms=terms,
            collection=collection or settings.collection,
            candidates=settings.candidates, dense_weight=settings.dense_weight, cosine=cosine,
        )

    async def embed(self, text: str) -> EmbeddingResponse:
        """Embed the question.

        Raises:
            ProviderError: a remote embedder failed.
        """
        return await self.embedder.embed_query(EmbeddingRequest(query_text=text))

    async def search(
        self,
        text: str,
        embedding: EmbeddingResponse,
        *,
        top_k: int,
        threshold: float | None = None,
        filters: dict[str, Any] | None = None,
    ) -> HybridHits:
        """Ask both retrievers for ``max(candidates, top_k)`` hits each.

        Raises:
            StoreError: the store failed or the collection is missing.
        """
        request = RetrievalRequest(
            query_embedding=embedding.embedding_vector,
            sparse_embedding=embedding.sparse_vector,
            query_text=text,
            embedding_model=embedding.model_used,
            top_k=min(top_k, _REQUEST_TOP_K_CAP),
            threshold=threshold,
            filters=filters,
            collection_name=self.collection,
        )
        return await self.store.search(self.collection, request, candidates=max(self.candidates, top_k))

    def rank(self, text: str, hits: HybridHits, *, top_k: int, threshold: float,
             idf: Callable[[int], float] | None = None) -> Ranked:
        """Fuse, score relevance and keep the ``top_k`` best chunks reaching ``threshold``.

        Args:
            text: the question searched (its terms feed the coverage).
            hits: both retrievers' candidates.
            top_k: most chunks kept.
            threshold: minimum relevance; 0 keeps the ``top_k`` best whatever their relevance.
            idf: term weights of the collection; with them, a chunk whose title or section names
                the question's distinctive terms moves up (``title_boost``).

        Returns:
            The kept (candidate, relevance) pairs in fused order.
        """
        start = time.perf_counter()
        fused = fuse(hits, dense_weight=self.dense_weight, normalisation=self.normalisation)
        # Relevance needs each chunk's terms: only computed for the head of the list, which
        # is all that can reach top_k (everything below a 4x margin is noise anyway).
        head = fused[: max(top_k * 4, 20)] if threshold > 0 else fused[:top_k]
        query_terms = self.terms(text)
        cosines = (dict(zip((f.chunk_id for f in head),
                            self.cosine(text, [chunk_text(f.payload) for f in head]), strict=True))
                   if self.cosine is not None and head else {f.chunk_id: f.dense for f in head})
        rels = {
            f.chunk_id: relevance(
                cosine=cosines[f.chunk_id],
                term_coverage=coverage(query_terms, self.terms(chunk_text(f.payload))),
            )
            for f in head
        }
        fused_head = head  # answerability reads the fused order, before any heading boost
        if idf is not None:
            head = title_boost(head, query_terms, {f.chunk_id: self.terms(
                f"{f.payload.get('title', '')} {f.payload.get('section', '')}") for f in head}, idf)
        picked = select(head, rels, top_k=top_k, threshold=threshold)
        algorithm = algorithm_name(self.dense_weight if hits.sparse else 1.0, self.normalisation)
        near = [c for f in fused_head[:10] if (c := cosines.get(f.chunk_id)) is not None]
        # Candidates sharing no term with the question say nothing about it (a tiny collection
        # returns its every chunk); the answerability signals read the ones that match.
        matching = [f for f in fused_head if rels[f.chunk_id] > 0]
        return Ranked(picked=picked, algorithm=algorithm, seconds=time.perf_counter() - start,
                      relevances=rels, top_relevances=tuple(rels[f.chunk_id] for f in matching[:3]),
                      best_cosine=max(near, default=0.0),
                      top_pages=len({f.payload.get("source_document") for f in matching[:5]}))
