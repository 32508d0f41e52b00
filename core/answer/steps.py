"""What the pipeline's search step hands on, and how its steps are written to the activity log."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from core.models import (
    EmbeddingResponse,
    EventType,
    RankedResults,
    RetrievalResponse,
    RetrievedContext,
    UserQuery,
)
from core.retrieval.answerability import Answerability


def short(text: str, limit: int = 300) -> str:
    """``text``, cut to ``limit`` characters for a log line."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class Scope:
    """Where and how deep one question searches: the settings unless the asker chose otherwise."""

    top_k: int
    threshold: float
    collection: str
    #: When the best candidate only just reaches the configured threshold, chunks within this
    #: share of its relevance are used too (``core.retrieval.ranking.chunk_floor``); 0 when the
    #: asker set the threshold (a hard floor).
    near_best: float = 0.0


@dataclass(frozen=True, slots=True)
class Found:
    """What the search step found for a question, and whether the docs answer it."""

    results: RankedResults
    verdict: Answerability
    #: The chunks handed on (state RETURNED), with how they were found.
    context: RetrievedContext
    #: Before reranking: candidates, threshold, collection, and bad stored chunks dropped.
    response: RetrievalResponse
    embedding: EmbeddingResponse


#: Writes one activity-log entry for a step: ``RagPipeline._log``, or nothing (``search``).
StepLog = Callable[..., Awaitable[Any]]


async def unlogged(event: EventType, query: UserQuery | None, **fields: Any) -> None:
    """The StepLog of ``RagPipeline.search``: an admin's look-up is not a question."""


def filtered_summary(response: RetrievalResponse, *, threshold: float) -> str:
    """The ``results_filtered`` log line: how many candidates were kept and why.

    ``threshold`` is the floor the search was given; the one reported (the lowest relevance
    kept) is lower when the best candidate only just reached it (``chunk_floor``) or a chunk
    holding a phrase the question quotes was kept under it (``quoted_floor``).
    """
    stats = response.retrieval_stats
    text = (f"{len(response.retrieved_chunks)} of {stats.total_candidates} candidates kept: "
            f"{response.total_matches} reached relevance {rounded_down(stats.search_threshold)}")
    if stats.search_threshold < threshold:
        text += f" (the threshold {threshold:g}, lowered near the best candidate or for a quoted phrase)"
    if response.dropped_chunks:
        text += f"; {len(response.dropped_chunks)} bad stored chunk(s) dropped"
    return text


def rounded_down(value: float) -> str:
    """``value`` to three decimals, rounded down: what is under a cut never reads as reaching it."""
    return f"{math.floor(value * 1000) / 1000:g}"
