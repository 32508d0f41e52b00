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

A message read as instructions to the assistant is searched alone and only quoted; one the docs
seem not to answer gets a second search of part of it (``_second_chance``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from core.answer.asked import aside_reply, asked_names, excerpt_question, question_sentences
from core.answer.deadline import before_deadline, question_deadline
from core.answer.followups import (
    FOLLOW_UP_DEPTH,
    FOLLOW_UP_MIN_TERMS,
    follow_up_support,
    leans_on_subject,
    new_names,
    search_query_for,
    without_aimed,
)
from core.answer.generators.fallback import FallbackGenerator
from core.answer.prompt import says_not_in_docs
from core.answer.responses import answered, not_found, plain_reply, retrieval_failed
from core.answer.steps import Found, Scope, StepLog, filtered_summary, short, unlogged
from core.errors import ProviderError, QueryValidationError, StoreError
from core.ingest.injection import instruction_reason
from core.jsonl import validation_message
from core.models import (
    AgentLogEntry,
    AgentResponse,
    ConversationTurn,
    EmbeddingResponse,
    EventType,
    QueryRequest,
    QueryStatus,
    RankedResults,
    ResponseState,
    RetrievalResponse,
    RetrievedChunk,
    RetrievedContext,
    SearchOptions,
    SearchResults,
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
from core.retrieval.answerability import judge
from core.retrieval.lexicon import Lexicon, no_lexicon
from core.retrieval.query import understand
from core.retrieval.ranking import NEAR_BEST
from core.retrieval.retriever import CosineFn, HybridRetriever, Ranked, by_score
from core.retrieval.small_talk import asks_about_thread
from core.settings import Settings

log = logging.getLogger(__name__)

__all__ = ["RagPipeline"]

#: Turns a text into the set of its search-term ids (the sparse model's vocabulary).
TermFn = Callable[[str], frozenset[int]]
SimilarityFn = Callable[[str, str], float]


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
        cosine: question-chunk cosines of the local model when another model embeds (HybridRetriever).
        lexicon: a collection's current vocabulary (query understanding, ranking by headings).
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
        lexicon: Callable[[str], Lexicon] = no_lexicon,
        retriever: HybridRetriever | None = None,
    ) -> None:
        self.settings = settings
        self.lexicon = lexicon
        self.embedder = embedder
        self.store = store
        self.fallback = fallback
        # One generation path: the fallback generator wraps the primary (or is it, with no keys).
        self.generator = FallbackGenerator(primary=generator, fallback=fallback, similarity=similarity)
        self.quoter = FallbackGenerator(primary=fallback, fallback=fallback)  # quotes, grounded as such
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
        """Append one AgentLogEntry for ``query`` (or for no stored query: ``thread_id``, ``query_text``)."""
        entry = AgentLogEntry(
            event_type=event,
            thread_id=query.thread_id if query else fields.pop("thread_id", None),
            query_id=query.query_id if query else None,
            query_text=query.query_text if query else fields.pop("query_text", None),
            **fields,
        )
        # A stored query's entries are steps of its answer: its final status write flushes them.
        await self.activity.log(entry, durable=query is None)
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
    def scope(self, *, top_k: int | None = None, threshold: float | None = None,
              collection: str | None = None) -> Scope:
        """Where and how deep to search: the given values, else the settings' (a soft floor)."""
        return Scope(top_k=top_k or self.settings.top_k,
                     threshold=self.settings.relevance_threshold if threshold is None else threshold,
                     collection=collection or self.retriever.collection,
                     near_best=NEAR_BEST if threshold is None else 0.0)

    def checked_scope(self, *, top_k: int | None = None, threshold: float | None = None,
                      collection: str | None = None) -> Scope:
        """``scope`` for values from outside: QueryValidationError names a value out of range."""
        try:
            options = SearchOptions(top_k=top_k, threshold=threshold, collection_name=collection)
        except ValidationError as exc:
            raise QueryValidationError(validation_message(exc, SearchOptions)) from None
        return self.scope(top_k=options.top_k, threshold=options.threshold,
                          collection=options.collection_name)

    async def retrieve(self, text: str, *, query: UserQuery, top_k: int | None = None,
                       filters: dict[str, Any] | None = None, collection: str | None = None
                       ) -> RetrievedContext:
        """The model's search tool: the chunks (RETURNED) that pass the threshold, logged as steps.

        Raises:
            StoreError, ProviderError: the store or the embedding service failed.
        """
        scope = self.scope(top_k=top_k, collection=collection)
        found = await self._search(text, query=query, scope=scope, filters=filters,
                                   lexicon=self.lexicon(scope.collection), trigger="search tool call")
        return found.context

    async def search(self, request: QueryRequest) -> SearchResults:
        """Retrieval only, as ``ragbot search`` and ``ragbot validate`` run it; nothing is logged.

        The text is searched as a question would be (chat noise dropped, spelling fixed), so
        an admin sees what an answer to the same words would have been written from.

        Raises:
            StoreError, ProviderError: the store or the embedding service failed.
        """
        started = time.perf_counter()
        scope = self.scope(top_k=request.top_k, threshold=request.threshold,
                           collection=request.collection_name)
        lexicon = self.lexicon(scope.collection)
        text = understand(request.query_text, lexicon).text or request.query_text
        found = await self._search(text, query=None, scope=scope, filters=request.filters, lexicon=lexicon,
                                   step=unlogged)
        return SearchResults(
            results=found.context.chunks, query_time=time.perf_counter() - started,
            total_results=found.response.total_matches, request=request, searched_text=text,
            ranking_algorithm=found.results.ranking_algorithm,
            retrieval_stats=found.response.retrieval_stats, dropped_chunks=found.response.dropped_chunks,
            embedding=found.embedding,
        )

    async def _search(
        self, text: str, *, query: UserQuery | None, scope: Scope, filters: dict[str, Any] | None = None,
        lexicon: Lexicon | None = None, trigger: str = "question", step: StepLog | None = None,
    ) -> Found:
        """Embed, search, filter, rank and prepare the context, one log entry per step."""
        step = step or self._log
        await step(EventType.RETRIEVAL_TRIGGERED, query, response_summary=(
            f"{trigger}: search {scope.collection!r} (top_k {scope.top_k}, threshold {scope.threshold:g})"))
        emb = await self.retriever.embed(text)
        await step(EventType.EMBEDDING_GENERATED, query, execution_time=emb.execution_time,
                   response_summary=(f"{emb.model_used}, {emb.dimension} dimensions; "
                                     f"searched {short(text)!r}"))
        request = self.retriever.build_request(text, emb, top_k=scope.top_k, threshold=scope.threshold,
                                               filters=filters, collection=scope.collection)
        start = time.perf_counter()
        hits = await self.retriever.search(request)
        await step(EventType.RETRIEVAL_PERFORMED, query, execution_time=time.perf_counter() - start,
                   response_summary=(f"{hits.total_candidates} candidates from {scope.collection!r} "
                                     f"(threshold {scope.threshold:g})"))
        idf = lexicon.term_idf(self.terms) if lexicon is not None and not lexicon.empty else None
        ranked_hits = self.retriever.rank(text, hits, top_k=scope.top_k, threshold=scope.threshold, idf=idf,
                                          near_best=scope.near_best)
        start = time.perf_counter()
        response = self.retriever.respond(request, hits, ranked_hits)
        filtering = time.perf_counter() - start
        for bad in response.dropped_chunks:
            # Stored before ingest checked chunks (or edited by hand): the answer goes on without it.
            log.error("dropped a bad stored chunk %s", bad)
            await step(EventType.ERROR, query, error_details=f"dropped a bad stored chunk {bad}")
        await step(EventType.RESULTS_FILTERED, query, execution_time=filtering,
                   response_summary=filtered_summary(response, threshold=scope.threshold))
        return await self._prepare(text, query=query, scope=scope, emb=emb, ranked_hits=ranked_hits,
                                   response=response, lexicon=lexicon, step=step)

    async def _prepare(
        self, text: str, *, query: UserQuery | None, scope: Scope, emb: EmbeddingResponse,
        ranked_hits: Ranked, response: RetrievalResponse, lexicon: Lexicon | None, step: StepLog,
    ) -> Found:
        """Rerank, judge answerability, and hand the chunks on as the RetrievedContext.

        The ranking step's time is the fusion and scoring (``ranked_hits.seconds``) plus the rerank.
        """
        start = time.perf_counter() - ranked_hits.seconds
        chunks, algorithm = await self._rerank(text, response.retrieved_chunks, ranked_hits.algorithm, query,
                                               scope.top_k, step)
        verdict = judge(relevances=ranked_hits.top_relevances, cosine=ranked_hits.best_cosine,
                        pages=ranked_hits.top_pages, held=ranked_hits.top_held, named=ranked_hits.named,
                        names=asked_names(text, lexicon))
        ranked = RankedResults(ranked_chunks=chunks, ranking_algorithm=algorithm,
                               execution_time=time.perf_counter() - start)
        summary = (f"{len(chunks)} chunk(s) kept by {algorithm}; best {chunks[0].score:.2f}" if chunks
                   else f"0 chunks passed {scope.threshold:g}")
        # The chunks with their scores: `ragbot logs show` lists them in the question's timeline.
        kept = "".join(f"; {c.score:.2f} {c.url}" for c in chunks)
        await step(EventType.RESULTS_RANKED, query, execution_time=ranked.execution_time,
                   response_summary=f"{summary}; {verdict.summary()}{kept}")
        start = time.perf_counter()
        context = RetrievedContext.prepare(
            chunks, query_embedding=emb.embedding_vector, collection_name=scope.collection,
            ranking_algorithm=algorithm, search_threshold=response.retrieval_stats.search_threshold,
            total_candidates=response.retrieval_stats.total_candidates)
        pages = len(context.metadata["source_documents"])
        await step(EventType.CONTEXT_PREPARED, query, execution_time=time.perf_counter() - start,
                   response_summary=f"{len(context.chunks)} chunk(s) returned from {pages} page(s)")
        return Found(results=ranked, verdict=verdict, context=context, response=response, embedding=emb)

    async def _rerank(self, text: str, chunks: list[RetrievedChunk], algorithm: str, query: UserQuery | None,
                      top_k: int, step: StepLog) -> tuple[list[RetrievedChunk], str]:
        if self.reranker is None or not chunks:
            return chunks, algorithm
        try:
            reranked = await self.reranker.rerank(text, chunks, top_k=top_k)
        except ProviderError as exc:
            # The fused order is a good answer on its own; a rerank outage must not fail it.
            await step(EventType.ERROR, query, error_details=f"rerank failed, kept the fused order: {exc}")
            return chunks, algorithm
        return by_score(reranked), f"{algorithm}+{self.reranker.name}"

    # ------------------------------------------------------------------ answering
    async def answer(
        self,
        question: str,
        *,
        thread_id: str | None = None,
        user_id: str | None = None,
        user_context: str | None = None,
        top_k: int | None = None,
        threshold: float | None = None,
        collection: str | None = None,
    ) -> AgentResponse:
        """Answer one question; see the module docstring for statuses.

        ``top_k``, ``threshold`` and ``collection`` override the settings for this question
        (``ragbot ask --batch`` lines may set them).

        Raises:
            QueryValidationError: the question breaks a rule (an error entry is logged).
        """
        started = time.perf_counter()
        try:
            query = self.validate(question, thread_id=thread_id, user_id=user_id, user_context=user_context)
            scope = self.checked_scope(top_k=top_k, threshold=threshold, collection=collection)
        except QueryValidationError as exc:
            await self._log(EventType.ERROR, None, thread_id=thread_id,
                            query_text=short(question, 1000) or None,
                            error_details=f"invalid question: {exc}")
            raise
        await self.queries.create_query(query)
        await self._log(EventType.QUERY_RECEIVED, query)
        await self.queries.set_query_status(query.query_id, QueryStatus.PROCESSING)
        await self.queries.set_response_state(query.query_id, ResponseState.PROCESSING)
        try:
            with question_deadline(self.settings.answer_deadline):
                response = await self._answer(query, started, scope)
        except Exception as exc:
            await self._log(EventType.ERROR, query, error_details=f"{type(exc).__name__}: {exc}")
            await self.queries.set_response_state(query.query_id, ResponseState.ERROR, error=str(exc))
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
                        response_summary=f"{response.status.value}: {short(response.response_text)}")
        await self.queries.set_response_state(query.query_id, response.state)
        final = QueryStatus.FAILED if response.state is ResponseState.ERROR else QueryStatus.COMPLETED
        await self.queries.set_query_status(query.query_id, final)

    async def _answer(self, query: UserQuery, started: float, scope: Scope) -> AgentResponse:
        history = without_aimed(
            await self.conversations.recent_turns(query.thread_id, limit=self.settings.history_turns)
            if query.thread_id and self.settings.history_turns else [])
        lexicon = self.lexicon(scope.collection)
        own = understand(query.query_text, lexicon)
        aimed = instruction_reason(query.query_text)
        search_text = understand(search_query_for(query.query_text, [] if aimed else history),
                                 lexicon).text or own.text
        bare = own.small_talk and bool(search_text) and asks_about_thread(query.query_text)  # "why?"
        aside = aside_reply(query.query_text, small_talk=own.small_talk and not bare)
        if aimed is not None:  # a polite no, or judged on its own words and only quoted (docs/answers.md)
            how = "a short reply, not searched" if aside else "searched alone, answered only by quoting"
            await self._log(EventType.RESULTS_FILTERED, query,
                            response_summary=f"the message {aimed[0]} ({aimed[1]!r}): {how}")
        if aside is not None:
            return plain_reply(query, started, aside)
        if not own.text and not bare:  # only mentions, emoji or filler: nothing to search for
            return not_found(query, started)
        enough = self._min_probability(quoting=bool(aimed))
        try:
            searching = self._search(search_text, query=query, scope=scope, lexicon=lexicon)
            found = await before_deadline(searching, "the search")
        except (StoreError, ProviderError) as exc:
            entry = await self._log(EventType.ERROR, query,
                                    error_details=f"retrieval failed: {type(exc).__name__}: {exc}")
            return retrieval_failed(query, started, exc, entry.entry_id)
        algorithm = found.results.ranking_algorithm
        chosen = await self._second_chance(query, own.text, search_text, found, scope=scope, lexicon=lexicon,
                                           enough=enough)
        if chosen is None or not chosen.context.chunks or chosen.verdict.probability < enough:
            return self._not_found(query, started, chosen, algorithm)
        request = GenerationRequest(query=query, chunks=list(chosen.context.chunks), history=history,
                                    search_text=excerpt_question(query.query_text, own.text, search_text))
        generator = self.quoter if aimed else self.generator
        generation = await generator.generate(request, search=self._tool_search(query, scope.collection))
        if generation.fallback_reason:
            await self._log(EventType.ERROR, query, error_details=generation.fallback_reason)
        if says_not_in_docs(generation.text):
            # The model read the sources and found no answer: that is "not found", not an answer.
            return self._not_found(query, started, chosen, algorithm)
        return answered(query, started, generation, ranking_algorithm=algorithm, max_sources=scope.top_k)

    async def _second_chance(self, query: UserQuery, own: str, searched: str, found: Found, *, scope: Scope,
                             lexicon: Lexicon, enough: float) -> Found | None:
        """``found``, or what part of the message finds searched alone; None: a follow-up not answered.

        People say why they ask in words the docs need not hold: a message short of ``enough`` is
        searched again by its question sentences. A follow-up not answered with the thread's subject
        is searched alone (a new question), unless it has no words of its own ("and on windows?").
        """
        if searched == own:
            if found.verdict.probability >= enough:
                return found
            asked = question_sentences(query.query_text)
            text = understand(asked, lexicon).text if asked else ""
            return await self._alone("" if text == own else text, "its question sentences", query=query,
                                     scope=scope, lexicon=lexicon, enough=enough) or found
        if found.verdict.probability >= enough and await self._still_on_topic(own, found, lexicon, query):
            return found
        text = own if len(self.terms(own)) >= FOLLOW_UP_MIN_TERMS else ""
        alone = await self._alone(text, "the message", query=query, scope=scope, lexicon=lexicon,
                                  enough=enough)
        if alone or found.verdict.probability < enough or not leans_on_subject(query.query_text, lexicon):
            return alone
        await self._log(EventType.RESULTS_FILTERED, query, response_summary=(
            "the message alone finds nothing and points back: answered from the thread's subject"))
        return found  # "ok how do i turn it off for just me?": the docs say "disable ... for yourself"

    async def _alone(self, text: str, what: str, *, query: UserQuery, scope: Scope, lexicon: Lexicon,
                     enough: float) -> Found | None:
        """What ``text`` finds searched alone if the docs answer it; else None (a failure is logged)."""
        if not self.terms(text):
            return None  # nothing to search for ("???")
        try:
            searching = self._search(text, query=query, scope=scope, lexicon=lexicon,
                                     trigger=f"{what} searched alone")
            alone = await before_deadline(searching, "the search")
        except (StoreError, ProviderError) as exc:
            await self._log(EventType.ERROR, query, error_details=(
                f"searching {what} alone failed: {type(exc).__name__}: {exc}"))
            return None
        used = alone.verdict.probability >= enough and bool(alone.context.chunks)
        await self._log(EventType.RESULTS_FILTERED, query, response_summary=(
            f"{what} searched alone: answerable p={alone.verdict.probability:.2f}"
            + ("; the answer is written from this search" if used else f", below {enough:g}; not used")))
        return alone if used else None

    async def _still_on_topic(self, own: str, found: Found, lexicon: Lexicon, query: UserQuery) -> bool:
        """Whether the passages found with the thread's subject still answer the follow-up's own words."""
        if lexicon.empty or len(self.terms(own)) < FOLLOW_UP_MIN_TERMS:
            return True  # "tell me more", "and how do I test it?": only the thread says what about
        support = follow_up_support(own, found.context.chunks[:FOLLOW_UP_DEPTH], terms=self.terms,
                                    idf=lexicon.term_idf(self.terms), similarity=self.similarity,
                                    names=new_names(query.query_text, own, lexicon))
        if support.on_topic:
            return True
        await self._log(EventType.RESULTS_FILTERED, query, response_summary=(
            f"follow-up off the thread's subject: {support.summary()}; not answered from the old subject"))
        return False

    def _not_found(self, query: UserQuery, started: float, found: Found | None,
                   algorithm: str) -> AgentResponse:
        """The "not found" reply, listing the pages that came closest when the docs seemed near enough."""
        floor = self.settings.closest_pages_probability
        closest = found.context.chunks if found is not None and found.verdict.probability >= floor else ()
        return not_found(query, started, ranking_algorithm=algorithm, closest=closest)

    def _min_probability(self, *, quoting: bool = False) -> float:
        # A model says when the sources do not answer: only clearly off-topic questions are dropped.
        llm = self.uses_llm and not quoting
        return self.settings.answerable_probability_llm if llm else self.settings.answerable_probability

    def _tool_search(self, query: UserQuery, collection: str) -> SearchFn:
        async def tool_search(text: str, top_k: int, filters: dict[str, Any] | None) -> list[RetrievedChunk]:
            try:
                result = await self.retrieve(text, query=query, top_k=top_k, filters=filters,
                                             collection=collection)
            except (StoreError, ProviderError) as exc:
                # The answer is still written from the chunks found: the model hears the search found nothing.
                await self._log(EventType.ERROR, query, error_details=f"tool search failed: {exc}")
                return []
            return result.chunks

        return tool_search
