"""The specification's entities added for issue 12: state machines, search requests, spec JSON shapes."""

from __future__ import annotations

from typing import ClassVar

import pytest
from pydantic import ValidationError

from core.models import (
    AgentResponse,
    AskRequest,
    ChunkState,
    DocumentChunk,
    EmbeddingResponse,
    EventType,
    QueryRequest,
    QueryStatus,
    ResponseState,
    ResponseStatus,
    RetrievalRequest,
    RetrievedChunk,
    RetrievedContext,
    SearchResults,
    StatusChange,
    VectorEmbedding,
    check_transition,
)

PAYLOAD = {"url": "https://ragbot.dev/docs/install", "title": "Install", "content": "Run make demo to start.",
           "headings": ["Install"], "chunk_index": 2, "source_document": "install.md",
           "metadata": {"lang": "en"}}


def chunk(**kw: object) -> RetrievedChunk:
    data: dict[str, object] = {"chunk_id": "c1", "content": "Run make demo.", "score": 0.8,
                               "url": "https://ragbot.dev/docs/install", "title": "Install",
                               "chunk_index": 0, "source_document": "install.md", **kw}
    return RetrievedChunk.model_validate(data)


# --------------------------------------------------------------------------- state machines


class TestChunkState:
    def test_retrieved_validated_returned(self) -> None:
        c = chunk()
        assert c.state is ChunkState.RETRIEVED
        returned = c.advance(ChunkState.VALIDATED).advance(ChunkState.RETURNED)
        assert returned.state is ChunkState.RETURNED and c.state is ChunkState.RETRIEVED

    @pytest.mark.parametrize(("start", "new"), [
        (ChunkState.RETRIEVED, ChunkState.RETURNED),
        (ChunkState.VALIDATED, ChunkState.RETRIEVED),
        (ChunkState.RETURNED, ChunkState.VALIDATED),
    ])
    def test_illegal_moves_refused(self, start: ChunkState, new: ChunkState) -> None:
        with pytest.raises(ValueError, match=f"chunk state cannot go from {start.value} to {new.value}"):
            chunk(state=start).advance(new)

    def test_context_returns_its_chunks(self) -> None:
        context = RetrievedContext.prepare([chunk().advance(ChunkState.VALIDATED)], collection_name="docs")
        assert [c.state for c in context.chunks] == [ChunkState.RETURNED]
        assert context.success and context.metadata == {"collection_name": "docs",
                                                        "source_documents": ["install.md"]}
        assert not RetrievedContext.prepare([]).success

    def test_context_refuses_unvalidated_chunks(self) -> None:
        with pytest.raises(ValueError, match="RETRIEVED to RETURNED"):
            RetrievedContext.prepare([chunk()])


class TestResponseState:
    def test_machine(self) -> None:
        check_transition(ResponseState.PROCESSING, ResponseState.COMPLETED)
        check_transition(ResponseState.PROCESSING, ResponseState.ERROR)
        with pytest.raises(ValueError, match="response state cannot go from COMPLETED to ERROR"):
            check_transition(ResponseState.COMPLETED, ResponseState.ERROR)

    def test_machines_are_not_mixed(self) -> None:
        with pytest.raises(ValueError, match="cannot go from PROCESSING to COMPLETED"):
            check_transition(QueryStatus.PROCESSING, ResponseState.COMPLETED)

    def test_state_follows_status(self) -> None:
        ok = AgentResponse(query_id="q", response_text="Not found.",
                           status=ResponseStatus.NO_RELEVANT_DOCUMENTS)
        failed = AgentResponse(query_id="q", response_text="Down.", status=ResponseStatus.RETRIEVAL_FAILED)
        assert (ok.state, failed.state) == (ResponseState.COMPLETED, ResponseState.ERROR)

    @pytest.mark.parametrize(("status", "state"), [
        (ResponseStatus.RETRIEVAL_FAILED, ResponseState.COMPLETED),
        (ResponseStatus.NO_RELEVANT_DOCUMENTS, ResponseState.ERROR),
        (ResponseStatus.NO_RELEVANT_DOCUMENTS, ResponseState.PROCESSING),
    ])
    def test_state_must_fit_status(self, status: ResponseStatus, state: ResponseState) -> None:
        with pytest.raises(ValidationError, match=f"state {state.value} does not fit status"):
            AgentResponse(query_id="q", response_text="x", status=status, state=state)


