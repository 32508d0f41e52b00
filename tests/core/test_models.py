"""Every validation rule of core/models.py and core/settings.py, fed a bad value.

Each rejection test checks that the error message names the offending field (its
``loc`` as pydantic prints it) and says what is wrong, so a user reading the error
knows what to fix. Spellings accepted from the other spec documents (aliases) and
computed fields are tested beside the rules they belong to.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import AliasChoices, SecretStr, ValidationError

from core.errors import ConfigurationError
from core.models import (
    DEFAULT_MAX_QUERY_LENGTH,
    DEFAULT_RELEVANCE_THRESHOLD,
    FILTER_FIELDS,
    MAX_TEXT_LENGTH,
    MAX_USER_CONTEXT_LENGTH,
    QUERY_TRANSITIONS,
    AgentConfig,
    AgentLogEntry,
    AgentResponse,
    ConversationTurn,
    DocumentChunk,
    EmbeddingRequest,
    EmbeddingResponse,
    EventType,
    Feedback,
    GroundingValidation,
    IngestSummary,
    QueryStatus,
    RankedResults,
    ResponseStatus,
    RetrievalQuery,
    RetrievalRequest,
    RetrievalResponse,
    RetrievalStats,
    RetrievalTool,
    RetrievedChunk,
    RetrievedContext,
    Source,
    SparseVector,
    TurnRole,
    UserQuery,
    ValidationResult,
    check_transition,
    validate_collection_name,
)
from core.settings import Settings, load_settings


def err(loc: str, text: str) -> str:
    """Regex for pydantic's message: the ``loc`` line, then a message line containing ``text``."""
    return rf"(?m)^{re.escape(loc)}\n\s+.*{re.escape(text)}"


def model_err(text: str) -> str:
    """Regex for a model-level (``model_validator``) message, which has no loc line."""
    return re.escape(text)


# --------------------------------------------------------------------------- builders


def chunk_data(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "chunk_id": "c1",
        "content": "Run make demo to ingest the docs folder.",
        "score": 0.8,
        "url": "https://ragbot.dev/docs/install",
        "title": "Install",
        "section": "Install > Demo",
        "chunk_index": 0,
        "source_document": "docs/install.md",
    }
    data.update(changes)
    return data


def chunk(**changes: Any) -> RetrievedChunk:
    return RetrievedChunk(**chunk_data(**changes))


def source_for(c: RetrievedChunk, index: int = 1) -> Source:
    return Source(
        index=index,
        chunk_id=c.chunk_id,
        url=c.url,
        title=c.title,
        section=c.section,
        chunk_index=c.chunk_index,
        score=c.score,
    )


def response_data(**changes: Any) -> dict[str, Any]:
    c = chunk()
    data: dict[str, Any] = {
        "query_id": "q1",
        "response_text": "Run make demo [1].",
        "status": ResponseStatus.ANSWERED,
        "sources": [source_for(c)],
        "retrieved_chunks": [c],
    }
    data.update(changes)
    return data


NOW = datetime.now(UTC)


# --------------------------------------------------------------------------- UserQuery


class TestUserQuery:
    def test_minimal_query_gets_defaults(self) -> None:
        q = UserQuery(query_text="How do I connect ragbot to Slack?")
        assert q.status is QueryStatus.PENDING
        assert q.query_id and q.timestamp.tzinfo is not None
        assert q.thread_id is None and q.user_context is None

    def test_query_text_is_stripped(self) -> None:
        assert UserQuery(query_text="  what is ragbot?\n").query_text == "what is ragbot?"

    @pytest.mark.parametrize("text", ["", " ", "\n\t  "])
    def test_empty_or_whitespace_query_text(self, text: str) -> None:
        with pytest.raises(ValidationError, match=err("query_text", "query_text is empty")):
            UserQuery(query_text=text)

    def test_query_text_required(self) -> None:
        with pytest.raises(ValidationError, match=err("query_text", "Field required")):
            UserQuery()  # type: ignore[call-arg]

    def test_query_text_at_limit_is_accepted(self) -> None:
        assert len(UserQuery(query_text="a" * DEFAULT_MAX_QUERY_LENGTH).query_text) == 1000

    def test_query_text_over_limit(self) -> None:
        with pytest.raises(
            ValidationError, match=err("query_text", "query_text is 1001 characters long; the limit is 1000")
        ):
            UserQuery(query_text="a" * 1001)

    def test_length_is_counted_after_stripping(self) -> None:
        assert UserQuery(query_text="  " + "a" * 1000 + "  ").query_text == "a" * 1000

    def test_configurable_limit_lower(self) -> None:
        data = {"query_text": "a" * 11}
        with pytest.raises(ValidationError, match=err("query_text", "the limit is 10")):
            UserQuery.model_validate(data, context={"max_query_length": 10})
        assert UserQuery.model_validate({"query_text": "a" * 10}, context={"max_query_length": 10})

    def test_configurable_limit_higher(self) -> None:
        q = UserQuery.model_validate({"query_text": "a" * 1500}, context={"max_query_length": 2000})
        assert len(q.query_text) == 1500

    def test_context_without_limit_uses_default(self) -> None:
        with pytest.raises(ValidationError, match=err("query_text", "the limit is 1000")):
            UserQuery.model_validate({"query_text": "a" * 1001}, context={"other": 1})

    def test_user_context_limit(self) -> None:
        UserQuery(query_text="q", user_context="x" * MAX_USER_CONTEXT_LENGTH)
        with pytest.raises(ValidationError, match=err("user_context", "at most 10000 characters")):
            UserQuery(query_text="q", user_context="x" * (MAX_USER_CONTEXT_LENGTH + 1))

    def test_timestamp_older_than_24_hours(self) -> None:
        with pytest.raises(ValidationError, match=err("timestamp", "more than 24 hours old")):
            UserQuery(query_text="q", timestamp=NOW - timedelta(hours=25))

    def test_timestamp_within_24_hours(self) -> None:
        assert UserQuery(query_text="q", timestamp=NOW - timedelta(hours=23)).timestamp

    def test_timestamp_in_the_future(self) -> None:
        with pytest.raises(ValidationError, match=err("timestamp", "is in the future")):
            UserQuery(query_text="q", timestamp=NOW + timedelta(hours=1))

    def test_small_clock_skew_tolerated(self) -> None:
        assert UserQuery(query_text="q", timestamp=NOW + timedelta(minutes=2)).timestamp

    def test_naive_timestamp_refused(self) -> None:
        with pytest.raises(ValidationError, match=err("timestamp", "timezone")):
            UserQuery(query_text="q", timestamp=datetime.now())

    def test_unknown_field_forbidden(self) -> None:
        with pytest.raises(ValidationError, match=err("question", "Extra inputs are not permitted")):
            UserQuery(query_text="q", question="typo")  # type: ignore[call-arg]

    def test_bad_status(self) -> None:
        with pytest.raises(ValidationError, match=err("status", "'PENDING'")):
            UserQuery(query_text="q", status="DONE")  # type: ignore[arg-type]

    @pytest.mark.parametrize("status", list(QueryStatus))
    def test_every_status_accepted(self, status: QueryStatus) -> None:
        assert UserQuery(query_text="q", status=status.value).status is status  # type: ignore[arg-type]

    def test_aliases_text_and_session_id(self) -> None:
        q = UserQuery.model_validate({"text": "hello?", "session_id": "T1.2"})
        assert q.query_text == "hello?" and q.thread_id == "T1.2"

    def test_alias_text_error_names_alias(self) -> None:
        with pytest.raises(ValidationError, match=err("text", "query_text is empty")):
            UserQuery.model_validate({"text": "   "})

    def test_thread_and_user_id_length(self) -> None:
        with pytest.raises(ValidationError, match=err("thread_id", "at most 512 characters")):
            UserQuery(query_text="q", thread_id="t" * 513)
        with pytest.raises(ValidationError, match=err("user_id", "at most 512 characters")):
            UserQuery(query_text="q", user_id="u" * 513)

    def test_empty_query_id(self) -> None:
        with pytest.raises(ValidationError, match=err("query_id", "at least 1 character")):
            UserQuery(query_text="q", query_id="")


