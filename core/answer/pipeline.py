"""The answer pipeline: understand -> embed -> search -> rank -> judge -> generate -> ground.

``RagPipeline`` is the ``AnswerService`` every adapter calls. It writes one
AgentLogEntry per step, moves the query along PENDING -> PROCESSING ->
COMPLETED | FAILED, stores the conversation turns of the thread, and turns
every expected outcome into a status (``core.answer.responses`` builds each):

* ``no_relevant_documents``: the collection does not answer the question
  (``core.retrieval.answerability``), the model said so, or the message was
  small talk (a friendly reply) or had nothing to search for;
* ``retrieval_failed``: the store or the embedding service failed (the reply
  carries ``reference_id``, the id of the ``error`` log entry);
* ``validation_failed``: the generated answer could not be grounded, so the
  user gets the quoted passages over the same chunks, with a note.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from core.answer.deadline import before_deadline, question_deadline
from core.answer.followups import search_query_for
from core.answer.generators.fallback import VALIDATION_NOTE, FallbackGenerator
from core.answer.prompt import says_not_in_docs
from core.answer.responses import (
    NOT_FOUND_TEXT,
    NOT_INGESTED_TEXT,
    RETRIEVAL_FAILED_TEXT,
    SMALL_TALK_TEXT,
    answered,
    plain_reply,
    retrieval_failed,
)
from core.errors import ProviderError, QueryValidationError, StoreError
from core.models import (
    AgentLogEntry,
    AgentResponse,
    ConversationTurn,
    EventType,
    QueryStatus,
    RankedResults,
    ResponseStatus,
    RetrievedChunk,
    TurnRole,
    UserQuery,
)
from core.protocols import (
    ActivityLog,
    ConversationStore,
    Embedder,
    GenerationRequest,
    Generator,
    QueryStore,
    Reranker,
    SearchFn,
    VectorStore,
)
from core.retrieval.answerability import Answerability, judge
from core.retrieval.lexicon import Lexicon
from core.retrieval.query import understand
from core.retrieval.retriever import CosineFn, HybridRetriever
from core.settings import Settings

log = logging.getLogger(__name__)

__all__ = ["NOT_FOUND_TEXT", "NOT_INGESTED_TEXT", "RETRIEVAL_FAILED_TEXT", "SMALL_TALK_TEXT",
           "VALIDATION_NOTE", "RagPipeline"]

#: Turns a text into the set of its search-term ids (the sparse model's vocabulary).
TermFn = Callable[[str], frozenset[int]]
SimilarityFn = Callable[[str, str], float]


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class Found:
    """What the search step found for a question, and whether the docs answer it."""

    results: RankedResults
    verdict: Answerability


class RagPipeline:
    """The core's ``AnswerService``.

    Args:
        settings: thresholds, top_k, collection, history size.
        embedder, store: where chunks come from.
        generator: writes the answer (Gemini, or the extractive answerer).
        fallback: the extractive answerer, used when the generator fails or is ungrounded.
        conversations, queries, activity: SQLite-backed stores.
        terms: search-term ids of a text, for the relevance score's coverage part.
        similarity: dense similarity of two texts, for grounding checks.
        reranker: optional second-stage ranking (Cohere rerank).
        cosine: question-chunk cosines of the local model, when another model embeds (see
            HybridRetriever).
        lexicon: the collection's current vocabulary (query understanding, answerability).
        retriever: the hybrid retriever; built from the settings when not given.
    """

    def __init__(
        self,
        *,
        settings: Settings,
        embedder: Embedder,
        store: VectorStore,
        generator: Generator,
        fallback: Generator,
        conversations: ConversationStore,
        queries: QueryStore,
        activity: ActivityLog,
        terms: TermFn,
        similarity: SimilarityFn | None = None,
        reranker: Reranker | None = None,
        cosine: CosineFn | None = None,
        lexicon: Callable[[], Lexicon] = Lexicon,
        retriever: HybridRetriever | None = None,
    ) -> None:
        self.settings = settings
        self.lexicon = lexicon
        self.embedder = embedder
        self.store = store
        self.fallback = fallback
        # One generation path: the fallback generator wraps the primary (or is it, with no keys).
        self.generator = FallbackGenerator(primary=generator, fallback=fallback, similarity=similarity)
        self.uses_llm = generator is not fallback
        self.conversations = conversations
        self.queries = queries
        self.activity = activity
        self.terms = terms
        self.similarity = similarity
        self.reranker = reranker
        self.retriever = retriever or HybridRetriever.from_settings(
            settings, embedder=embedder, store=store, terms=terms, cosine=cosine)

    # ------------------------------------------------------------------ helpers
    async def _log(self, event: EventType, query: UserQuery | None, **fields: Any) -> AgentLogEntry:
        entry = AgentLogEntry(
            event_type=event,
            thread_id=query.thread_id if query else fields.pop("thread_id", None),
            query_id=query.query_id if query else None,
            query_text=query.query_text if query else fields.pop("query_text", None),
            **fields,
        )
        await self.activity.log(entry)
        return entry

    def validate(
        self, question: str, *, thread_id: str | None, user_id: str | None, user_context: str | None
    ) -> UserQuery:
        """Build the UserQuery or raise QueryValidationError naming the problem."""
        try:
            return UserQuery.model_validate(
                {"query_text": question, "thread_id": thread_id, "user_id": user_id,
                 "user_context": user_context},
                context={"max_query_length": self.settings.max_query_length},
            )
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"])
            message = str(first["msg"]).removeprefix("Value error, ")
            if field == "query_text" or message.startswith(field):
                raise QueryValidationError(message) from exc
            raise QueryValidationError(f"{field}: {message}") from exc

    # ------------------------------------------------------------------ retrieval
    async def retrieve(
        self,
        text: str,
        *,
        query: UserQuery,
        top_k: int | None = None,
        filters: dict[str, Any] | None = None,
    ) -> RankedResults:
        """Embed ``text``, search both retrievers, fuse, score and keep what passes the threshold.

        Raises:
            StoreError, ProviderError: the store or the embedding service failed.
        """
        return (await self._search(text, query=query, top_k=top_k, filters=filters)).results

    async def _search(
        self, text: str, *, query: UserQuery, top_k: int | None = None,
        filters: dict[str, Any] | None = None, lexicon: Lexicon | None = None,
    ) -> Found:
        top_k = top_k or self.settings.top_k
        threshold = self.settings.relevance_threshold
        emb = await self.retriever.embed(text)
        await self._log(EventType.EMBEDDING_GENERATED, query, execution_time=emb.execution_time,
                        response_summary=(f"{emb.model_used}, {emb.dimension} dimensions; "
                                          f"searched {_short(text)!r}"))
        start = time.perf_counter()
        hits = await self.retriever.search(text, emb, top_k=top_k, threshold=threshold, filters=filters)
        await self._log(
            EventType.RETRIEVAL_PERFORMED, query, execution_time=time.perf_counter() - start,
            response_summary=(f"{hits.total_candidates} candidates from {self.retriever.collection!r} "
                              f"(threshold {threshold:g})"),
        )
        start = time.perf_counter()
        idf = lexicon.term_idf(self.terms) if lexicon is not None and not lexicon.empty else None
        ranked_hits = self.retriever.rank(text, hits, top_k=top_k, threshold=threshold, idf=idf)
        chunks = [self._chunk(f.payload, rel) for f, rel in ranked_hits.picked]
        chunks, algorithm = await self._rerank(text, chunks, ranked_hits.algorithm, query, top_k)
        verdict = judge(relevances=ranked_hits.top_relevances, cosine=ranked_hits.best_cosine,
                        pages=ranked_hits.top_pages)
        ranked = RankedResults(ranked_chunks=chunks, ranking_algorithm=algorithm,
                               execution_time=time.perf_counter() - start)
        summary = (f"{len(chunks)} chunk(s) kept by {algorithm}; best {chunks[0].score:.2f}" if chunks
                   else f"0 chunks passed {threshold:g}")
        # The chunks with their scores: `ragbot logs show` lists them in the question's timeline.
        kept = "".join(f"; {c.score:.2f} {c.url}" for c in chunks)
        await self._log(EventType.RESULTS_RANKED, query, execution_time=ranked.execution_time,
                        response_summary=f"{summary}; {verdict.summary()}{kept}")
        return Found(results=ranked, verdict=verdict)

    async def _rerank(self, text: str, chunks: list[RetrievedChunk], algorithm: str, query: UserQuery,
                      top_k: int) -> tuple[list[RetrievedChunk], str]:
        if self.reranker is None or not chunks:
            return chunks, algorithm
        try:
            return await self.reranker.rerank(text, chunks, top_k=top_k), f"{algorithm}+{self.reranker.name}"
        except ProviderError as exc:
            # The fused order is a good answer on its own; a rerank outage must not fail it.
            await self._log(EventType.ERROR, query,
                            error_details=f"rerank failed, kept the fused order: {exc}")
            return chunks, algorithm

    @staticmethod
    def _chunk(payload: dict[str, Any], score: float) -> RetrievedChunk:
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

    # ------------------------------------------------------------------ answering
    async def answer(
        self,
        question: str,
        *,
        thread_id: str | None = None,
        user_id: str | None = None,
        user_context: str | None = None,
    ) -> AgentResponse:
        """Answer one question; see the module docstring for statuses.

        Raises:
            QueryValidationError: the question breaks a rule (an error entry is logged).
        """
        started = time.perf_counter()
        try:
            query = self.validate(question, thread_id=thread_id, user_id=user_id,
                                  user_context=user_context)
        except QueryValidationError as exc:
            await self._log(EventType.ERROR, None, thread_id=thread_id,
                            query_text=_short(question, 1000) or None,
                            error_details=f"invalid question: {exc}")
            raise
        await self.queries.create_query(query)
        await self._log(EventType.QUERY_RECEIVED, query)
        await self.queries.set_query_status(query.query_id, QueryStatus.PROCESSING)
        try:
            with question_deadline(self.settings.answer_deadline):
                response = await self._answer(query, started)
        except Exception as exc:
            await self._log(EventType.ERROR, query, error_details=f"{type(exc).__name__}: {exc}")
            await self.queries.set_query_status(query.query_id, QueryStatus.FAILED, error=str(exc))
            raise
        await self._record(query, response)
        return response

    async def _record(self, query: UserQuery, response: AgentResponse) -> None:
        """Store the response, the thread's two turns and the final status."""
        await self.queries.save_response(response)
        if query.thread_id:
            await self.conversations.add_turn(ConversationTurn(
                thread_id=query.thread_id, role=TurnRole.USER, content=query.query_text,
                query_id=query.query_id))
            await self.conversations.add_turn(ConversationTurn(
                thread_id=query.thread_id, role=TurnRole.ASSISTANT, content=response.response_text,
                query_id=query.query_id, response_id=response.response_id))
        await self._log(EventType.RESPONSE_GENERATED, query, execution_time=response.execution_time,
                        response_summary=f"{response.status.value}: {_short(response.response_text)}")
        final = (QueryStatus.FAILED if response.status is ResponseStatus.RETRIEVAL_FAILED
                 else QueryStatus.COMPLETED)
        await self.queries.set_query_status(query.query_id, final)

    async def _answer(self, query: UserQuery, started: float) -> AgentResponse:
        history = (await self.conversations.recent_turns(query.thread_id, limit=self.settings.history_turns)
                   if query.thread_id and self.settings.history_turns else [])
        lexicon = self.lexicon()
        own = understand(query.query_text, lexicon)
        if own.small_talk:
            return plain_reply(query, started, SMALL_TALK_TEXT)
        if not own.text:
            # Only mentions, emoji or filler: there is nothing to search for.
            return plain_reply(query, started, NOT_FOUND_TEXT)
        search_text = understand(search_query_for(query.query_text, history), lexicon).text or own.text
        try:
            searching = self._search(search_text, query=query, lexicon=lexicon)
            found = await before_deadline(searching, "the search")
        except (StoreError, ProviderError) as exc:
            entry = await self._log(EventType.ERROR, query,
                                    error_details=f"retrieval failed: {type(exc).__name__}: {exc}")
            return retrieval_failed(query, started, exc, entry.entry_id)
        algorithm = found.results.ranking_algorithm
        if not found.results.ranked_chunks or found.verdict.probability < self._min_probability():
            return plain_reply(query, started, NOT_FOUND_TEXT, ranking_algorithm=algorithm)
        request = GenerationRequest(query=query, chunks=list(found.results.ranked_chunks), history=history,
                                    search_text=own.text)
        generation = await self.generator.generate(request, search=self._tool_search(query))
        if generation.fallback_reason:
            await self._log(EventType.ERROR, query, error_details=generation.fallback_reason)
        if says_not_in_docs(generation.text):
            # The model read the sources and found no answer: that is "not found", not an answer.
            return plain_reply(query, started, NOT_FOUND_TEXT, ranking_algorithm=algorithm)
        return answered(query, started, generation, ranking_algorithm=algorithm,
                        max_sources=self.settings.top_k)

    def _min_probability(self) -> float:
        # A model told to say when the sources do not answer needs only clearly off-topic
        # questions dropped; the extractive answerer quotes whatever it is given.
        return (self.settings.answerable_probability_llm if self.uses_llm
                else self.settings.answerable_probability)

    def _tool_search(self, query: UserQuery) -> SearchFn:
        async def tool_search(text: str, top_k: int, filters: dict[str, Any] | None) -> list[RetrievedChunk]:
            try:
                result = await self.retrieve(text, query=query, top_k=top_k, filters=filters)
            except (StoreError, ProviderError) as exc:
                # The answer can still be written from the chunks already found: the model is
                # told the search found nothing rather than the whole answer failing.
                await self._log(EventType.ERROR, query, error_details=f"tool search failed: {exc}")
                return []
            return result.ranked_chunks

        return tool_search
