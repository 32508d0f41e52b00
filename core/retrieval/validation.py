"""Retrieval checks: spec 001's ValidationResult, one per sample query (``ragbot validate``).

The check an admin runs after every ingest. Queries come from a JSON Lines file, or are
written from the collection's own page titles and section headings, so the check works on
any corpus. Each result says whether retrieval worked for that query and measures it: how
many chunks, their score range, how complete their metadata is, how long it took, and, when
the file names one, whether the expected page was found.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import AliasChoices, Field

from core.models import (
    QueryRequest,
    RetrievalQuery,
    RetrievedChunk,
    SearchOptions,
    SearchResults,
    ValidationResult,
)
from core.protocols import DocumentState

#: Sample queries written when no file is given.
DEFAULT_SAMPLE = 10
#: The metadata every chunk should carry (spec 001: "all metadata fields must be present").
METADATA_FIELDS = ("url", "title", "section", "source_document")


class ValidationCase(SearchOptions):
    """One line of ``ragbot validate --queries FILE``: a query and what it should find.

    ``expected_page`` is matched against each chunk's URL, source document and title (a
    suffix of the URL or the document path is enough: ``install.md``, ``/docs/install``).
    """

    query_text: str = Field(min_length=1, validation_alias=AliasChoices("query_text", "text", "question"))
    expected_page: str | None = Field(
        default=None, min_length=1,
        validation_alias=AliasChoices("expected_page", "expected_url", "expected_file"))
    expected_count: int | None = Field(default=None, ge=0, le=20)
    #: Set for generated queries: the page the query was written from (reported, not required).
    origin: str | None = None

    def request(self, *, top_k: int | None = None) -> QueryRequest:
        """The search this case runs (its own options, else ``top_k``)."""
        return QueryRequest(query_text=self.query_text, top_k=self.top_k or top_k,
                            threshold=self.threshold, collection_name=self.collection_name)


def sample_cases(
    documents: Mapping[str, DocumentState], *, count: int = DEFAULT_SAMPLE
) -> list[ValidationCase]:
    """Queries written from the collection's pages: a section heading and the page title.

    Pages are taken evenly across the sorted document names (the same ones every run), the
    middle section of each; a page without sections gives its title alone.
    """
    pages = sorted((name, state) for name, state in documents.items() if state.title or state.sections)
    if not pages or count < 1:
        return []
    step = max(1, len(pages) // count)
    cases: list[ValidationCase] = []
    for name, state in pages[::step][:count]:
        section = state.sections[len(state.sections) // 2] if state.sections else ""
        words = list(dict.fromkeys([*section.split(" > ")[-1].split(), *state.title.split()]))
        text = " ".join(words).strip() or name
        cases.append(ValidationCase(query_text=text[:1000], origin=state.url or name))
    return cases


def _matches(chunk: RetrievedChunk, page: str) -> bool:
    page = page.strip().rstrip("/")
    candidates = (chunk.url.rstrip("/"), chunk.source_document, chunk.url.split("#")[0].rstrip("/"))
    return any(c == page or c.endswith(page) for c in candidates) or chunk.title == page


def _rank_of(chunks: Sequence[RetrievedChunk], page: str | None) -> int | None:
    if page is None:
        return None
    return next((i for i, c in enumerate(chunks, start=1) if _matches(c, page)), None)


def metadata_completeness(chunks: Sequence[RetrievedChunk]) -> float:
    """Share of (chunk, field) pairs among METADATA_FIELDS that hold a value; 1.0 for no chunks."""
    if not chunks:
        return 1.0
    present = sum(bool(getattr(c, name)) for c in chunks for name in METADATA_FIELDS)
    return round(present / (len(chunks) * len(METADATA_FIELDS)), 4)


def judge_case(case: ValidationCase, results: SearchResults, *, expected_count: int | None,
               collection: str) -> ValidationResult:
    """The ValidationResult of one case from what the search returned."""
    chunks = results.results
    scores = [c.score for c in chunks]
    expected = case.expected_count if case.expected_count is not None else expected_count
    metrics: dict[str, object] = {
        "count": len(chunks), "total_results": results.total_results,
        "score_min": min(scores, default=None), "score_max": max(scores, default=None),
        "scores_in_range": all(0.0 <= s <= 1.0 for s in scores),
        "metadata_completeness": metadata_completeness(chunks),
        "latency_ms": round(results.query_time * 1000, 1),
        "dropped_chunks": len(results.dropped_chunks),
    }
    if results.embedding is not None:
        metrics |= {"embedding_model": results.embedding.model_used,
                    "embedding_dimension": results.embedding.dimension}
    if expected is not None:
        metrics["expected_count"] = expected
    problems = _problems(case, chunks, metrics, expected)
    if case.origin is not None:
        metrics["origin"] = case.origin
        metrics["origin_rank"] = _rank_of(chunks, case.origin)
    top_k = case.top_k or (results.request.top_k if results.request else None) or max(len(chunks), 1)
    query = RetrievalQuery(text=case.query_text, collection_name=collection, top_k=top_k,
                           embedding=results.embedding.embedding_vector if results.embedding else [])
    message = "; ".join(problems) if problems else _passed(chunks, metrics)
    return ValidationResult(success=not problems, message=message, metrics=metrics,
                            retrieved_chunks=chunks, query=query)


def _problems(case: ValidationCase, chunks: Sequence[RetrievedChunk], metrics: dict[str, object],
              expected: int | None) -> list[str]:
    problems: list[str] = []
    if expected is not None and len(chunks) != expected:
        problems.append(f"expected {expected} chunk(s), got {len(chunks)}")
    elif expected is None and not chunks:
        problems.append("no chunk reached the relevance threshold")
    if not metrics["scores_in_range"]:
        problems.append("a score is outside [0, 1]")
    required = ("url", "title", "source_document")
    missing = sorted({name for c in chunks for name in required if not getattr(c, name)})
    if missing:
        problems.append(f"chunks without {', '.join(missing)}")
    if metrics["dropped_chunks"]:
        problems.append(f"{metrics['dropped_chunks']} bad stored chunk(s) dropped")
    if case.expected_page is not None:
        rank = _rank_of(chunks, case.expected_page)
        metrics |= {"expected_page": case.expected_page, "expected_page_found": rank is not None,
                    "expected_page_rank": rank}
        if rank is None:
            problems.append(f"expected page {case.expected_page!r} not among the {len(chunks)} chunk(s)")
    return problems


def _passed(chunks: Sequence[RetrievedChunk], metrics: Mapping[str, object]) -> str:
    text = f"{len(chunks)} chunk(s), scores {metrics['score_min']:.2f}-{metrics['score_max']:.2f}" if chunks \
        else "0 chunks, as expected"
    text += f", {metrics['latency_ms']} ms"
    if metrics.get("expected_page_rank"):
        text += f", expected page at {metrics['expected_page_rank']}"
    return text


def failure_result(case: ValidationCase, problem: str, *, collection: str) -> ValidationResult:
    """The ValidationResult of a case whose search failed (the store or the embedder)."""
    return ValidationResult(success=False, message=f"retrieval failed: {problem}", metrics={"count": 0},
                            query=RetrievalQuery(text=case.query_text, collection_name=collection,
                                                 top_k=case.top_k or 5))