ALLOWED = [(a, b) for a in QueryStatus for b in QueryStatus if b in QUERY_TRANSITIONS[a]]
ILLEGAL = [(a, b) for a in QueryStatus for b in QueryStatus if b not in QUERY_TRANSITIONS[a]]


class TestQueryTransitions:
    def test_allowed_set_matches_spec(self) -> None:
        assert set(ALLOWED) == {
            (QueryStatus.PENDING, QueryStatus.PROCESSING),
            (QueryStatus.PENDING, QueryStatus.FAILED),
            (QueryStatus.PROCESSING, QueryStatus.COMPLETED),
            (QueryStatus.PROCESSING, QueryStatus.FAILED),
        }

    @pytest.mark.parametrize(("current", "new"), ALLOWED)
    def test_allowed(self, current: QueryStatus, new: QueryStatus) -> None:
        check_transition(current, new)

    @pytest.mark.parametrize(("current", "new"), ILLEGAL)
    def test_illegal(self, current: QueryStatus, new: QueryStatus) -> None:
        with pytest.raises(ValueError, match=f"cannot go from {current.value} to {new.value}"):
            check_transition(current, new)


# --------------------------------------------------------------------------- RetrievedChunk


class TestRetrievedChunk:
    def test_valid_chunk(self) -> None:
        c = chunk(page_number=3, tags=["setup"], headings=["Install", "Demo"])
        assert c.score == 0.8 and c.page_number == 3

    @pytest.mark.parametrize("content", ["", "   ", "\n"])
    def test_empty_content(self, content: str) -> None:
        with pytest.raises(ValidationError, match=err("content", "content is empty")):
            chunk(content=content)

    def test_content_max_length(self) -> None:
        chunk(content="x" * MAX_TEXT_LENGTH)
        with pytest.raises(ValidationError, match=err("content", "at most 50000 characters")):
            chunk(content="x" * (MAX_TEXT_LENGTH + 1))

    def test_short_content_is_accepted(self) -> None:
        # Spec 003 says 10-5000; ragbot accepts any non-empty text (docs/configuration.md).
        assert chunk(content="Yes.").content == "Yes."

    @pytest.mark.parametrize("score", [-0.01, 1.01, 2])
    def test_score_outside_unit_interval(self, score: float) -> None:
        with pytest.raises(ValidationError, match=err("score", str(score))):
            chunk(score=score)

    @pytest.mark.parametrize("score", [0.0, 1.0])
    def test_score_bounds_inclusive(self, score: float) -> None:
        assert chunk(score=score).score == score

    @pytest.mark.parametrize(
        "url", ["ragbot.dev/docs", "ftp://ragbot.dev/x", "http://", "https://has space.dev", ""]
    )
    def test_bad_url(self, url: str) -> None:
        with pytest.raises(ValidationError, match=err("url", f"url {url!r} is not an http(s)://")):
            chunk(url=url)

    @pytest.mark.parametrize("url", ["http://localhost:8000/a", "https://x.dev/a#b", "file:///docs/a.md"])
    def test_good_urls(self, url: str) -> None:
        assert chunk(url=url).url == url

    def test_negative_chunk_index(self) -> None:
        with pytest.raises(ValidationError, match=err("chunk_index", "greater than or equal to 0")):
            chunk(chunk_index=-1)

    def test_empty_source_document(self) -> None:
        with pytest.raises(ValidationError, match=err("source_document", "at least 1 character")):
            chunk(source_document="")

    def test_page_number_zero(self) -> None:
        with pytest.raises(ValidationError, match=err("page_number", "greater than or equal to 1")):
            chunk(page_number=0)

    def test_empty_chunk_id(self) -> None:
        with pytest.raises(ValidationError, match=err("chunk_id", "at least 1 character")):
            chunk(chunk_id="")

    def test_title_too_long(self) -> None:
        with pytest.raises(ValidationError, match=err("title", "at most 1000 characters")):
            chunk(title="t" * 1001)

    @pytest.mark.parametrize("missing", ["url", "title", "content", "score", "chunk_index"])
    def test_required_metadata(self, missing: str) -> None:
        data = chunk_data()
        del data[missing]
        with pytest.raises(ValidationError, match=err(missing, "Field required")):
            RetrievedChunk(**data)

    def test_unknown_field_forbidden(self) -> None:
        with pytest.raises(ValidationError, match=err("similarity", "Extra inputs are not permitted")):
            chunk(similarity=0.3)

    def test_spec_001_spellings(self) -> None:
        c = RetrievedChunk.model_validate(
            {
                "vector_id": "v9",
                "content": "text",
                "similarity_score": 0.4,
                "source_url": "https://x.dev/p",
                "page_title": "Page",
                "section_hierarchy": "Page > Part",
                "chunk_index": 2,
                "source_document": "p.md",
            }
        )
        assert (c.chunk_id, c.score, c.url, c.title, c.section) == (
            "v9",
            0.4,
            "https://x.dev/p",
            "Page",
            "Page > Part",
        )

    def test_spec_003_id_and_text_spellings(self) -> None:
        data = chunk_data()
        data["id"] = data.pop("chunk_id")
        data["text"] = data.pop("content")
        assert RetrievedChunk.model_validate(data).chunk_id == "c1"

    def test_alias_errors_name_the_alias(self) -> None:
        data = chunk_data()
        del data["score"], data["url"]
        with pytest.raises(ValidationError, match=err("similarity_score", "less than or equal to 1")):
            RetrievedChunk(**data, similarity_score=1.5, source_url="https://x.dev")
        with pytest.raises(ValidationError, match=err("source_url", "'nope' is not")):
            RetrievedChunk(**data, similarity_score=0.5, source_url="nope")

    def test_vector_id_is_computed(self) -> None:
        c = chunk(chunk_id="abc")
        assert c.vector_id == "abc"
        assert c.model_dump()["vector_id"] == "abc"


