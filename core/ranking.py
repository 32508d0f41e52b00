"""Fusion of dense and sparse candidates, and the calibrated relevance score.

Two different numbers come out of ranking, on purpose:

* the **fused score** orders chunks: a convex combination of the dense and the
  sparse scores, each min-max normalised over the query's candidates
  (``convex(bm25=1-w,dense=w)``). Plain RRF is worse here: a weak dense model
  drags BM25 down (see BENCHMARKS.md).
* the **relevance** is what ``RetrievedChunk.score`` reports and what the
  threshold is applied to. Min-max scores are relative (the best chunk is always
  1.0 even for an off-topic question), so relevance is absolute instead:

      relevance = COVERAGE_WEIGHT * coverage + (1 - COVERAGE_WEIGHT) * semantic

  where ``coverage`` is the share of the question's distinct search terms
  (stemmed, stopwords removed) that occur in the chunk, and ``semantic`` maps
  the dense cosine similarity linearly from [COS_FLOOR, COS_CEIL] onto [0, 1].
  A relevance of 0.3 (the default threshold) means, roughly, "a third of the
  question's terms are present with some semantic agreement"; an off-topic
  question scores near 0 on both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core.protocols import Hit, HybridHits

COVERAGE_WEIGHT = 0.6
COS_FLOOR = 0.1
COS_CEIL = 0.6


@dataclass(frozen=True, slots=True)
class Fused:
    """One candidate after fusion."""

    chunk_id: str
    fused: float
    dense: float | None
    sparse: float | None
    payload: dict[str, Any]


def algorithm_name(dense_weight: float) -> str:
    """The honest name recorded in RankedResults.ranking_algorithm."""
    return f"convex(bm25={1 - dense_weight:.2g},dense={dense_weight:.2g})"


def _minmax(hits: Sequence[Hit]) -> dict[str, float]:
    if not hits:
        return {}
    scores = [h.score for h in hits]
    lo, hi = min(scores), max(scores)
    span = hi - lo
    if span <= 1e-12:
        return {h.chunk_id: 1.0 for h in hits}
    return {h.chunk_id: (h.score - lo) / span for h in hits}


def fuse(hits: HybridHits, *, dense_weight: float) -> list[Fused]:
    """Combine dense and sparse candidates, best first (ties broken by chunk id).

    A chunk missing from one list scores 0 there: it was not among that
    retriever's candidates, so it is below that list's minimum.
    """
    dense_n = _minmax(hits.dense)
    sparse_n = _minmax(hits.sparse)
    if not hits.sparse:  # dense only (query of stopwords, or a dense-only embedder)
        dense_weight = 1.0
    raw_dense = {h.chunk_id: h.score for h in hits.dense}
    raw_sparse = {h.chunk_id: h.score for h in hits.sparse}
    payloads = {h.chunk_id: h.payload for h in (*hits.sparse, *hits.dense)}
    fused = [
        Fused(
            chunk_id=cid,
            fused=dense_weight * dense_n.get(cid, 0.0) + (1 - dense_weight) * sparse_n.get(cid, 0.0),
            dense=raw_dense.get(cid),
            sparse=raw_sparse.get(cid),
            payload=payload,
        )
        for cid, payload in payloads.items()
    ]
    fused.sort(key=lambda f: (-f.fused, f.chunk_id))
    return fused


def semantic_score(cosine: float | None) -> float:
    """Map a dense cosine similarity onto [0, 1] (see the module docstring)."""
    if cosine is None:
        return 0.0
    return min(1.0, max(0.0, (cosine - COS_FLOOR) / (COS_CEIL - COS_FLOOR)))


def coverage(query_terms: frozenset[int], chunk_terms: frozenset[int]) -> float:
    """Share of the question's distinct terms present in the chunk."""
    if not query_terms:
        return 0.0
    return len(query_terms & chunk_terms) / len(query_terms)


def relevance(*, cosine: float | None, term_coverage: float) -> float:
    """The calibrated [0, 1] relevance reported as RetrievedChunk.score."""
    value = COVERAGE_WEIGHT * term_coverage + (1 - COVERAGE_WEIGHT) * semantic_score(cosine)
    return round(min(1.0, max(0.0, value)), 6)


def select(
    fused: Sequence[Fused],
    relevances: Mapping[str, float],
    *,
    top_k: int,
    threshold: float,
) -> list[tuple[Fused, float]]:
    """Keep the ``top_k`` best fused chunks whose relevance reaches ``threshold``."""
    kept: list[tuple[Fused, float]] = []
    for item in fused:
        rel = relevances.get(item.chunk_id, 0.0)
        if rel >= threshold:
            kept.append((item, rel))
            if len(kept) == top_k:
                break
    return kept
