"""Hybrid retrieval as one reusable object: embed -> search both retrievers -> fuse -> score.

``RagPipeline`` calls the steps one by one so it can log each (embedding_generated,
retrieval_performed, results_filtered, results_ranked); the evaluation
(``core/eval/retrieval.py``) calls the same steps with ``top_k`` up to 100. The
``RetrievalRequest`` is the store's whole input: its ``candidates`` (``depth``) say
how many hits each retriever returns, so ``top_k`` (capped at 20 for API callers)
never limits how deep the ranking goes. ``respond`` turns the ranking into the
``RetrievalResponse``: every kept hit becomes a RetrievedChunk (RETRIEVED), is
checked against the chunk rules (a bad stored chunk is dropped and reported, never
fatal) and becomes VALIDATED; chunks are ordered by the score users see.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from core.models import (
    ChunkState,
    EmbeddingRequest,
    EmbeddingResponse,
    RetrievalRequest,
    RetrievalResponse,
    RetrievalStats,
    RetrievedChunk,
)
from core.protocols import Embedder, HybridHits, VectorStore
from core.retrieval.ranking import (
    Fused,
    Normalisation,
    algorithm_name,
    chunk_floor,
    coverage,
    fuse,
    relevance,
    select,
    title_boost,
    without_changelog,
    without_repeats,
)
from core.retrieval.terms import quoted_phrases, typed_names
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
    #: relevances of the first three candidates (the first counts) and how many of the
    #: question's terms each holds, the best question-chunk cosine among the first ten (local
    #: model's scale) and how many pages the first five come from; and whether one of the
    #: first three holds, word for word, a phrase the question quotes or a code name it types.
    top_relevances: tuple[float, ...] = ()
    top_held: tuple[int, ...] = ()
    best_cosine: float = 0.0
    top_pages: int = 0
    named: bool = False
    #: The lowest relevance a kept chunk has or needed (``chunk_floor``, the chunk of a quoted
    #: phrase or typed name under it); None: the request's threshold.
    floor: float | None = None


#: How many of the fused candidates are read for a phrase the question quotes.
NAMED_DEPTH = 3


def holding_quoted(question: str, texts: Iterable[str]) -> list[bool]:
    """For each of ``texts``, whether it holds a phrase ``question`` quotes or a code name it types.

    Word for word: a quoted phrase has two words or more; a code name is ``api.insecure``,
    ``--soft-time-limit``, ``keyType`` (``typed_names``). People quote or type the name of what
    they ask about, and docs that write that very name discuss it.
    """
    texts = list(texts)
    # Whole words only: 'git add' is not in "digit additions".
    patterns = [re.compile(rf"(?<!\w){re.escape(phrase)}(?!\w)") for phrase in quoted_phrases(question)]
    patterns += typed_names(question)
    if not patterns:
        return [False] * len(texts)
    flat = (" ".join(text.lower().split()) for text in texts)  # each text normalised once
    return [any(p.search(text) for p in patterns) for text in flat]


def names_quoted(question: str, texts: Iterable[str]) -> bool:
    """Whether one of ``texts`` holds a phrase ``question`` quotes or a code name it types, word for word.

    However many chat words around the name lower the other signals (``holding_quoted``).
    """
    return any(holding_quoted(question, texts))


def quoted_floor(question: str, head: Sequence[Fused], relevances: Mapping[str, float],
                 threshold: float) -> dict[str, float]:
    """``relevances`` with every chunk holding a phrase ``question`` quotes, or a code name it types,
    raised to ``threshold``.

    A chunk holding the very phrase a question quotes ("prof keeps saying 'morphological
    computation'") or the name it types (``api.insecure``) discusses it, however many chat words
    around the name lower its share of the question's terms; without the floor, a chunk holding
    the chat words is quoted instead.
    The raised value only decides what is kept: the chunk's score stays its own relevance.
    """
    held = holding_quoted(question, (chunk_text(f.payload) for f in head))
    return {**relevances, **{f.chunk_id: max(relevances[f.chunk_id], threshold)
                             for f, holds in zip(head, held, strict=True) if holds}}


def chunk_text(payload: Mapping[str, Any]) -> str:
    """The text whose terms a chunk covers: its title, section and content."""
    return f"{payload.get('title', '')} {payload.get('section', '')} {payload.get('content', '')}"


def chunk_from_payload(payload: Mapping[str, Any], score: float) -> RetrievedChunk:
    """A stored payload as a RetrievedChunk (state RETRIEVED) with ``score`` as its relevance.

    Raises:
        ValidationError, KeyError, TypeError: the payload breaks a chunk rule or lacks a field.
    """
    return RetrievedChunk(
        chunk_id=str(payload["chunk_id"]),
        content=payload["content"],
        score=score,
        url=payload["url"],
        title=payload.get("title") or payload["source_document"],
        section=payload.get("section", ""),
        headings=payload.get("headings", []),
        chunk_index=payload.get("chunk_index", 0),
        source_document=payload["source_document"],
        page_number=payload.get("page_number"),
        tags=payload.get("tags", []),
    )


def bad_chunk_reason(exc: Exception) -> str:
    """One line naming what a stored chunk breaks."""
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "chunk"
        return f"{field}: {str(first['msg']).removeprefix('Value error, ')}"
    if isinstance(exc, KeyError):
        return f"the stored payload has no {exc.args[0]!r}"
    return str(exc)


def by_score(chunks: Sequence[RetrievedChunk]) -> list[RetrievedChunk]:
    """Chunks ordered by the score users see, best first; ties keep their fused order."""
    return sorted(chunks, key=lambda c: -c.score)


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
        """Embed the question; the response's ``query_text`` names the text embedded, whatever the embedder.

        Raises:
            ProviderError: a remote embedder failed.
        """
        embedding = await self.embedder.embed_query(EmbeddingRequest(query_text=text))
        return embedding if embedding.query_text else embedding.model_copy(update={"query_text": text})

    def build_request(
        self,
        text: str,
        embedding: EmbeddingResponse,
        *,
        top_k: int,
        threshold: float | None = None,
        filters: dict[str, Any] | None = None,
        collection: str | None = None,
    ) -> RetrievalRequest:
        """The store's input: both embeddings, ``max(candidates, top_k)`` hits per retriever.

        Raises:
            ValidationError: a bad threshold, filter or collection name.
        """
        return RetrievalRequest(
            query_embedding=embedding.embedding_vector,
            sparse_embedding=embedding.sparse_vector,
            query_text=text,
            embedding_model=embedding.model_used,
            top_k=min(top_k, _REQUEST_TOP_K_CAP),
            threshold=threshold,
            filters=filters,
            collection_name=collection or self.collection,
            candidates=max(self.candidates, top_k),
        )

    async def search(self, request: RetrievalRequest) -> HybridHits:
        """Ask the store for ``request.depth`` hits from each retriever.

        Raises:
            StoreError: the store failed or the collection is missing.
        """
        return await self.store.search(request)

    def respond(self, request: RetrievalRequest, hits: HybridHits, ranked: Ranked) -> RetrievalResponse:
        """The ranking as a RetrievalResponse: VALIDATED chunks, best score first.

        A kept hit whose stored payload breaks a chunk rule (an invalid URL, text over the
        limit) is dropped and named in ``dropped_chunks``: one bad chunk must not fail a question.
        """
        start = time.perf_counter()
        chunks: list[RetrievedChunk] = []
        dropped: list[str] = []
        for fused, rel in ranked.picked:
            try:
                chunk = chunk_from_payload(fused.payload, rel)
            except (ValidationError, KeyError, TypeError) as exc:
                dropped.append(f"{fused.chunk_id}: {bad_chunk_reason(exc)}")
                continue
            chunks.append(chunk.advance(ChunkState.VALIDATED))
        threshold = ranked.floor if ranked.floor is not None else request.threshold or 0.0
        return RetrievalResponse(
            retrieved_chunks=by_score(chunks),
            execution_time=ranked.seconds + time.perf_counter() - start,
            retrieval_stats=RetrievalStats(total_candidates=hits.total_candidates, search_threshold=threshold,
                                           collection_name=request.collection_name),
            dropped_chunks=dropped,
            total_matches=max(sum(r >= threshold for r in ranked.relevances.values()), len(chunks)),
        )

    def rank(self, text: str, hits: HybridHits, *, top_k: int, threshold: float,
             idf: Callable[[int], float] | None = None, near_best: float = 0.0) -> Ranked:
        """Fuse, score relevance and keep the ``top_k`` best chunks reaching ``threshold``.

        Args:
            text: the question searched (its terms feed the coverage).
            hits: both retrievers' candidates.
            top_k: most chunks kept.
            threshold: minimum relevance; 0 keeps the ``top_k`` best whatever their relevance.
            idf: term weights of the collection; with them, a chunk whose title or section names
                the question's distinctive terms moves up (``title_boost``).
            near_best: when the best candidate only just reaches ``threshold``, chunks within
                this share of its relevance are kept too (``chunk_floor``), and so are chunks
                holding a phrase the question quotes (``quoted_floor``); 0 makes ``threshold``
                a hard floor.

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
        chunk_terms = {f.chunk_id: self.terms(chunk_text(f.payload)) for f in head}
        rels = {
            f.chunk_id: relevance(
                cosine=cosines[f.chunk_id],
                term_coverage=coverage(query_terms, chunk_terms[f.chunk_id]),
            )
            for f in head
        }
        fused_head = head  # answerability reads the fused order, before any heading boost
        if idf is not None:
            head = title_boost(head, query_terms, {f.chunk_id: self.terms(
                f"{f.payload.get('title', '')} {f.payload.get('section', '')}") for f in head}, idf)
        floor = chunk_floor(threshold, (rels[f.chunk_id] for f in head), near_best)
        # Only a configured floor gives way to a quoted phrase; an asker's own is a hard one.
        kept = quoted_floor(text, head, rels, floor) if near_best else rels
        head = without_changelog(head, text, kept, threshold=floor)
        # Each chunk keeps its own relevance as its score, whatever let it through. A passage kept
        # twice is shown once; no other takes its place (the answer reads what was chosen).
        selected = without_repeats([f for f, _ in select(head, kept, top_k=top_k, threshold=floor)])
        picked = [(f, rels[f.chunk_id]) for f in selected]
        floor = min([floor, *(rel for _, rel in picked)])  # every kept chunk reaches what is reported
        algorithm = algorithm_name(self.dense_weight if hits.sparse else 1.0, self.normalisation)
        near = [c for f in fused_head[:10] if (c := cosines.get(f.chunk_id)) is not None]
        # Candidates sharing no term with the question say nothing about it (a tiny collection
        # returns its every chunk); the answerability signals read the ones that match.
        matching = [f for f in fused_head if rels[f.chunk_id] > 0]
        return Ranked(picked=picked, algorithm=algorithm, seconds=time.perf_counter() - start,
                      relevances=rels, top_relevances=tuple(rels[f.chunk_id] for f in matching[:3]),
                      top_held=tuple(len(query_terms & chunk_terms[f.chunk_id]) for f in matching[:3]),
                      best_cosine=max(near, default=0.0),
                      top_pages=len({f.payload.get("source_document") for f in matching[:5]}),
                      named=names_quoted(text, (chunk_text(f.payload) for f in fused[:NAMED_DEPTH])),
                      floor=floor)