# --------------------------------------------------------------------------- RetrievedContext


class TestRetrievedContext:
    def test_success_without_chunks(self) -> None:
        with pytest.raises(
            ValidationError, match=model_err("successful retrieval must contain at least one")
        ):
            RetrievedContext(chunks=[])

    def test_failure_without_chunks_is_fine(self) -> None:
        assert RetrievedContext(chunks=[], success=False).chunk_ids == []

    def test_bad_chunk_inside_names_its_position(self) -> None:
        with pytest.raises(ValidationError, match=err("chunks.0.score", "less than or equal to 1")):
            RetrievedContext(chunks=[chunk_data(score=3)])

    def test_computed_fields(self) -> None:
        ctx = RetrievedContext(
            chunks=[
                chunk(chunk_id="a", content="one", score=0.9),
                chunk(chunk_id="b", content="two", score=0.4),
            ],
            query_embedding=[0.1, 0.2],
        )
        assert ctx.chunk_ids == ["a", "b"]
        assert ctx.relevance_scores == [0.9, 0.4]
        assert ctx.document_chunks == ["one", "two"]
        dumped = ctx.model_dump()
        assert {"chunk_ids", "relevance_scores", "document_chunks"} <= set(dumped)


# --------------------------------------------------------------------------- embeddings


class TestEmbedding:
    def test_sparse_vector_length_mismatch(self) -> None:
        with pytest.raises(ValidationError, match=model_err("2 indices but 1 values")):
            SparseVector(indices=[1, 2], values=[0.5])

    def test_sparse_vector_ok(self) -> None:
        assert SparseVector(indices=[3], values=[1.0]).indices == [3]

    @pytest.mark.parametrize("text", ["", "  \n"])
    def test_embedding_request_empty_text(self, text: str) -> None:
        with pytest.raises(ValidationError, match=err("query_text", "nothing to embed")):
            EmbeddingRequest(query_text=text)

    def test_embedding_request_input_type_default_and_document(self) -> None:
        assert EmbeddingRequest(query_text="q").input_type == "search_query"
        assert EmbeddingRequest(query_text="q", input_type="search_document").input_type == "search_document"

    @pytest.mark.parametrize("kind", ["classification", "query", ""])
    def test_embedding_request_bad_input_type(self, kind: str) -> None:
        with pytest.raises(ValidationError, match=err("input_type", "'search_query' or 'search_document'")):
            EmbeddingRequest(query_text="q", input_type=kind)  # type: ignore[arg-type]

    def test_embedding_request_too_long(self) -> None:
        with pytest.raises(ValidationError, match=err("query_text", "at most 50000 characters")):
            EmbeddingRequest(query_text="x" * (MAX_TEXT_LENGTH + 1))

    def test_embedding_response_without_any_vector(self) -> None:
        with pytest.raises(
            ValidationError, match=model_err("embedding_vector is empty and there is no sparse")
        ):
            EmbeddingResponse(embedding_vector=[], model_used="m")

    def test_embedding_response_sparse_only_and_dimension(self) -> None:
        sparse_only = EmbeddingResponse(
            embedding_vector=[], sparse_vector=SparseVector(indices=[1], values=[1.0]), model_used="bm25"
        )
        assert sparse_only.dimension == 0
        assert EmbeddingResponse(embedding_vector=[0.1] * 4, model_used="m").dimension == 4

    def test_embedding_response_empty_model_and_negative_time(self) -> None:
        with pytest.raises(ValidationError, match=err("model_used", "at least 1 character")):
            EmbeddingResponse(embedding_vector=[1.0], model_used="")
        with pytest.raises(ValidationError, match=err("execution_time", "greater than or equal to 0")):
            EmbeddingResponse(embedding_vector=[1.0], model_used="m", execution_time=-1)


# --------------------------------------------------------------------------- retrieval request