def test_spec_004_error_is_failed() -> None:
    assert QueryStatus("ERROR") is QueryStatus.FAILED and QueryStatus("error") is QueryStatus.FAILED
    with pytest.raises(ValueError):
        QueryStatus("DONE")


def test_status_change() -> None:
    change = StatusChange.model_validate({"machine": "response", "status": "ERROR",
                                          "entered_at": "2026-01-01T00:00:00Z", "error": "boom"})
    assert change.entered_at.tzinfo is not None
    with pytest.raises(ValidationError):
        StatusChange.model_validate({"machine": "chunk", "status": "X", "entered_at": "2026-01-01T00:00:00Z"})


def test_spec_002_and_000_steps_are_event_types() -> None:
    assert {"retrieval_triggered", "results_filtered", "context_prepared"} <= {e.value for e in EventType}


# --------------------------------------------------------------------------- spec JSON shapes


class TestChunkShapes:
    def test_spec_004_payload(self) -> None:
        c = RetrievedChunk.model_validate({"score": 0.7, "payload": PAYLOAD})
        assert (c.url, c.title, c.chunk_index, c.source_document, c.metadata) == (
            PAYLOAD["url"], "Install", 2, "install.md", {"lang": "en"})

    def test_spec_002_metadata(self) -> None:
        c = RetrievedChunk.model_validate({
            "content": "Run make demo.", "score": 0.5,
            "metadata": {"url": "https://ragbot.dev/docs/install", "title": "Install",
                         "section": "Quick start", "chunk_index": 3, "lang": "en"}})
        assert (c.url, c.title, c.section, c.chunk_index) == (
            "https://ragbot.dev/docs/install", "Install", "Quick start", 3)
        assert c.metadata == {"lang": "en"} and c.source_document == c.url
        again = RetrievedChunk.model_validate({"content": "x y", "score": 0.5, "metadata": {
            "url": "https://ragbot.dev/docs/install", "title": "Install", "chunk_index": 3}})
        assert again.chunk_id == c.chunk_id, "the derived id is stable"

    def test_spec_001_names(self) -> None:
        c = RetrievedChunk.model_validate({
            "vector_id": "v1", "content": "Run make demo.", "similarity_score": 0.4,
            "source_url": "https://ragbot.dev/docs/install", "page_title": "Install",
            "section_hierarchy": "Install > Demo", "chunk_index": 0, "source_document": "install.md"})
        assert (c.chunk_id, c.score, c.section) == ("v1", 0.4, "Install > Demo")

    def test_top_level_wins_and_metadata_still_validated(self) -> None:
        c = RetrievedChunk.model_validate({**PAYLOAD, "score": 0.3, "metadata": {"title": "Other"}})
        assert c.title == "Install"
        with pytest.raises(ValidationError, match="url"):
            RetrievedChunk.model_validate({"content": "x", "score": 0.3,
                                           "metadata": {"url": "not a url", "title": "T", "chunk_index": 0}})

    def test_round_trip_keeps_state(self) -> None:
        c = chunk().advance(ChunkState.VALIDATED)
        assert RetrievedChunk.model_validate(c.model_dump(mode="json")) == c


class TestSpec004Response:
    RESPONSE: ClassVar[dict[str, object]] = {"query": "how do I start?", "answer": "Run make demo [1].",
                                             "retrieved_chunks": [{"score": 0.7, "payload": PAYLOAD}],
                                             "confidence": 0.6, "sources": ["https://ragbot.dev/docs/install"],
                                             "processing_time": 0.4}

    def test_accepted(self) -> None:
        response = AgentResponse.model_validate(self.RESPONSE)
        assert response.status is ResponseStatus.ANSWERED and response.state is ResponseState.COMPLETED
        assert response.sources[0].chunk_id == response.retrieved_chunks[0].chunk_id
        assert response.sources_cited == ["https://ragbot.dev/docs/install"] and response.query_id
        assert (response.query_text, response.execution_time, response.confidence_score) == (
            "how do I start?", 0.4, 0.6)
        assert AgentResponse.model_validate(response.model_dump(mode="json")) == response

    def test_source_must_be_a_retrieved_url(self) -> None:
        with pytest.raises(ValidationError, match=r"'https://elsewhere\.dev' is not the url of any"):
            AgentResponse.model_validate({**self.RESPONSE, "sources": ["https://elsewhere.dev"]})

    def test_no_sources_is_not_found(self) -> None:
        response = AgentResponse.model_validate({"answer": "Not in the docs.", "sources": []})
        assert response.status is ResponseStatus.NO_RELEVANT_DOCUMENTS


