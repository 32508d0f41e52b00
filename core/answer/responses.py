"""Build the AgentResponse of each outcome: pure functions over the pipeline's values.

``confidence_score`` = ``grounding_confidence`` x the mean relevance of the cited
chunks: an answer is only as trustworthy as its weakest link, retrieval or grounding.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from core.answer.citations import neutralize_mentions, renumber_citations, with_related
from core.answer.deadline import DeadlineExceeded
from core.errors import CollectionNotFoundError, StoreError
from core.models import AgentResponse, GroundingValidation, ResponseStatus, RetrievedChunk, UserQuery
from core.protocols import Generation

NOT_FOUND_TEXT = (
    "I couldn't find anything about that in the docs, so I won't guess. "
    "Try rephrasing with the name of the feature, command or page you mean."
)
#: Said above the pages that came closest to a question not answered (listed as its sources).
CLOSEST_TEXT = "I couldn't find an answer to that in the docs, so I won't guess. These pages came closest."
#: Pages a "not found" reply points to at most.
CLOSEST_PAGES = 3
RETRIEVAL_FAILED_TEXT = (
    "Sorry, I couldn't search the docs just now ({reason}). Please try again in a moment; "
    "if it keeps happening, give an admin this reference: {ref}."
)
NOT_INGESTED_TEXT = (
    "I can't answer yet: no documentation has been added to my knowledge base. "
    "An admin needs to run `ragbot ingest PATH` (reference: {ref})."
)
NOTIFY_TEXT = (
    "I can't ping or message people: I only answer questions about the docs. "
    "Ask me one and I'll reply with the pages I used."
)
SECRETS_TEXT = (
    "I can't share my instructions, configuration or any keys: I only answer questions about the "
    "docs. Ask me one and I'll reply with the pages I used."
)
INSTRUCTIONS_TEXT = (
    "I can't take new instructions or change how I answer: I only answer questions about the "
    "docs. Ask me one and I'll reply with the pages I used."
)
SMALL_TALK_TEXT = (
    "Happy to help! Ask me anything about the docs and I'll answer with links to the pages I used."
)


def plain_reply(query: UserQuery, started: float, text: str, *, ranking_algorithm: str | None = None,
                closest: Sequence[RetrievedChunk] = ()) -> AgentResponse:
    """An answer that quotes nothing: not found, or a friendly reply to small talk.

    Args:
        closest: chunks of the pages that came closest to a question not answered (``not_found``):
            their first ``CLOSEST_PAGES`` pages are listed as sources, none cited.
    """
    chunks = list(closest)
    return AgentResponse(
        query_id=query.query_id, query_text=query.query_text, thread_id=query.thread_id,
        response_text=text, status=ResponseStatus.NO_RELEVANT_DOCUMENTS,
        sources=with_related([], chunks, limit=CLOSEST_PAGES), retrieved_chunks=chunks,
        ranking_algorithm=ranking_algorithm,
        grounding_validation=GroundingValidation(method="none", passed=True),
        retrieval_used=ranking_algorithm is not None,
        execution_time=time.perf_counter() - started,
    )


def not_found(query: UserQuery, started: float, *, ranking_algorithm: str | None = None,
              closest: Sequence[RetrievedChunk] = ()) -> AgentResponse:
    """The "not found" reply: the closest pages listed when there are any, else a hint to rephrase."""
    text = CLOSEST_TEXT if closest else NOT_FOUND_TEXT
    return plain_reply(query, started, text, ranking_algorithm=ranking_algorithm, closest=closest)


def retrieval_failed(query: UserQuery, started: float, exc: Exception, reference: str) -> AgentResponse:
    """The search failed: say so, and give the reference of the logged error."""
    if isinstance(exc, CollectionNotFoundError):
        text = NOT_INGESTED_TEXT.format(ref=reference)
    else:
        reason = ("the knowledge base is unavailable" if isinstance(exc, StoreError)
                  else f"the search took longer than {exc.seconds:g} s" if isinstance(exc, DeadlineExceeded)
                  else "the embedding service is unavailable")
        text = RETRIEVAL_FAILED_TEXT.format(reason=reason, ref=reference)
    return AgentResponse(
        query_id=query.query_id, query_text=query.query_text, thread_id=query.thread_id,
        response_text=text, status=ResponseStatus.RETRIEVAL_FAILED, retrieval_used=True,
        reference_id=reference, execution_time=time.perf_counter() - started,
    )


def answered(query: UserQuery, started: float, generation: Generation, *, ranking_algorithm: str,
             max_sources: int) -> AgentResponse:
    """A cited answer: markers renumbered, related pages listed, status from grounding.

    Args:
        query: the question.
        started: ``time.perf_counter()`` when answering began.
        generation: what the generator wrote (its ``grounding`` set by the fallback generator).
        ranking_algorithm: how the chunks were ranked.
        max_sources: sources listed at most (cited ones first).
    """
    text, cited = renumber_citations(neutralize_mentions(generation.text), generation.chunks)
    sources = with_related(cited, generation.chunks, limit=max_sources) if cited else []
    status = ResponseStatus.VALIDATION_FAILED if generation.validation_failed else ResponseStatus.ANSWERED
    if not sources:
        # A generator that cites nothing is not grounded, whatever it says.
        status = ResponseStatus.VALIDATION_FAILED
    cited_ids = {s.chunk_id for s in cited}
    scores = [c.score for c in generation.chunks if c.chunk_id in cited_ids]
    mean_rel = sum(scores) / len(scores) if scores else 0.0
    return AgentResponse(
        query_id=query.query_id, query_text=query.query_text, thread_id=query.thread_id,
        response_text=text, status=status, sources=sources, retrieved_chunks=generation.chunks,
        confidence_score=round(generation.grounding_confidence * mean_rel, 4),
        grounding_confidence=generation.grounding_confidence,
        grounding_validation=generation.grounding or GroundingValidation(method="none", passed=True),
        retrieval_used=generation.retrieval_used, ranking_algorithm=ranking_algorithm,
        model_used=generation.model_used, execution_time=time.perf_counter() - started,
    )