class TestRetrievalRequest:
    def test_defaults(self) -> None:
        r = RetrievalRequest(query_embedding=[0.1])
        assert (r.top_k, r.threshold, r.filters, r.collection_name) == (5, None, None, "ragbot")

    def test_empty_embedding(self) -> None:
        with pytest.raises(ValidationError, match=err("query_embedding", "query_embedding is empty")):
            RetrievalRequest(query_embedding=[])

    @pytest.mark.parametrize(
        ("top_k", "text"), [(0, "greater than or equal to 1"), (21, "less than or equal to 20")]
    )
    def test_top_k_range(self, top_k: int, text: str) -> None:
        with pytest.raises(ValidationError, match=err("top_k", text)):
            RetrievalRequest(query_embedding=[0.1], top_k=top_k)

    def test_alias_limit(self) -> None:
        assert RetrievalRequest.model_validate({"query_embedding": [0.1], "limit": 20}).top_k == 20
        with pytest.raises(ValidationError, match=err("limit", "less than or equal to 20")):
            RetrievalRequest.model_validate({"query_embedding": [0.1], "limit": 21})

    @pytest.mark.parametrize("value", [-0.1, 1.1])
    def test_threshold_range(self, value: float) -> None:
        with pytest.raises(ValidationError, match=err("threshold", str(value))):
            RetrievalRequest(query_embedding=[0.1], threshold=value)

    def test_alias_min_score(self) -> None:
        assert RetrievalRequest.model_validate({"query_embedding": [0.1], "min_score": 0.3}).threshold == 0.3
        with pytest.raises(ValidationError, match=err("min_score", "greater than or equal to 0")):
            RetrievalRequest.model_validate({"query_embedding": [0.1], "min_score": -0.1})

    @pytest.mark.parametrize("name", ["", "a" * 256, "has space", "a/b", "dots.not.ok", "é"])
    def test_bad_collection_name(self, name: str) -> None:
        with pytest.raises(
            ValidationError, match=err("collection_name", f"collection name {name!r} is invalid")
        ):
            RetrievalRequest(query_embedding=[0.1], collection_name=name)

    @pytest.mark.parametrize("name", ["a", "a" * 255, "My_docs-2"])
    def test_good_collection_name(self, name: str) -> None:
        assert RetrievalRequest(query_embedding=[0.1], collection_name=name).collection_name == name
        assert validate_collection_name(name) == name

    def test_unknown_filter_field(self) -> None:
        with pytest.raises(
            ValidationError, match=err("filters", "filter field(s) ['author'] are not supported")
        ):
            RetrievalRequest(query_embedding=[0.1], filters={"author": "x", "tags": ["a"]})

    def test_known_filters_and_empty_filters(self) -> None:
        filters: dict[str, Any] = {f: "x" for f in FILTER_FIELDS}
        assert RetrievalRequest(query_embedding=[0.1], filters=filters).filters == filters
        assert RetrievalRequest(query_embedding=[0.1], filters={}).filters is None

    def test_unknown_field_forbidden(self) -> None:
        with pytest.raises(ValidationError, match=err("collection", "Extra inputs are not permitted")):
            RetrievalRequest(query_embedding=[0.1], collection="docs")  # type: ignore[call-arg]


class TestRetrievalResults:
    def test_stats_rules(self) -> None:
        with pytest.raises(ValidationError, match=err("total_candidates", "greater than or equal to 0")):
            RetrievalStats(total_candidates=-1, search_threshold=0.3, collection_name="ragbot")
        with pytest.raises(ValidationError, match=err("search_threshold", "less than or equal to 1")):
            RetrievalStats(total_candidates=1, search_threshold=1.5, collection_name="ragbot")

    def test_response_negative_time(self) -> None:
        stats = RetrievalStats(total_candidates=3, search_threshold=0.3, collection_name="ragbot")
        ok = RetrievalResponse(retrieved_chunks=[chunk()], execution_time=0.01, retrieval_stats=stats)
        assert ok.retrieval_stats.total_candidates == 3
        with pytest.raises(ValidationError, match=err("execution_time", "greater than or equal to 0")):
            RetrievalResponse(retrieved_chunks=[], execution_time=-0.5, retrieval_stats=stats)

    def test_ranked_results_empty_algorithm(self) -> None:
        with pytest.raises(ValidationError, match=err("ranking_algorithm", "at least 1 character")):
            RankedResults(ranked_chunks=[], ranking_algorithm="", execution_time=0.0)
        assert RankedResults(ranked_chunks=[chunk()], ranking_algorithm="fusion", execution_time=0.0)


class TestRetrievalQuery:
    def test_valid(self) -> None:
        q = RetrievalQuery(text="slack setup", embedding=[0.2])
        assert (q.top_k, q.collection_name) == (5, "ragbot")

    @pytest.mark.parametrize(("text", "message"), [("", "at least 1 character"), ("  ", "text is empty")])
    def test_empty_text(self, text: str, message: str) -> None:
        with pytest.raises(ValidationError, match=err("text", message)):
            RetrievalQuery(text=text)

    def test_top_k_must_be_positive(self) -> None:
        with pytest.raises(ValidationError, match=err("top_k", "greater than or equal to 1")):
            RetrievalQuery(text="q", top_k=0)

    def test_bad_collection(self) -> None:
        with pytest.raises(ValidationError, match=err("collection_name", "'a/b' is invalid")):
            RetrievalQuery(text="q", collection_name="a/b")


class TestValidationResult:
    @pytest.mark.parametrize("value", ["true", 1, "yes"])
    def test_success_must_be_bool(self, value: Any) -> None:
        with pytest.raises(ValidationError, match=err("success", "Input should be a valid boolean")):
            ValidationResult(success=value, message="m")

    @pytest.mark.parametrize("message", ["", "   "])
    def test_failure_needs_message(self, message: str) -> None:
        with pytest.raises(
            ValidationError, match=model_err("message must not be empty when success is false")
        ):
            ValidationResult(success=False, message=message)

    def test_failure_with_message(self) -> None:
        assert ValidationResult(success=False, message="no chunks above 0.3").success is False

    def test_expected_count_mismatch(self) -> None:
        with pytest.raises(
            ValidationError, match=model_err("success with 1 retrieved_chunks but expected_count is 2")
        ):
            ValidationResult(success=True, retrieved_chunks=[chunk()], metrics={"expected_count": 2})

    def test_expected_count_match_and_query(self) -> None:
        result = ValidationResult(
            success=True,
            retrieved_chunks=[chunk()],
            metrics={"expected_count": 1},
            query=RetrievalQuery(text="q"),
        )
        assert result.query is not None and result.query.text == "q"

    def test_expected_count_ignored_on_failure(self) -> None:
        assert ValidationResult(success=False, message="m", metrics={"expected_count": 3})

    def test_unknown_field_forbidden(self) -> None:
        with pytest.raises(ValidationError, match=err("details", "Extra inputs are not permitted")):
            ValidationResult(success=True, details="x")  # type: ignore[call-arg]


# --------------------------------------------------------------------------- AgentResponse


