"""The chunk rules, checked when a chunk is ingested instead of when a question retrieves it.

A stored chunk is read back through ``core.retrieval.retriever.chunk_from_payload``, which
applies ``RetrievedChunk``'s rules (a valid URL, text within the 50,000-character limit, a
title and source document ...). A chunk breaking one would make every question that
retrieves it lose that chunk, so ``check_chunks`` runs the very same conversion at ingest:
a URL with spaces or other characters a URL may not hold (a ``--base-url`` with a space) is
repaired by percent-encoding them, and any other bad chunk is skipped with a reason naming
the document, the chunk and the rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from urllib.parse import quote

from pydantic import ValidationError

from core.models import DocumentChunk
from core.retrieval.retriever import bad_chunk_reason, chunk_from_payload

#: Characters a URL keeps as they are when it is repaired (reserved ones and ``%`` escapes).
_URL_SAFE = ":/?#[]@!$&'()*+,;=%~"


@dataclass(slots=True)
class CheckedChunks:
    """The chunks to store, and what was repaired or skipped on the way."""

    chunks: list[DocumentChunk] = field(default_factory=list)
    #: "<source_document>#<chunk_index>: <field>: <rule>" for each chunk skipped.
    invalid: list[str] = field(default_factory=list)
    repaired: int = 0


def chunk_problem(chunk: DocumentChunk) -> str | None:
    """What rule ``chunk`` breaks once stored and read back, or None when it is fine."""
    try:
        chunk_from_payload(chunk.payload(), 1.0)
    except (ValidationError, KeyError, TypeError) as exc:
        return bad_chunk_reason(exc)
    return None


def repaired_url(url: str) -> str:
    """``url`` with spaces and other characters a URL may not hold percent-encoded."""
    return quote(url.strip(), safe=_URL_SAFE)


def check_chunks(chunks: Sequence[DocumentChunk]) -> CheckedChunks:
    """Keep the chunks that pass, repair the URL of those it breaks, skip the rest with a reason."""
    checked = CheckedChunks()
    for chunk in chunks:
        problem = chunk_problem(chunk)
        if problem is not None and problem.startswith("url:"):
            fixed = chunk.model_copy(update={"url": repaired_url(chunk.url)})
            problem = chunk_problem(fixed)
            if problem is None:
                chunk = fixed
                checked.repaired += 1
        if problem is None:
            checked.chunks.append(chunk)
        else:
            checked.invalid.append(f"{chunk.source_document}#{chunk.chunk_index}: {problem}")
    return checked