# --------------------------------------------------------------------------- search requests


class TestQueryRequest:
    def test_spec_004_spellings(self) -> None:
        request = QueryRequest.model_validate({"query_text": " install ", "limit": 3, "min_score": 0.3,
                                               "collection_name": "docs"})
        assert (request.query_text, request.top_k, request.threshold, request.collection_name) == (
            "install", 3, 0.3, "docs")
        assert QueryRequest.model_validate({"question": "x", "collection": "c"}).collection_name == "c"

    def test_defaults_come_from_settings(self) -> None:
        request = QueryRequest(query_text="x")
        assert (request.top_k, request.threshold, request.collection_name) == (None, None, None)

    @pytest.mark.parametrize(("data", "message"), [
        ({"query_text": "  "}, "query_text is empty"),
        ({"query_text": "x", "limit": 21}, "less than or equal to 20"),
        ({"query_text": "x", "limit": 0}, "greater than or equal to 1"),
        ({"query_text": "x", "min_score": 1.5}, "less than or equal to 1"),
        ({"query_text": "x", "collection": "bad name"}, "collection name 'bad name' is invalid"),
        ({"query_text": "x", "filters": {"colour": "red"}}, "not supported"),
        ({"query_text": "x", "lmit": 3}, "Extra inputs are not permitted"),
    ])
    def test_rules(self, data: dict[str, object], message: str) -> None:
        with pytest.raises(ValidationError, match=message):
            QueryRequest.model_validate(data)


def test_ask_request_leaves_question_rules_to_the_pipeline() -> None:
    assert AskRequest.model_validate({"text": ""}).query_text == ""
    line = AskRequest.model_validate({"query_text": "q", "session_id": "t", "top_k": 2, "threshold": 0})
    assert (line.thread_id, line.top_k, line.threshold) == ("t", 2, 0.0)
    with pytest.raises(ValidationError, match="Extra inputs"):
        AskRequest.model_validate({"question": "q", "thread": "t"})


def test_search_results() -> None:
    results = SearchResults(results=[chunk()], query_time=0.01, total_results=4)
    assert SearchResults.model_validate(results.model_dump(mode="json")) == results
    with pytest.raises(ValidationError, match="total_results 0 is below the 1 results"):
        SearchResults(results=[chunk()], query_time=0.01, total_results=0)
    with pytest.raises(ValidationError):
        SearchResults(results=[], query_time=-1.0, total_results=0)


def test_retrieval_request_depth() -> None:
    assert RetrievalRequest(query_embedding=[1.0], top_k=5).depth == 5
    assert RetrievalRequest(query_embedding=[1.0], top_k=5, candidates=100).depth == 100
    assert RetrievalRequest(query_embedding=[1.0], top_k=8, candidates=3).depth == 8
    with pytest.raises(ValidationError):
        RetrievalRequest(query_embedding=[1.0], candidates=0)


# --------------------------------------------------------------------------- vector embedding


class TestVectorEmbedding:
    CHUNK = DocumentChunk(chunk_id="c1", content="Run make demo.", url="https://ragbot.dev/docs/install",
                          title="Install", chunk_index=4, source_document="install.md", content_hash="h")

    def test_maps_what_ingest_stores(self) -> None:
        emb = EmbeddingResponse(embedding_vector=[0.1, 0.2, 0.3], model_used="m")
        point = VectorEmbedding.of(self.CHUNK, emb, dimension=3)
        assert (point.id, point.text_content, point.vector, point.document_id, point.chunk_index) == (
            "c1", "Run make demo.", [0.1, 0.2, 0.3], "install.md", 4)

    def test_dimension_must_be_consistent(self) -> None:
        emb = EmbeddingResponse(embedding_vector=[0.1, 0.2], model_used="m")
        with pytest.raises(ValidationError, match="vector has 2 dimensions; the collection's vectors have 3"):
            VectorEmbedding.of(self.CHUNK, emb, dimension=3)

    @pytest.mark.parametrize(("field", "value", "message"), [
        ("text_content", "   ", "content is empty"),
        ("vector", [], "at least 1 item"),
        ("chunk_index", -1, "greater than or equal to 0"),
        ("document_id", "", "at least 1 character"),
    ])
    def test_rules(self, field: str, value: object, message: str) -> None:
        data = {"id": "c1", "text_content": "text", "vector": [1.0], "document_id": "d", "chunk_index": 0}
        with pytest.raises(ValidationError, match=message):
            VectorEmbedding.model_validate({**data, field: value})