class TestAgentResponse:
    def test_answered_response_and_computed_fields(self) -> None:
        r = AgentResponse(**response_data())
        assert r.sources_cited == ["https://ragbot.dev/docs/install"]
        assert r.source_chunks == ["c1"]
        dumped = r.model_dump()
        assert dumped["sources_cited"] == r.sources_cited and dumped["source_chunks"] == ["c1"]

    @pytest.mark.parametrize("text", ["", "  \n"])
    def test_empty_response_text(self, text: str) -> None:
        with pytest.raises(ValidationError, match=err("response_text", "response_text is empty")):
            AgentResponse(**response_data(response_text=text))

    def test_response_text_max_length(self) -> None:
        with pytest.raises(ValidationError, match=err("response_text", "at most 50000 characters")):
            AgentResponse(**response_data(response_text="x" * (MAX_TEXT_LENGTH + 1)))

    def test_source_not_retrieved(self) -> None:
        other = chunk(chunk_id="ghost")
        with pytest.raises(
            ValidationError, match=model_err("source [1] cites chunk 'ghost', which was not retrieved")
        ):
            AgentResponse(**response_data(sources=[source_for(other)]))

    def test_answered_without_sources(self) -> None:
        with pytest.raises(
            ValidationError, match=model_err("an answered response must cite at least one source")
        ):
            AgentResponse(**response_data(sources=[]))

    def test_answered_implies_a_retrieved_chunk(self) -> None:
        # Spec 003: retrieved_chunks >= 1; for "answered" this follows from the two rules above.
        with pytest.raises(ValidationError, match="which was not retrieved"):
            AgentResponse(**response_data(retrieved_chunks=[]))

    @pytest.mark.parametrize(
        "status",
        [
            ResponseStatus.NO_RELEVANT_DOCUMENTS,
            ResponseStatus.RETRIEVAL_FAILED,
            ResponseStatus.VALIDATION_FAILED,
        ],
    )
    def test_other_statuses_need_no_sources(self, status: ResponseStatus) -> None:
        r = AgentResponse(
            query_id="q1", response_text="I couldn't find that in the docs.", status=status, reference_id="e1"
        )
        assert r.sources == [] and r.sources_cited == [] and r.retrieved_chunks == []

    def test_bad_status(self) -> None:
        with pytest.raises(ValidationError, match=err("status", "'answered'")):
            AgentResponse(**response_data(status="done"))

    @pytest.mark.parametrize("field", ["confidence_score", "grounding_confidence"])
    @pytest.mark.parametrize("value", [-0.1, 1.2])
    def test_score_ranges(self, field: str, value: float) -> None:
        with pytest.raises(ValidationError, match=err(field, str(value))):
            AgentResponse(**response_data(**{field: value}))

    def test_empty_query_id(self) -> None:
        with pytest.raises(ValidationError, match=err("query_id", "at least 1 character")):
            AgentResponse(**response_data(query_id=""))

    def test_negative_execution_time(self) -> None:
        with pytest.raises(ValidationError, match=err("execution_time", "greater than or equal to 0")):
            AgentResponse(**response_data(execution_time=-1))

    def test_unknown_field_forbidden(self) -> None:
        with pytest.raises(ValidationError, match=err("answer", "Extra inputs are not permitted")):
            AgentResponse(**response_data(answer="x"))

    def test_source_index_is_one_based(self) -> None:
        with pytest.raises(ValidationError, match=err("index", "greater than or equal to 1")):
            Source(index=0, chunk_id="c1", url="https://x.dev", title="t", chunk_index=0, score=0.5)

    def test_source_score_range(self) -> None:
        with pytest.raises(ValidationError, match=err("score", "less than or equal to 1")):
            Source(index=1, chunk_id="c1", url="https://x.dev", title="t", chunk_index=0, score=1.5)

    def test_grounding_validation_rules(self) -> None:
        with pytest.raises(ValidationError, match=err("method", "at least 1 character")):
            GroundingValidation(method="")
        with pytest.raises(ValidationError, match=err("unsupported_sentences", "greater than or equal to 0")):
            GroundingValidation(method="ngram+dense", unsupported_sentences=-1)


# --------------------------------------------------------------------------- agent


class TestAgentConfig:
    def test_defaults(self) -> None:
        cfg = AgentConfig()
        assert (cfg.model_name, cfg.max_tokens, cfg.temperature, cfg.context_window) == (
            "gemini-2.5-flash",
            1024,
            0.2,
            8192,
        )

    @pytest.mark.parametrize("value", [-0.1, 1.5])
    def test_temperature_range(self, value: float) -> None:
        with pytest.raises(ValidationError, match=err("temperature", str(value))):
            AgentConfig(temperature=value)

    @pytest.mark.parametrize("max_tokens", [8192, 9000])
    def test_max_tokens_must_fit_context_window(self, max_tokens: int) -> None:
        with pytest.raises(
            ValidationError,
            match=model_err(f"max_tokens ({max_tokens}) must be smaller than context_window (8192)"),
        ):
            AgentConfig(max_tokens=max_tokens, context_window=8192)

    def test_field_ranges(self) -> None:
        with pytest.raises(ValidationError, match=err("max_tokens", "greater than or equal to 1")):
            AgentConfig(max_tokens=0)
        with pytest.raises(ValidationError, match=err("context_window", "greater than or equal to 256")):
            AgentConfig(context_window=100)
        with pytest.raises(ValidationError, match=err("model_name", "at least 1 character")):
            AgentConfig(model_name="")

    def test_unknown_field_forbidden(self) -> None:
        with pytest.raises(ValidationError, match=err("top_p", "Extra inputs are not permitted")):
            AgentConfig(top_p=0.9)  # type: ignore[call-arg]


SEARCH_PARAMS: dict[str, Any] = {
    "type": "object",
    "properties": {"query": {"type": "string"}},
    "required": ["query"],
}


class TestRetrievalTool:
    def test_function_schema(self) -> None:
        tool = RetrievalTool(
            tool_name="search_knowledge_base", description="Search the docs.", parameters=SEARCH_PARAMS
        )
        assert tool.function_schema == {
            "name": "search_knowledge_base",
            "description": "Search the docs.",
            "parameters": SEARCH_PARAMS,
        }
        assert tool.model_dump()["function_schema"]["name"] == "search_knowledge_base"

    @pytest.mark.parametrize("name", ["", "1search", "search-docs", "search docs", "a" * 65])
    def test_bad_tool_name(self, name: str) -> None:
        with pytest.raises(
            ValidationError, match=err("tool_name", f"tool_name {name!r} must be an identifier")
        ):
            RetrievalTool(tool_name=name, description="d", parameters=SEARCH_PARAMS)

    @pytest.mark.parametrize(
        "params", [{}, {"type": "string"}, {"type": "object"}, {"type": "object", "properties": []}]
    )
    def test_parameters_not_object_schema(self, params: dict[str, Any]) -> None:
        with pytest.raises(ValidationError, match=err("parameters", "JSON schema with type 'object'")):
            RetrievalTool(tool_name="search", description="d", parameters=params)

    def test_empty_description(self) -> None:
        with pytest.raises(ValidationError, match=err("description", "at least 1 character")):
            RetrievalTool(tool_name="search", description="", parameters=SEARCH_PARAMS)


