"""Run answer-evaluation cases through an answer function (``ragbot eval answers``).

The caller supplies ``ask(question, thread_id)``: the CLI passes the runtime pipeline's
``answer``, the same code path as ``ragbot ask``. Each case gets its own thread; a
``follow_up`` case asks its question, then its follow-up in the same thread, and the
follow-up's reply is the one scored.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from urllib.parse import unquote, urlparse
from urllib.request import url2pathname

from core.errors import RagbotError
from core.eval.answers import AnswerCase, CaseResult
from core.models import AgentResponse, RetrievedChunk, Source

#: Answers one message: (question, thread_id) -> response.
Ask = Callable[[str, str], Awaitable[AgentResponse]]
#: Told each case's id after it ran, for a progress line.
Progress = Callable[[int, int, CaseResult], None]
#: The status recorded when answering raised a RagbotError (an invalid question ...).
ERROR_STATUS = "error"


def local_file(url: str, document: str | None, docs_root: Path) -> str:
    """Name the file a chunk comes from, relative to the docs folder when it is local.

    Args:
        url: the chunk's or source's URL.
        document: the chunk's ``source_document`` (the path relative to the ingest root),
            or None when the chunk is not at hand.
        docs_root: the ingested folder, to map a ``file://`` URL back.

    Returns:
        The relative path, or the URL when it is not a file under ``docs_root``.
    """
    if document is not None and not document.startswith(("http://", "https://")):
        return document
    parsed = urlparse(url)
    if parsed.scheme == "file":
        path = Path(url2pathname(unquote(parsed.path)))
        try:
            return path.resolve().relative_to(docs_root.resolve()).as_posix()
        except ValueError:
            return path.as_posix()
    return url


def source_file(source: Source, chunks: Mapping[str, RetrievedChunk], docs_root: Path) -> str:
    """Name the file a source of an answer comes from (see ``local_file``)."""
    chunk = chunks.get(source.chunk_id)
    return local_file(source.url, chunk.source_document if chunk else None, docs_root)


def result_from_response(
    case: AnswerCase, response: AgentResponse, *, docs_root: Path, latency_ms: float
) -> CaseResult:
    """Reduce a response to what the metrics need."""
    chunks = {c.chunk_id: c for c in response.retrieved_chunks}
    return CaseResult(
        case=case, status=response.status.value, text=response.response_text,
        source_files=[source_file(s, chunks, docs_root) for s in response.sources],
        source_urls=[s.url for s in response.sources],
        source_indices=[s.index for s in response.sources],
        retrieved_files=[local_file(c.url, c.source_document, docs_root) for c in response.retrieved_chunks],
        latency_ms=latency_ms,
    )


async def _timed(ask: Ask, text: str, thread_id: str) -> tuple[AgentResponse | RagbotError, float]:
    started = time.perf_counter()
    try:
        response: AgentResponse | RagbotError = await ask(text, thread_id)
    except RagbotError as exc:
        response = exc
    return response, (time.perf_counter() - started) * 1000


async def run_case(case: AnswerCase, ask: Ask, *, docs_root: Path, thread_id: str) -> CaseResult:
    """Ask a case's message(s) in thread ``thread_id`` and score the last reply.

    A ``RagbotError`` while answering (an invalid question, a failed provider) is recorded
    as status ``error`` with its message as the text; other exceptions propagate.
    """
    response, latency = await _timed(ask, case.question, thread_id)
    if case.kind.threaded and case.follow_up is not None:
        response, latency = await _timed(ask, case.follow_up, thread_id)
    if isinstance(response, RagbotError):
        return CaseResult(case=case, status=ERROR_STATUS, text=f"{type(response).__name__}: {response}",
                          latency_ms=latency)
    return result_from_response(case, response, docs_root=docs_root, latency_ms=latency)


async def run_cases(
    cases: Sequence[AnswerCase], ask: Ask, *, docs_root: Path, progress: Progress | None = None
) -> list[CaseResult]:
    """Run every case in order, each in a new thread, and return their results."""
    run = uuid.uuid4().hex[:8]
    results: list[CaseResult] = []
    for number, case in enumerate(cases, start=1):
        result = await run_case(case, ask, docs_root=docs_root, thread_id=f"eval-{run}-{case.id}")
        results.append(result)
        if progress is not None:
            progress(number, len(cases), result)
    return results
