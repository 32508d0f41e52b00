"""The pipeline as the specification describes it (issue 12): steps, states, bad chunks, options, search."""

from __future__ import annotations

import pytest

from core.errors import ProviderResponseError, QueryValidationError, StoreUnavailableError
from core.fakes import InMemoryStorage, InMemoryVectorStore, ScriptedGenerator
from core.models import (
    ChunkState,
    EmbeddingResponse,
    EventType,
    QueryRequest,
    QueryStatus,
    ResponseState,
    ResponseStatus,
    UserQuery,
)
from tests.core.answer.test_pipeline import build

QUESTION = "Where do I put the Slack bot token?"


def states(history: list, machine: str) -> list[str]:  # type: ignore[type-arg]
    return [c.status for c in history if c.machine == machine]


async def plant_bad_chunk(store: InMemoryVectorStore, collection: str = "ragbot") -> None:
    """A chunk stored before ingest checked chunks: its URL has a space (a bad --base-url)."""
    points = store._points[collection]
    emb, payload = next(v for k, v in points.items() if v[1]["source_document"] == "slack.md")
    points["bad"] = (emb, {**payload, "chunk_id": "bad", "source_document": "bad.md",
                           "url": "https://ragbot.dev/my docs/slack"})


async def test_spec_steps_are_logged_where_they_happen() -> None:
    pipeline, storage, _ = await build()
    response = await pipeline.answer(QUESTION, thread_id="t1")
    entries = {e.event_type: e for e in storage.entries if e.query_id == response.query_id}
    assert entries[EventType.RETRIEVAL_TRIGGERED].response_summary == (
        "question: search 'ragbot' (top_k 5, threshold 0.15)")
    filtered = entries[EventType.RESULTS_FILTERED].response_summary or ""
    assert "candidates kept" in filtered and "reached relevance 0.15" in filtered
    assert entries[EventType.CONTEXT_PREPARED].response_summary == (
        f"{len(response.retrieved_chunks)} chunk(s) returned from "
        f"{len({c.source_document for c in response.retrieved_chunks})} page(s)")


async def test_chunks_are_returned_best_score_first() -> None:
    pipeline, _, _ = await build()
    response = await pipeline.answer("slack bot token make demo tests")
    scores = [c.score for c in response.retrieved_chunks]
    assert scores == sorted(scores, reverse=True)
    assert {c.state for c in response.retrieved_chunks} == {ChunkState.RETURNED}


async def test_a_bad_stored_chunk_is_dropped_with_a_logged_error() -> None:
    pipeline, storage, store = await build()
    await plant_bad_chunk(store)
    response = await pipeline.answer(QUESTION)
    assert response.status is ResponseStatus.ANSWERED
    assert "bad" not in {c.chunk_id for c in response.retrieved_chunks}
    errors = [e.error_details for e in storage.entries
              if e.query_id == response.query_id and e.event_type is EventType.ERROR]
    assert errors == ["dropped a bad stored chunk bad: url: url 'https://ragbot.dev/my docs/slack' "
                      "is not an http(s):// or file:// URL"]
    assert await storage.get_query_status(response.query_id) is QueryStatus.COMPLETED


async def test_query_and_response_state_history() -> None:
    pipeline, storage, _ = await build()
    response = await pipeline.answer(QUESTION)
    history = await storage.status_history(response.query_id)
    assert states(history, "query") == ["PENDING", "PROCESSING", "COMPLETED"]
    assert states(history, "response") == ["PROCESSING", "COMPLETED"]
    assert [c.entered_at for c in history] == sorted(c.entered_at for c in history)
    assert response.state is ResponseState.COMPLETED


async def test_a_failed_search_ends_in_error_and_failed() -> None:
    pipeline, storage, store = await build()
    await store.close()
    response = await pipeline.answer(QUESTION)
    assert response.status is ResponseStatus.RETRIEVAL_FAILED and response.state is ResponseState.ERROR
    history = await storage.status_history(response.query_id)
    assert states(history, "query") == ["PENDING", "PROCESSING", "FAILED"]
    assert states(history, "response") == ["PROCESSING", "ERROR"]


async def test_an_unexpected_failure_records_error_states() -> None:
    pipeline, storage, _ = await build(ScriptedGenerator([RuntimeError("boom")]))
    with pytest.raises(RuntimeError):
        await pipeline.answer(QUESTION)
    (query_id,) = storage.queries
    history = await storage.status_history(query_id)
    assert states(history, "response") == ["PROCESSING", "ERROR"]
    assert history[-1].status == "FAILED" and history[-1].error == "boom"