# --------------------------------------------------------------------------- logging & memory


class TestAgentLogEntry:
    @pytest.mark.parametrize("event", list(EventType))
    def test_every_event_type_accepted(self, event: EventType) -> None:
        assert AgentLogEntry(event_type=event.value).event_type is event  # type: ignore[arg-type]

    def test_spec_002_event_types_exist(self) -> None:
        spec = {
            "query_received",
            "embedding_generated",
            "retrieval_performed",
            "results_ranked",
            "response_generated",
            "response_sent",
            "error",
        }
        assert spec <= {e.value for e in EventType}

    @pytest.mark.parametrize("bad", ["retrieval", "QUERY_RECEIVED", ""])
    def test_bad_event_type(self, bad: str) -> None:
        with pytest.raises(ValidationError, match=err("event_type", "'query_received'")):
            AgentLogEntry(event_type=bad)  # type: ignore[arg-type]

    def test_negative_execution_time(self) -> None:
        with pytest.raises(ValidationError, match=err("execution_time", "greater than or equal to 0")):
            AgentLogEntry(event_type=EventType.ERROR, execution_time=-0.1)

    def test_naive_timestamp(self) -> None:
        with pytest.raises(ValidationError, match=err("timestamp", "timezone")):
            AgentLogEntry(event_type=EventType.ERROR, timestamp=datetime(2025, 1, 1))

    def test_unknown_field_forbidden(self) -> None:
        with pytest.raises(ValidationError, match=err("level", "Extra inputs are not permitted")):
            AgentLogEntry(event_type=EventType.ERROR, level="warn")  # type: ignore[call-arg]

    def test_json_round_trip(self) -> None:
        entry = AgentLogEntry(event_type=EventType.ERROR, thread_id="T1", error_details="boom")
        assert AgentLogEntry.model_validate_json(entry.model_dump_json()) == entry


class TestFeedbackAndTurns:
    @pytest.mark.parametrize("vote", [0, 2, -2])
    def test_bad_vote(self, vote: int) -> None:
        with pytest.raises(ValidationError, match=err("vote", "Input should be 1 or -1")):
            Feedback(response_id="r1", user_id="U1", vote=vote, platform="slack")  # type: ignore[arg-type]

    @pytest.mark.parametrize("vote", [1, -1])
    def test_good_vote(self, vote: int) -> None:
        assert Feedback(response_id="r1", user_id="U1", vote=vote, platform="discord").vote == vote  # type: ignore[arg-type]

    @pytest.mark.parametrize("field", ["response_id", "user_id", "platform"])
    def test_feedback_required_text(self, field: str) -> None:
        data: dict[str, Any] = {"response_id": "r1", "user_id": "U1", "vote": 1, "platform": "slack"}
        data[field] = ""
        with pytest.raises(ValidationError, match=err(field, "at least 1 character")):
            Feedback(**data)

    def test_turn_valid(self) -> None:
        turn = ConversationTurn(thread_id="T1", role="user", content="hi")  # type: ignore[arg-type]
        assert turn.role is TurnRole.USER

    def test_turn_rules(self) -> None:
        with pytest.raises(ValidationError, match=err("thread_id", "at least 1 character")):
            ConversationTurn(thread_id="", role=TurnRole.USER, content="hi")
        with pytest.raises(ValidationError, match=err("role", "'user' or 'assistant'")):
            ConversationTurn(thread_id="T1", role="system", content="hi")  # type: ignore[arg-type]
        with pytest.raises(ValidationError, match=err("content", "at most 50000 characters")):
            ConversationTurn(thread_id="T1", role=TurnRole.ASSISTANT, content="x" * (MAX_TEXT_LENGTH + 1))


# --------------------------------------------------------------------------- ingestion


def doc_chunk_data(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "chunk_id": "d1",
        "content": "## Install\nRun make demo.",
        "url": "https://ragbot.dev/docs/install",
        "title": "Install",
        "chunk_index": 0,
        "source_document": "install.md",
        "content_hash": "sha256:abc",
    }
    data.update(changes)
    return data


class TestIngestion:
    def test_document_chunk_payload(self) -> None:
        payload = DocumentChunk(**doc_chunk_data(tags=["setup"])).payload()
        assert payload["content_hash"] == "sha256:abc" and payload["tags"] == ["setup"]

    @pytest.mark.parametrize(
        ("field", "value", "text"),
        [
            ("content", "", "at least 1 character"),
            ("chunk_index", -1, "greater than or equal to 0"),
            ("source_document", "", "at least 1 character"),
            ("content_hash", "", "at least 1 character"),
        ],
    )
    def test_document_chunk_rules(self, field: str, value: Any, text: str) -> None:
        with pytest.raises(ValidationError, match=err(field, text)):
            DocumentChunk(**doc_chunk_data(**{field: value}))

    def test_ingest_summary_line(self) -> None:
        summary = IngestSummary(
            files=12, chunks_added=30, chunks_updated=4, chunks_removed=2, chunks_skipped=100, seconds=1.26
        )
        assert summary.line() == "12 files: 30 chunks added, 4 updated, 2 removed, 100 unchanged in 1.3 s"

    def test_ingest_summary_line_with_failures(self) -> None:
        line = IngestSummary(files=2, files_failed=["a.pdf", "b.bin"]).line()
        assert line.startswith("2 files: 0 chunks added")
        assert line.endswith("; 2 file(s) skipped with errors")


# --------------------------------------------------------------------------- Settings


def _env_names() -> set[str]:
    names: set[str] = set()
    for name, field in Settings.model_fields.items():
        alias = field.validation_alias
        if isinstance(alias, AliasChoices):
            names.update(str(choice) for choice in alias.choices)
        else:
            names.add(f"RAGBOT_{name.upper()}")
    return names


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    """No ragbot variable from the developer's shell, and no .env in the working directory."""
    import os

    known = _env_names()
    for key in list(os.environ):
        if key.upper() in known or key.upper().startswith("RAGBOT_"):
            monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)
    return monkeypatch


