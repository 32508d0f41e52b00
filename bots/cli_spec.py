"""``ragbot search`` and ``ragbot validate``: retrieval as the specification's entities.

``search`` takes a question (or a QueryRequest as JSON) and prints the SearchResults:
retrieval only, no answer, nothing logged, ranked exactly as an answer's chunks are, so an
admin sees why an answer cited what it cited. ``validate`` runs sample queries (from a
JSON Lines file, or written from the collection's own page titles and sections) and prints
one ValidationResult per query; the exit code is 1 when any check fails. Both hand their
work to a running ``ragbot serve`` (ops ``search`` and ``validate`` on the control socket,
``bots/control.py``), since the embedded store is opened by one process only. Registered by
``bots/cli.py`` through ``register(subparsers)``; bad input raises InputError (exit 2).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from core.errors import InputError, ProviderError, StoreError
from core.jsonl import BadLine, iter_models, validation_message
from core.models import QueryRequest, SearchResults, ValidationResult
from core.retrieval.validation import DEFAULT_SAMPLE, ValidationCase, failure_result, judge_case, sample_cases
from core.settings import Settings

if TYPE_CHECKING:
    from bots.runtime import Runtime

#: The control-socket operations this module serves.
SPEC_OPS = frozenset({"search", "validate"})
_CASE_EXAMPLE = '{"query_text": "how do I install it?", "expected_page": "install.md"}'


def register(subparsers: Any) -> None:
    """Add ``search`` and ``validate`` to the ``ragbot`` command line."""
    p = subparsers.add_parser(
        "search", help="retrieval only: the chunks a question finds, with their scores",
        description="Search the knowledge base as an answer would, without answering: prints "
                    "SearchResults (results, query_time, total_results). QUESTION may be a "
                    'QueryRequest as JSON, e.g. \'{"query_text": "install", "limit": 3}\'.')
    p.add_argument("question", help="the words to search for, or a QueryRequest as JSON")
    p.add_argument("--limit", "--top-k", dest="top_k", type=int, help="results at most (1-20; RAGBOT_TOP_K)")
    p.add_argument("--min-score", "--threshold", dest="threshold", type=float,
                   help="minimum relevance in [0, 1], a hard floor (default RAGBOT_RELEVANCE_THRESHOLD, "
                        "which comes down near a best candidate that only just reaches it)")
    p.add_argument("--collection", help="collection to search (RAGBOT_COLLECTION)")
    p.add_argument("--json", action="store_true", help="print the SearchResults as JSON")
    p.set_defaults(func=cmd_search)

    p = subparsers.add_parser(
        "validate", help="check retrieval after an ingest: one ValidationResult per sample query",
        description="Run sample queries and check each: chunks found, scores in [0, 1], metadata "
                    "complete, latency, and the expected page when the file names one. Exit 1 "
                    "when any check fails.")
    p.add_argument("--queries", type=Path, help=f"JSON Lines, one case per line: {_CASE_EXAMPLE} "
                   "(default: queries written from the collection's page titles and sections)")
    p.add_argument("--expected-count", type=int, help="each query must return exactly N chunks (0-20)")
    p.add_argument("--sample", type=int, default=DEFAULT_SAMPLE,
                   help=f"queries written when no --queries file is given (default {DEFAULT_SAMPLE})")
    p.add_argument("--collection", help="collection to check (RAGBOT_COLLECTION)")
    p.add_argument("--json", action="store_true", help="print one ValidationResult per line as JSON")
    p.set_defaults(func=cmd_validate)


# ---------------------------------------------------------------------- input


def search_request(question: str, *, top_k: int | None = None, threshold: float | None = None,
                   collection: str | None = None) -> QueryRequest:
    """The QueryRequest of ``ragbot search``: the text (or JSON) given, with the options set on top.

    Raises:
        InputError: bad JSON, an unknown key or a value out of range, named.
    """
    data: dict[str, Any] = {"query_text": question}
    if question.lstrip().startswith("{"):
        try:
            data = json.loads(question)
        except ValueError as exc:
            raise InputError(f"the QueryRequest is not JSON ({exc})") from None
        if not isinstance(data, dict):
            raise InputError("the QueryRequest must be a JSON object")
    options = {"top_k": top_k, "threshold": threshold, "collection_name": collection}
    for key, value in options.items():
        if value is not None:
            # A flag replaces whichever spelling the JSON used for the same field.
            for spelling in {"top_k": ("limit",), "threshold": ("min_score",),
                             "collection_name": ("collection",)}[key]:
                data.pop(spelling, None)
            data[key] = value
    return query_request(data)


def query_request(data: dict[str, Any]) -> QueryRequest:
    """Validate a QueryRequest given as a mapping (spec 004's or ragbot's spellings).

    Raises:
        InputError: naming the unknown key or the bad value.
    """
    try:
        return QueryRequest.model_validate(data)
    except ValidationError as exc:
        raise InputError(f"search: {validation_message(exc, QueryRequest)}") from None


def read_cases(path: Path) -> list[ValidationCase]:
    """The cases of a ``--queries`` file.

    Raises:
        InputError: the file is missing, or a line is bad (named with its number and key).
    """
    cases: list[ValidationCase] = []
    for number, item in iter_models(path, ValidationCase, example=_CASE_EXAMPLE):
        if isinstance(item, BadLine):
            raise InputError(f"{path}:{number}: {item.problem}")
        cases.append(item)
    if not cases:
        raise InputError(f"{path} holds no query")
    return cases


# ---------------------------------------------------------------------- running


async def execute(runtime: Runtime, request: dict[str, Any]) -> dict[str, Any]:
    """Run a ``search`` or ``validate`` request on an open runtime; the control socket calls it too.

    Raises:
        InputError: a bad request, or a collection nothing was ingested into.
    """
    if request.get("op") == "search":
        query = query_request(request.get("request") or {})
        await _require_collection(runtime, query.collection_name or runtime.settings.collection)
        results = await runtime.pipeline.search(query)
        return {"ok": True, "results": results.model_dump(mode="json")}
    try:
        cases = [ValidationCase.model_validate(c) for c in request.get("cases") or []]
    except ValidationError as exc:
        raise InputError(f"validate: {validation_message(exc, ValidationCase)}") from None
    checked = await validate_collection(runtime, cases=cases, expected_count=request.get("expected_count"),
                                        sample=int(request.get("sample") or DEFAULT_SAMPLE),
                                        collection=request.get("collection"))
    return {"ok": True, "results": [r.model_dump(mode="json") for r in checked]}


async def validate_collection(
    runtime: Runtime, *, cases: Sequence[ValidationCase] = (), expected_count: int | None = None,
    sample: int = DEFAULT_SAMPLE, collection: str | None = None,
) -> list[ValidationResult]:
    """One ValidationResult per case (``ragbot validate``; ``ragbot doctor`` may call it).

    Without cases, ``sample`` queries are written from the collection's page titles and sections.

    Raises:
        InputError: the collection is empty or missing.
    """
    collection = collection or runtime.settings.collection
    await _require_collection(runtime, collection)
    if not cases:
        cases = sample_cases(await runtime.store.documents(collection), count=sample)
        if not cases:
            raise InputError(f"collection {collection!r} has no page to write sample queries from")
    results: list[ValidationResult] = []
    for case in cases:
        where = case.collection_name or collection
        request = case.request(top_k=expected_count).model_copy(update={"collection_name": where})
        try:
            found = await runtime.pipeline.search(request)
        except (StoreError, ProviderError) as exc:
            results.append(failure_result(case, f"{type(exc).__name__}: {exc}", collection=where))
            continue
        results.append(judge_case(case, found, expected_count=expected_count, collection=where))
    return results


async def _require_collection(runtime: Runtime, collection: str) -> None:
    if await runtime.store.collection_info(collection) is None:
        raise InputError(f"nothing has been ingested into collection {collection!r} yet: "
                         "run `ragbot ingest PATH` first")


async def _run(settings: Settings, request: dict[str, Any]) -> dict[str, Any]:
    """Through a running ``ragbot serve`` when there is one, else in a runtime of our own."""
    from bots.cli import _handed, _runtime

    reply = await _handed(settings, request)
    if reply is not None:
        return reply
    async with _runtime(settings) as runtime:
        return await execute(runtime, request)


# ---------------------------------------------------------------------- commands


async def cmd_search(args: argparse.Namespace, settings: Settings) -> int:
    """``ragbot search QUESTION``: print the SearchResults; 0 on success."""
    request = search_request(args.question, top_k=args.top_k, threshold=args.threshold,
                             collection=args.collection)
    payload = request.model_dump(mode="json", exclude_none=True)
    reply = await _run(settings, {"op": "search", "request": payload})
    results = SearchResults.model_validate(reply["results"])
    for dropped in results.dropped_chunks:
        print(f"ragbot: dropped a bad stored chunk {dropped}", file=sys.stderr)
    if args.json:
        print(results.model_dump_json())
    else:
        print(format_results(results, collection=request.collection_name or settings.collection))
    return 0


async def cmd_validate(args: argparse.Namespace, settings: Settings) -> int:
    """``ragbot validate``: one ValidationResult per query; 1 when any check failed."""
    if args.expected_count is not None and not 0 <= args.expected_count <= 20:
        raise InputError(f"--expected-count {args.expected_count} must be between 0 and 20")
    if args.sample < 1:
        raise InputError(f"--sample {args.sample} must be at least 1")
    if args.collection is not None:
        search_request("x", collection=args.collection)  # the collection name's rule, named
    cases = read_cases(args.queries) if args.queries is not None else []
    reply = await _run(settings, {
        "op": "validate", "cases": [c.model_dump(mode="json", exclude_none=True) for c in cases],
        "expected_count": args.expected_count, "sample": args.sample, "collection": args.collection})
    results = [ValidationResult.model_validate(r) for r in reply["results"]]
    for result in results:
        if args.json:
            # The query's embedding is kept out of the output: its dimension is in the metrics.
            print(result.model_dump_json(exclude={"query": {"embedding"}}))
        else:
            text = result.query.text if result.query else "?"
            print(f"{'PASS' if result.success else 'FAIL'}  {text[:48]:<48}  {result.message}")
    failed = sum(not r.success for r in results)
    if not args.json:
        print(f"{len(results) - failed} of {len(results)} checks passed", file=sys.stderr)
    return 1 if failed else 0


def format_results(results: SearchResults, *, collection: str) -> str:
    """The human form of ``ragbot search``: one block per chunk, best first."""
    head = (f"{len(results.results)} of {results.total_results} result(s) for "
            f"{results.searched_text or ''!r} in {collection!r}, {results.query_time * 1000:.1f} ms"
            f" ({results.ranking_algorithm or 'no ranking'})")
    lines = [head]
    for n, chunk in enumerate(results.results, start=1):
        where = chunk.section or chunk.title
        excerpt = " ".join(chunk.content.split())[:160]
        lines += [f"[{n}] {chunk.score:.2f}  {where}", f"    {chunk.url}", f"    {excerpt}"]
    return "\n".join(lines)
