"""The answer pipeline: validate -> embed -> search -> rank -> generate -> check grounding.

``RagPipeline`` is the ``AnswerService`` every adapter calls. It writes one
AgentLogEntry per step, moves the query along PENDING -> PROCESSING ->
COMPLETED | FAILED, stores the conversation turns of the thread, and turns
every expected outcome into a status:

* ``no_relevant_documents``: nothing reached the relevance threshold;
* ``retrieval_failed``: the store or the embedding service failed (the reply
  carries ``reference_id``, the id of the ``error`` log entry);
* ``validation_failed``: the generated answer could not be grounded, so the
  user gets the extractive answer over the same chunks, with a note.

``confidence_score`` = ``grounding_confidence`` x the mean relevance of the cited
chunks: an answer is only as trustworthy as its weakest link, retrieval or
grounding.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from core.answer.citations import neutralize_mentions, renumber_citations, with_related
from core.answer.followups import search_query_for
from core.answer.grounding import validate_grounding
from core.answer.prompt import says_not_in_docs
from core.errors import (
    CollectionNotFoundError,
    ProviderError,
    QueryValidationError,
    RagbotError,
    StoreError,
)
from core.models import (
    AgentLogEntry,
    AgentResponse,
    ConversationTurn,
    EventType,
    GroundingValidation,
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
    Generation,
    GenerationRequest,
    Generator,
    QueryStore,
    Reranker,
    VectorStore,
)
from core.retrieval.lexicon import Lexicon
from core.retrieval.query import understand
from core.retrieval.retriever import CosineFn, HybridRetriever
from core.settings import Settings

log = logging.getLogger(__name__)

NOT_FOUND_TEXT = (
    "I couldn't find anything about that in the docs, so I won't guess. "
    "Try rephrasing with the name of the feature, command or page you mean."
)
RETRIEVAL_FAILED_TEXT = (
    "Sorry, I couldn't search the docs just now ({reason}). Please try again in a moment; "
    "if it keeps happening, give an admin this reference: {ref}."
)
NOT_INGESTED_TEXT = (
    "I can't answer yet: no documentation has been added to my knowledge base. "
    "An admin needs to run `ragbot ingest PATH` (reference: {ref})."
)
SMALL_TALK_TEXT = (
    "Happy to help! Ask me anything about the docs and I'll answer with links to the pages I used."
)
VALIDATION_NOTE = (
    "_The generated answer could not be checked against the docs, so here are the most "
    "relevant passages instead._"
)

#: Turns a text into the set of its search-term ids (the sparse model's vocabulary).
TermFn = Callable[[str], frozenset[int]]
SimilarityFn = Callable[[str, str], float]


def _short(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


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
        lexicon: the collection's current vocabulary, for spelling correction and small talk.
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
    ) -> None:
        self.settings = settings
        self.lexicon = lexicon
        self.embedder = embedder
        self.store = store
        self.generator = generator
        self.fallback = fallback
        self.conversations = conversations
        self.queries = queries
        self.activity = activity
        self.terms = terms
        self.similarity = similarity
        self.reranker = reranker
        self.retriever = HybridRetriever.from_settings(settings, embedder=embedder, store=store,
                                                       terms=terms, cosine=cosine)

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
        top_k = top_k or self.settings.top_k
        threshold = self.settings.relevance_threshold
        emb = await self.retriever.embed(text)
        await self._log(EventType.EMBEDDING_GENERATED, query, execution_time=emb.execution_time,
                        response_summary=f"{emb.model_used}, {emb.dimension} dimensions")
        start = time.perf_counter()
        hits = await self.retriever.search(text, emb, top_k=top_k, threshold=threshold, filters=filters)
        search_time = time.perf_counter() - start
        await self._log(
            EventType.RETRIEVAL_PERFORMED, query, execution_time=search_time,
            response_summary=(f"{hits.total_candidates} candidates from {self.retriever.collection!r} "
                              f"(threshold {threshold:g})"),
        )
        start = time.perf_counter()
        ranked_hits = self.retriever.rank(text, hits, top_k=top_k, threshold=threshold)
        chunks = [self._chunk(f.payload, rel) for f, rel in ranked_hits.picked]
        algorithm = ranked_hits.algorithm
        if self.reranker is not None and chunks:
            try:
                chunks = await self.reranker.rerank(text, chunks, top_k=top_k)
                algorithm = f"{algorithm}+{self.reranker.name}"
            except ProviderError as exc:
                # The fused order is a good answer on its own; a rerank outage must not fail it.
                await self._log(EventType.ERROR, query,
                                error_details=f"rerank failed, kept the fused order: {exc}")
        ranked = RankedResults(ranked_chunks=chunks, ranking_algorithm=algorithm,
                               execution_time=time.perf_counter() - start)
        await self._log(
            EventType.RESULTS_RANKED, query, execution_time=ranked.execution_time,
            response_summary=f"{len(chunks)} chunk(s) kept by {algorithm}; best "
                             f"{chunks[0].score:.2f}" if chunks else f"0 chunks passed {threshold:g}",
        )
        return ranked

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
            response = await self._answer(query, started)
        except Exception as exc:
            entry = await self._log(EventType.ERROR, query,
                                    error_details=f"{type(exc).__name__}: {exc}")
            await self.queries.set_query_status(query.query_id, QueryStatus.FAILED, error=str(exc))
            if isinstance(exc, RagbotError):
                exc.reference_id = entry.entry_id  # type: ignore[attr-defined]
            raise
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
        return response

    async def _answer(self, query: UserQuery, started: float) -> AgentResponse:
        history = (await self.conversations.recent_turns(query.thread_id, limit=self.settings.history_turns)
                   if query.thread_id and self.settings.history_turns else [])
        lexicon = self.lexicon()
        own = understand(query.query_text, lexicon)
        if own.small_talk:
            return self._reply(query, started, SMALL_TALK_TEXT, ResponseStatus.NO_RELEVANT_DOCUMENTS)
        if not own.text:
            # Only mentions, emoji or filler: there is nothing to search for.
            return self._reply(query, started, NOT_FOUND_TEXT, ResponseStatus.NO_RELEVANT_DOCUMENTS)
        analysis = understand(search_query_for(query.query_text, history), lexicon)
        search_text = analysis.text or own.text
        try:
            ranked = await self.retrieve(search_text, query=query)
        except (StoreError, ProviderError) as exc:
            entry = await self._log(EventType.ERROR, query,
                                    error_details=f"retrieval failed: {type(exc).__name__}: {exc}")
            return AgentResponse(
                query_id=query.query_id, query_text=query.query_text, thread_id=query.thread_id,
                response_text=(NOT_INGESTED_TEXT.format(ref=entry.entry_id)
                               if isinstance(exc, CollectionNotFoundError)
                               else RETRIEVAL_FAILED_TEXT.format(reason=_reason(exc), ref=entry.entry_id)),
                status=ResponseStatus.RETRIEVAL_FAILED, retrieval_used=True,
                reference_id=entry.entry_id, execution_time=time.perf_counter() - started,
            )
        if not ranked.ranked_chunks:
            return self._reply(query, started, NOT_FOUND_TEXT, ResponseStatus.NO_RELEVANT_DOCUMENTS,
                               ranking_algorithm=ranked.ranking_algorithm)

        async def tool_search(text: str, top_k: int, filters: dict[str, Any] | None) -> list[RetrievedChunk]:
            try:
                result = await self.retrieve(text, query=query, top_k=top_k, filters=filters)
            except (StoreError, ProviderError) as exc:
                # The answer can still be written from the chunks already found: the model is
                # told the search found nothing rather than the whole answer failing.
                await self._log(EventType.ERROR, query, error_details=f"tool search failed: {exc}")
                return []
            return result.ranked_chunks

        request = GenerationRequest(query=query, chunks=list(ranked.ranked_chunks), history=history,
                                    search_text=own.text or None)
        generation = await self._generate(request, tool_search, query)
        if says_not_in_docs(generation.text):
            # The model read the sources and found no answer: that is "not found", not an answer.
            return self._reply(query, started, NOT_FOUND_TEXT, ResponseStatus.NO_RELEVANT_DOCUMENTS,
                               ranking_algorithm=ranked.ranking_algorithm)
        status = ResponseStatus.ANSWERED
        quoted = generation.model_used == self.fallback.name
        # Quoted passages are verbatim: the word-level check suffices, the dense one only costs time.
        report = validate_grounding(generation.text, generation.chunks, user_context=query.user_context,
                                    similarity=None if quoted else self.similarity)
        if not report.validation.passed and not quoted:
            await self._log(
                EventType.ERROR, query,
                error_details=(f"validation_failed: {report.validation.unsupported_sentences} unsupported "
                               f"sentence(s), invalid citations {report.validation.invalid_citations}; "
                               "answered extractively instead"),
            )
            fallback = await self.fallback.generate(
                GenerationRequest(query=query, chunks=generation.chunks, history=history),
                search=tool_search)
            generation = Generation(
                text=f"{VALIDATION_NOTE}\n\n{fallback.text}", chunks=fallback.chunks,
                model_used=f"{generation.model_used}->{fallback.model_used}",
                retrieval_used=True, tool_calls=generation.tool_calls,
            )
            failed_validation = report.validation
            report = validate_grounding(fallback.text, fallback.chunks, user_context=query.user_context,
                                        similarity=self.similarity)
            report.validation.unsupported = failed_validation.unsupported
            status = ResponseStatus.VALIDATION_FAILED
        text, cited_sources = renumber_citations(neutralize_mentions(generation.text), generation.chunks)
        cited_ids = {s.chunk_id for s in cited_sources}
        sources = with_related(cited_sources, generation.chunks, limit=self.settings.top_k) \
            if cited_sources else []
        cited = [c for c in generation.chunks if c.chunk_id in cited_ids]
        if not sources:
            # A generator that cites nothing is not grounded, whatever it says.
            status = ResponseStatus.VALIDATION_FAILED
        mean_rel = sum(c.score for c in cited) / len(cited) if cited else 0.0
        return AgentResponse(
            query_id=query.query_id, query_text=query.query_text, thread_id=query.thread_id,
            response_text=text, status=status, sources=sources,
            retrieved_chunks=generation.chunks,
            confidence_score=round(report.grounding_confidence * mean_rel, 4),
            grounding_confidence=report.grounding_confidence,
            grounding_validation=report.validation,
            retrieval_used=generation.retrieval_used,
            ranking_algorithm=ranked.ranking_algorithm,
            model_used=generation.model_used,
            execution_time=time.perf_counter() - started,
        )

    @staticmethod
    def _reply(query: UserQuery, started: float, text: str, status: ResponseStatus,
               ranking_algorithm: str | None = None) -> AgentResponse:
        """An answer that quotes nothing: not found, or a friendly reply to small talk."""
        return AgentResponse(
            query_id=query.query_id, query_text=query.query_text, thread_id=query.thread_id,
            response_text=text, status=status, ranking_algorithm=ranking_algorithm,
            grounding_validation=GroundingValidation(method="none", passed=True),
            retrieval_used=ranking_algorithm is not None,
            execution_time=time.perf_counter() - started,
        )

    async def _generate(self, request: GenerationRequest, search: Any, query: UserQuery) -> Generation:
        try:
            return await self.generator.generate(request, search=search)
        except ProviderError as exc:
            await self._log(EventType.ERROR, query,
                            error_details=f"generation failed, answered extractively: {exc}")
            generation = await self.fallback.generate(request, search=search)
            generation.fallback_reason = str(exc)
            return generation


def _reason(exc: Exception) -> str:
    if isinstance(exc, StoreError):
        return "the knowledge base is unavailable"
    return "the embedding service is unavailable"