class TestSettings:
    def test_defaults(self, clean_env: pytest.MonkeyPatch) -> None:
        s = Settings(_env_file=None)  # type: ignore[call-arg]
        assert s.collection == "ragbot" and s.data_dir == Path("data")
        assert s.top_k == 5 and s.relevance_threshold == DEFAULT_RELEVANCE_THRESHOLD == 0.15
        assert s.max_query_length == DEFAULT_MAX_QUERY_LENGTH
        assert s.cohere_embed_model == "embed-v4.0" and s.cohere_rerank_model == "rerank-v3.5"
        assert s.gemini_model == "gemini-2.5-flash"
        assert s.slack_bot_token is None and s.qdrant_url is None and s.port == 3000
        assert s.slack_followups == "thread" and s.rate_limit_per_minute == 10

    def test_derived_paths(self, clean_env: pytest.MonkeyPatch) -> None:
        clean_env.setenv("RAGBOT_DATA_DIR", "/srv/ragbot")
        s = Settings(_env_file=None)  # type: ignore[call-arg]
        assert s.store_dir == Path("/srv/ragbot/qdrant")
        assert s.sqlite_path == Path("/srv/ragbot/ragbot.sqlite3")
        assert s.control_socket == Path("/srv/ragbot/ragbot.sock")

    @pytest.mark.parametrize(
        ("var", "value", "attr", "expected"),
        [
            ("RAGBOT_TOP_K", "7", "top_k", 7),
            ("RAGBOT_RELEVANCE_THRESHOLD", "0.45", "relevance_threshold", 0.45),
            ("RAGBOT_COLLECTION", "team_docs", "collection", "team_docs"),
            ("RAGBOT_GEMINI_MODEL", "gemini-2.5-pro", "gemini_model", "gemini-2.5-pro"),
            ("RAGBOT_QDRANT_SHARD_NUMBER", "3", "qdrant_shard_number", 3),
            ("RAGBOT_QDRANT_ON_DISK", "true", "qdrant_on_disk", True),
            ("RAGBOT_RATE_LIMIT_PER_MINUTE", "0", "rate_limit_per_minute", 0),
            ("RAGBOT_SLACK_FOLLOWUPS", "mention", "slack_followups", "mention"),
            ("QDRANT_URL", "http://qdrant:6333", "qdrant_url", "http://qdrant:6333"),
            ("COHERE_BASE_URL", "http://proxy", "cohere_base_url", "http://proxy"),
            ("PORT", "8080", "port", 8080),
            ("RAGBOT_PORT", "8081", "port", 8081),
        ],
    )
    def test_environment_names(
        self, clean_env: pytest.MonkeyPatch, var: str, value: str, attr: str, expected: Any
    ) -> None:
        clean_env.setenv(var, value)
        assert getattr(Settings(_env_file=None), attr) == expected  # type: ignore[call-arg]

    def test_own_settings_need_the_prefix(self, clean_env: pytest.MonkeyPatch) -> None:
        clean_env.setenv("TOP_K", "9")
        assert Settings(_env_file=None).top_k == 5  # type: ignore[call-arg]

    @pytest.mark.parametrize(
        ("var", "attr"),
        [
            ("SLACK_BOT_TOKEN", "slack_bot_token"),
            ("SLACK_APP_TOKEN", "slack_app_token"),
            ("SLACK_SIGNING_SECRET", "slack_signing_secret"),
            ("DISCORD_TOKEN", "discord_token"),
            ("COHERE_API_KEY", "cohere_api_key"),
            ("GEMINI_API_KEY", "gemini_api_key"),
            ("GOOGLE_API_KEY", "gemini_api_key"),
            ("QDRANT_API_KEY", "qdrant_api_key"),
        ],
    )
    def test_credentials_use_ecosystem_names_and_stay_secret(
        self, clean_env: pytest.MonkeyPatch, var: str, attr: str
    ) -> None:
        clean_env.setenv(var, "s3cr3t-value")
        s = Settings(_env_file=None)  # type: ignore[call-arg]
        secret = getattr(s, attr)
        assert isinstance(secret, SecretStr) and secret.get_secret_value() == "s3cr3t-value"
        assert "s3cr3t-value" not in repr(s) and "s3cr3t-value" not in str(s)
        assert "s3cr3t-value" not in s.model_dump_json()

    def test_gemini_key_preferred_over_google_key(self, clean_env: pytest.MonkeyPatch) -> None:
        clean_env.setenv("GEMINI_API_KEY", "gem")
        clean_env.setenv("GOOGLE_API_KEY", "goo")
        key = Settings(_env_file=None).gemini_api_key  # type: ignore[call-arg]
        assert key is not None and key.get_secret_value() == "gem"

    @pytest.mark.parametrize(
        ("var", "attr"),
        [
            ("SLACK_ADMIN_USER_IDS", "slack_admin_user_ids"),
            ("DISCORD_GUILD_IDS", "discord_guild_ids"),
            ("DISCORD_ADMIN_ROLE_IDS", "discord_admin_role_ids"),
            ("DISCORD_ADMIN_USER_IDS", "discord_admin_user_ids"),
        ],
    )
    def test_comma_separated_lists(self, clean_env: pytest.MonkeyPatch, var: str, attr: str) -> None:
        clean_env.setenv(var, " A1, B2,,C3 ,")
        assert getattr(Settings(_env_file=None), attr) == ["A1", "B2", "C3"]  # type: ignore[call-arg]

    def test_single_id_list(self, clean_env: pytest.MonkeyPatch) -> None:
        clean_env.setenv("DISCORD_GUILD_IDS", "123456789012345678")
        assert Settings(_env_file=None).discord_guild_ids == ["123456789012345678"]  # type: ignore[call-arg]

    def test_dotenv_file_is_read(self, clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
        (tmp_path / ".env").write_text("RAGBOT_TOP_K=9\nCOHERE_API_KEY=co-key\n", encoding="utf-8")
        s = Settings()
        assert s.top_k == 9
        assert s.cohere_api_key is not None and s.cohere_api_key.get_secret_value() == "co-key"
        assert Settings(_env_file=None).top_k == 5  # type: ignore[call-arg]

    def test_environment_beats_dotenv(self, clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
        (tmp_path / ".env").write_text("RAGBOT_TOP_K=9\n", encoding="utf-8")
        clean_env.setenv("RAGBOT_TOP_K", "3")
        assert Settings().top_k == 3

    @pytest.mark.parametrize(
        ("var", "value", "named"),
        [
            ("RAGBOT_TOP_K", "0", "top_k"),
            ("RAGBOT_TOP_K", "21", "top_k"),
            ("RAGBOT_TOP_K", "many", "top_k"),
            ("RAGBOT_RELEVANCE_THRESHOLD", "1.5", "relevance_threshold"),
            ("RAGBOT_TEMPERATURE", "1.5", "temperature"),
            ("RAGBOT_MAX_QUERY_LENGTH", "0", "max_query_length"),
            ("RAGBOT_RATE_LIMIT_PER_MINUTE", "-1", "rate_limit_per_minute"),
            ("RAGBOT_SLACK_FOLLOWUPS", "always", "slack_followups"),
            ("RAGBOT_QDRANT_REPLICATION_FACTOR", "0", "qdrant_replication_factor"),
            ("PORT", "70000", "PORT"),
        ],
    )
    def test_load_settings_names_the_bad_variable(
        self, clean_env: pytest.MonkeyPatch, var: str, value: str, named: str
    ) -> None:
        clean_env.setenv(var, value)
        with pytest.raises(ConfigurationError, match=rf"invalid configuration: .*\b{var}\b") as info:
            load_settings(_env_file=None)
        assert info.value.exit_code == 2
        assert isinstance(info.value.__cause__, ValidationError)

    @pytest.mark.parametrize("name", ["bad name", "a/b", "x" * 256])
    def test_load_settings_bad_collection(self, clean_env: pytest.MonkeyPatch, name: str) -> None:
        clean_env.setenv("RAGBOT_COLLECTION", name)
        pattern = rf"RAGBOT_COLLECTION: .*{re.escape(repr(name))} is invalid"
        with pytest.raises(ConfigurationError, match=pattern):
            load_settings(_env_file=None)

    def test_load_settings_lists_every_problem(self, clean_env: pytest.MonkeyPatch) -> None:
        clean_env.setenv("RAGBOT_TOP_K", "0")
        clean_env.setenv("RAGBOT_COLLECTION", "bad name")
        with pytest.raises(ConfigurationError) as info:
            load_settings(_env_file=None)
        assert "RAGBOT_TOP_K" in str(info.value) and "'bad name'" in str(info.value)

    def test_load_settings_overrides(self, clean_env: pytest.MonkeyPatch) -> None:
        assert load_settings(_env_file=None, top_k=4).top_k == 4

    def test_agent_config_from_settings(self, clean_env: pytest.MonkeyPatch) -> None:
        clean_env.setenv("RAGBOT_GEMINI_MODEL", "gemini-2.5-pro")
        clean_env.setenv("RAGBOT_MAX_TOKENS", "2048")
        cfg = Settings(_env_file=None).agent_config()  # type: ignore[call-arg]
        assert (cfg.model_name, cfg.max_tokens, cfg.context_window) == ("gemini-2.5-pro", 2048, 8192)


class TestSpecSpellings:
    """The other specification documents' field names are accepted on input."""

    def test_user_query_id_alias(self) -> None:
        assert UserQuery.model_validate({"id": "q1", "text": "how?"}).query_id == "q1"

    def test_agent_response_spec_003_004_names(self) -> None:
        data = response_data()
        data["answer"] = data.pop("response_text")
        data["confidence"] = 0.5
        data["processing_time"] = 1.5
        data["query"] = "how?"
        response = AgentResponse.model_validate(data)
        assert response.response_text and response.confidence_score == 0.5
        assert response.execution_time == 1.5 and response.query_text == "how?"

    def test_source_url_must_match_its_chunk(self) -> None:
        c = chunk()
        bad = source_for(c).model_copy(update={"url": "https://elsewhere.example/page"})
        with pytest.raises(ValidationError, match="differs from its chunk's url"):
            AgentResponse.model_validate(response_data(sources=[bad.model_dump()],
                                                       retrieved_chunks=[c.model_dump()]))

    def test_chunk_payload_shape_of_spec_004(self) -> None:
        data = chunk_data()
        score = data.pop("score")
        nested = RetrievedChunk.model_validate({"score": score, "payload": data})
        assert nested.content == data["content"] and nested.score == score

    def test_query_embedding_names_of_spec_001(self) -> None:
        emb = EmbeddingResponse.model_validate({"vector": [0.1, 0.2], "model": "m", "query_text": "q"})
        assert emb.embedding_vector == [0.1, 0.2] and emb.model_used == "m"

    def test_document_chunk_blank_content(self) -> None:
        with pytest.raises(ValidationError, match="content is empty"):
            DocumentChunk.model_validate(doc_chunk_data(content="   "))


class TestSettingsCrossChecks:
    def test_max_tokens_must_fit_the_context_window(self, clean_env: pytest.MonkeyPatch) -> None:
        clean_env.setenv("RAGBOT_MAX_TOKENS", "9000")
        with pytest.raises(ConfigurationError, match=r"RAGBOT_MAX_TOKENS \(9000\) must be smaller"):
            load_settings(_env_file=None)

    def test_empty_credential_means_unset(self, clean_env: pytest.MonkeyPatch) -> None:
        clean_env.setenv("SLACK_BOT_TOKEN", "")
        assert load_settings(_env_file=None).slack_bot_token is None


@pytest.mark.parametrize(
    "model",
    [
        lambda: chunk(),
        lambda: AgentResponse.model_validate(response_data()),
        lambda: EmbeddingResponse(embedding_vector=[0.1], model_used="m"),
        lambda: RetrievalTool(tool_name="t", description="d",
                              parameters={"type": "object", "properties": {}}),
    ],
)
def test_models_accept_their_own_json(model: Any) -> None:
    original = model()
    again = type(original).model_validate_json(original.model_dump_json())
    assert again == original


@pytest.mark.parametrize(
    ("changes", "low"),
    [
        ({"confidence_score": 0.8}, False),
        ({"confidence_score": 0.2}, True),
        ({"confidence_score": 0.8, "grounding_validation": {"method": "ngram", "passed": False}}, True),
        ({"status": ResponseStatus.NO_RELEVANT_DOCUMENTS, "sources": [], "retrieved_chunks": []}, False),
    ],
)
def test_low_confidence_is_one_rule_for_every_adapter(changes: dict[str, Any], low: bool) -> None:
    assert AgentResponse.model_validate(response_data(**changes)).low_confidence is low
