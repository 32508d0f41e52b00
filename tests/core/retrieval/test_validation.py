"""Retrieval checks (spec 001's ValidationResult): sample queries and how each result is judged."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from core.models import EmbeddingResponse, QueryRequest, RetrievedChunk, SearchResults
from core.protocols import DocumentState
from core.retrieval.validation import (
    ValidationCase,
    failure_result,
    judge_case,
    metadata_completeness,
    sample_cases,
)


def chunk(name: str, score: float, **kw: object) -> RetrievedChunk:
    return RetrievedChunk.model_validate({
        "chunk_id": name, "content": f"text of {name}", "score": score, "title": name.title(),
        "url": f"https://ragbot.dev/docs/{name}", "section": f"{name.title()} > Intro", "chunk_index": 0,
        "source_document": f"{name}.md", **kw})


def results(*chunks: RetrievedChunk, total: int | None = None) -> SearchResults:
    return SearchResults(results=list(chunks), query_time=0.0123, total_results=total or len(chunks),
                         request=QueryRequest(query_text="q", top_k=5),
                         embedding=EmbeddingResponse(embedding_vector=[0.1] * 4, model_used="m"))


def test_sample_cases_come_from_titles_and_sections() -> None:
    docs = {f"p{i:02d}.md": DocumentState(
        "h", frozenset({"c"}), title=f"Page {i}", url=f"https://x.dev/p{i}",
        sections=(f"Page {i} > Setup", f"Page {i} > Usage", f"Page {i} > End")) for i in range(30)}
    docs["blank.md"] = DocumentState("h", frozenset({"c"}))
    cases = sample_cases(docs, count=10)
    assert len(cases) == 10 and cases == sample_cases(docs, count=10), "the same sample every run"
    assert cases[0].query_text == "Usage Page 0" and cases[0].origin == "https://x.dev/p0"
    assert len({c.origin for c in cases}) == 10
    alone = sample_cases({"a.md": DocumentState("h", frozenset(), title="Alone")}, count=3)
    assert alone[0].query_text == "Alone"
    assert sample_cases({}, count=5) == []


def test_a_passing_check_measures_everything() -> None:
    case = ValidationCase.model_validate({"question": "slack token", "expected_page": "slack.md"})
    result = judge_case(case, results(chunk("install", 0.4), chunk("slack", 0.9), total=7),
                        expected_count=None, collection="docs")
    assert result.success and result.message == "2 chunk(s), scores 0.40-0.90, 12.3 ms, expected page at 2"
    assert result.metrics == {
        "count": 2, "total_results": 7, "score_min": 0.4, "score_max": 0.9, "scores_in_range": True,
        "metadata_completeness": 1.0, "latency_ms": 12.3, "dropped_chunks": 0, "embedding_model": "m",
        "embedding_dimension": 4, "expected_page": "slack.md", "expected_page_found": True,
        "expected_page_rank": 2,
    }
    query = result.query
    assert query is not None
    assert (query.text, query.collection_name, query.top_k) == ("slack token", "docs", 5)
    assert query.embedding == [0.1] * 4 and len(result.retrieved_chunks) == 2


@pytest.mark.parametrize(("case", "expected_count", "found", "message"), [
    ({"query_text": "q", "expected_page": "https://ragbot.dev/docs/keys"}, None, [chunk("slack", 0.9)],
     "expected page 'https://ragbot.dev/docs/keys' not among the 1 chunk(s)"),
    ({"query_text": "q"}, 3, [chunk("slack", 0.9)], "expected 3 chunk(s), got 1"),
    ({"query_text": "q", "expected_count": 2}, None, [chunk("slack", 0.9)], "expected 2 chunk(s), got 1"),
    ({"query_text": "q"}, None, [], "no chunk reached the relevance threshold"),
])
def test_failing_checks_say_why(case: dict[str, object], expected_count: int | None,
                                found: list[RetrievedChunk], message: str) -> None:
    result = judge_case(ValidationCase.model_validate(case), results(*found), expected_count=expected_count,
                        collection="docs")
    assert not result.success and result.message == message


def test_expected_count_zero_passes_on_nothing() -> None:
    result = judge_case(ValidationCase(query_text="sourdough"), results(), expected_count=0, collection="d")
    assert result.success and result.message.startswith("0 chunks, as expected")


def test_dropped_chunks_fail_the_check() -> None:
    found = results(chunk("slack", 0.9)).model_copy(update={"dropped_chunks": ["bad: url: not a URL"]})
    result = judge_case(ValidationCase(query_text="q"), found, expected_count=None, collection="d")
    assert not result.success and result.message == "1 bad stored chunk(s) dropped"


def test_generated_cases_report_their_page_without_requiring_it() -> None:
    case = ValidationCase(query_text="Intro Keys", origin="https://ragbot.dev/docs/keys")
    result = judge_case(case, results(chunk("slack", 0.9)), expected_count=None, collection="d")
    assert result.success and result.metrics["origin_rank"] is None
    assert result.metrics["origin"] == "https://ragbot.dev/docs/keys"


def test_metadata_completeness_counts_empty_sections() -> None:
    assert metadata_completeness([chunk("a", 0.5), chunk("b", 0.5, section="")]) == 0.875
    assert metadata_completeness([]) == 1.0


def test_a_failed_search_is_a_failed_check() -> None:
    result = failure_result(ValidationCase(query_text="q"), "StoreUnavailableError: closed", collection="d")
    assert not result.success and result.message == "retrieval failed: StoreUnavailableError: closed"


@pytest.mark.parametrize("line", [
    {"query_text": "q", "expected": "x"},
    {"query_text": "", "expected_page": "x"},
    {"query_text": "q", "expected_count": 21},
    {"query_text": "q", "limit": 0},
])
def test_case_lines_are_validated(line: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        ValidationCase.model_validate(line)
