"""Retrieval metrics as pure functions: nDCG@k (linear gains), Recall@k, MRR@k, percentiles."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass

CUTOFFS = (10, 100)
Qrels = dict[str, dict[str, int]]


def dcg(gains: Sequence[float]) -> float:
    """Discounted cumulative gain of gains in rank order (linear gain, log2 discount).

    Args:
        gains: the relevance grade of each ranked item, best rank first.

    Returns:
        ``sum(g_i / log2(i + 2))`` over 0-based ranks ``i``.
    """
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains))


def ndcg_at_k(ranked: Sequence[str], judged: Mapping[str, int], k: int) -> float:
    """Normalised DCG of the first ``k`` results.

    Args:
        ranked: document ids, best first.
        judged: relevance grade per document id (0 or absent: not relevant).
        k: cutoff.

    Returns:
        A value in [0, 1]; 0.0 when no document is relevant.
    """
    ideal = dcg(sorted((g for g in judged.values() if g > 0), reverse=True)[:k])
    if ideal <= 0:
        return 0.0
    return dcg([max(0, judged.get(doc, 0)) for doc in ranked[:k]]) / ideal


def recall_at_k(ranked: Sequence[str], judged: Mapping[str, int], k: int) -> float:
    """Share of the relevant documents found in the first ``k`` results (0.0 if none is relevant)."""
    relevant = {doc for doc, grade in judged.items() if grade > 0}
    if not relevant:
        return 0.0
    return len(relevant.intersection(ranked[:k])) / len(relevant)


def mrr_at_k(ranked: Sequence[str], judged: Mapping[str, int], k: int) -> float:
    """Reciprocal rank of the first relevant result within the first ``k`` (0.0 if none)."""
    for rank, doc in enumerate(ranked[:k], start=1):
        if judged.get(doc, 0) > 0:
            return 1.0 / rank
    return 0.0


def percentile(values: Sequence[float], pct: float) -> float:
    """The ``pct``-th percentile with linear interpolation between closest ranks.

    Args:
        values: samples (any order).
        pct: in [0, 100].

    Returns:
        0.0 for no samples.
    """
    if not values:
        return 0.0
    ordered = sorted(values)
    position = (len(ordered) - 1) * pct / 100
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@dataclass(slots=True)
class Row:
    """One system's scores over one split."""

    system: str
    queries: int
    ndcg_10: float
    recall_10: float
    recall_100: float
    mrr_10: float
    latency_p50_ms: float
    latency_p99_ms: float

    def metrics(self) -> dict[str, float]:
        """The numeric columns by name."""
        return {k: v for k, v in asdict(self).items() if k not in ("system", "queries")}


def score_run(
    system: str,
    runs: Mapping[str, Sequence[str]],
    qrels: Qrels,
    latencies_ms: Sequence[float],
) -> Row:
    """Average the metrics over the judged queries.

    Args:
        system: the row's label.
        runs: ranked document ids per query id.
        qrels: judgements per query id; every query here is scored (missing run = empty).
        latencies_ms: one search latency per query.

    Returns:
        The row; metrics are means over ``qrels``' queries.
    """
    n = len(qrels)
    if n == 0:
        raise ValueError("no judged queries to score")

    def mean(fn: Callable[[Sequence[str], Mapping[str, int]], float]) -> float:
        return sum(fn(runs.get(q, []), judged) for q, judged in qrels.items()) / n

    return Row(
        system=system,
        queries=n,
        ndcg_10=mean(lambda r, j: ndcg_at_k(r, j, 10)),
        recall_10=mean(lambda r, j: recall_at_k(r, j, 10)),
        recall_100=mean(lambda r, j: recall_at_k(r, j, 100)),
        mrr_10=mean(lambda r, j: mrr_at_k(r, j, 10)),
        latency_p50_ms=percentile(latencies_ms, 50),
        latency_p99_ms=percentile(latencies_ms, 99),
    )


def ratio(ours: Row, baseline: Row) -> dict[str, float | None]:
    """Each metric of ``ours`` divided by the baseline's (None where the baseline is 0)."""
    base = baseline.metrics()
    return {k: (v / base[k] if base[k] else None) for k, v in ours.metrics().items()}