async def test_options_override_the_settings_for_one_question() -> None:
    pipeline, storage, _ = await build()
    one = await pipeline.answer("slack bot token make demo tests", top_k=1)
    assert len(one.retrieved_chunks) == 1
    strict = await pipeline.answer(QUESTION, threshold=1.0)
    assert strict.status is ResponseStatus.NO_RELEVANT_DOCUMENTS
    missing = await pipeline.answer(QUESTION, collection="elsewhere")
    assert missing.status is ResponseStatus.RETRIEVAL_FAILED and "ragbot ingest" in missing.response_text
    triggered = [e.response_summary for e in storage.entries if e.event_type is EventType.RETRIEVAL_TRIGGERED]
    assert triggered[-1] == "question: search 'elsewhere' (top_k 5, threshold 0.15)"


@pytest.mark.parametrize(("options", "message"), [
    ({"top_k": 21}, "top_k: Input should be less than or equal to 20"),
    ({"threshold": -0.1}, "threshold: Input should be greater than or equal to 0"),
    ({"collection": "no such!"}, "collection name 'no such!' is invalid"),
])
async def test_bad_options_are_refused_like_a_bad_question(options: dict[str, object], message: str) -> None:
    pipeline, storage, _ = await build()
    with pytest.raises(QueryValidationError, match=message):
        await pipeline.answer(QUESTION, **options)  # type: ignore[arg-type]
    assert not storage.queries and storage.entries[-1].event_type is EventType.ERROR


async def test_the_search_tool_searches_the_questions_collection() -> None:
    generator = ScriptedGenerator(["Put it in SLACK_BOT_TOKEN [1]."], search_queries=["signing secret"])
    pipeline, storage, _ = await build(generator)
    response = await pipeline.answer(QUESTION)
    triggered = [e.response_summary for e in storage.entries
                 if e.query_id == response.query_id and e.event_type is EventType.RETRIEVAL_TRIGGERED]
    assert triggered == ["question: search 'ragbot' (top_k 5, threshold 0.15)",
                         "search tool call: search 'ragbot' (top_k 5, threshold 0.15)"]


async def test_search_is_retrieval_only_and_logs_nothing() -> None:
    pipeline, storage, store = await build()
    await plant_bad_chunk(store)
    request = QueryRequest.model_validate({"query_text": "slack bot token!!", "limit": 2})
    results = await pipeline.search(request)
    assert results.results and len(results.results) <= 2
    assert results.results[0].url == "https://ragbot.dev/docs/slack"
    assert results.total_results >= len(results.results) and results.query_time > 0
    assert results.searched_text is not None and "slack bot token" in results.searched_text
    assert results.retrieval_stats is not None and results.retrieval_stats.collection_name == "ragbot"
    assert results.dropped_chunks and results.dropped_chunks[0].startswith("bad: url")
    assert isinstance(results.embedding, EmbeddingResponse) and "embedding" not in results.model_dump()
    assert storage.entries == [] and storage.queries == {}


async def test_search_failure_raises() -> None:
    pipeline, _, store = await build()
    await store.close()
    with pytest.raises(StoreUnavailableError):
        await pipeline.search(QueryRequest(query_text="slack"))


async def test_embedding_failure_is_still_retrieval_failed() -> None:
    pipeline, storage, _ = await build()

    async def broken(request: object) -> EmbeddingResponse:
        raise ProviderResponseError("down", provider="cohere")

    pipeline.retriever.embedder.embed_query = broken  # type: ignore[method-assign]
    response = await pipeline.answer(QUESTION)
    assert response.state is ResponseState.ERROR
    assert states(await storage.status_history(response.query_id), "query")[-1] == "FAILED"


async def test_storage_fake_refuses_a_response_state_out_of_order() -> None:
    storage = InMemoryStorage()
    query = UserQuery(query_text="q")
    await storage.create_query(query)
    with pytest.raises(ValueError, match="cannot start at COMPLETED"):
        await storage.set_response_state(query.query_id, ResponseState.COMPLETED)


async def test_small_talk_triggers_no_retrieval() -> None:
    """Spec 000: the agent decides to retrieve; a greeting is answered without searching."""
    pipeline, storage, _ = await build()
    response = await pipeline.answer("thanks!")
    assert response.retrieval_used is False
    assert EventType.RETRIEVAL_TRIGGERED not in {e.event_type for e in storage.entries}
