"""The extractive answerer: quotes the passage that answers the question, cited.

It needs no model and no network, so it is both the default generator and the
fallback when the LLM fails or its answer cannot be grounded. The quoted blocks
(``core.answer.excerpt``) are kept verbatim, so the answer is grounded by
construction; each excerpt carries the ``[n]`` of the chunk it came from.
"""

from __future__ import annotations

import re

from core.answer.blocks import parse_blocks
from core.answer.citations import neutralize_mentions
from core.answer.excerpt import choose_excerpts
from core.answer.links import shown_links
from core.models import RetrievedChunk
from core.protocols import Generation, GenerationRequest, SearchFn
from core.retrieval.retriever import CosineFn

NO_CHUNKS_TEXT = (
    "I could not find anything in the documentation that answers this question. "
    "Try rephrasing it or naming the feature or page you mean."
)
_SPACE_RE = re.compile(r"\s+")


class ExtractiveGenerator:
    """A Generator that quotes the best passage of the top chunks (one or two sources), cited.

    Args:
        max_sources: how many sources an answer quotes at most.
        max_chunks: how many of the top chunks are read.
        cosines: question-passage similarity of the local model, so meaning counts too.
    """

    def __init__(self, *, max_sources: int = 2, max_chunks: int = 5, cosines: CosineFn | None = None) -> None:
        if max_sources < 1 or max_chunks < 1:
            raise ValueError(f"max_sources and max_chunks must be at least 1: {max_sources}, {max_chunks}")
        self.max_sources = max_sources
        self.max_chunks = max_chunks
        self.cosines = cosines

    @property
    def name(self) -> str:
        """Recorded as AgentResponse.model_used."""
        return "extractive"

    async def generate(self, request: GenerationRequest, *, search: SearchFn) -> Generation:
        """Quote the best passage(s) of ``request.chunks``, each cited.

        Args:
            request: The question and its ranked chunks.
            search: Unused; the extractive answerer never searches again.

        Returns:
            The Generation; a polite "nothing found" text when there are no chunks.
        """
        return self.answer(request)

    def answer(self, request: GenerationRequest) -> Generation:
        """Synchronous core of ``generate`` (pure, fast)."""
        chunks = list(request.chunks)
        if not chunks:
            return Generation(text=NO_CHUNKS_TEXT, chunks=[], model_used=self.name,
                              retrieval_used=True)
        question = request.search_text or request.query.query_text
        excerpts = choose_excerpts(question, chunks, max_chunks=self.max_chunks,
                                   max_sources=self.max_sources, cosines=self.cosines)
        text = "\n\n".join(excerpts) if excerpts else _opening(chunks[: self.max_chunks])
        # Quoted text comes from documents, which anyone may have written: never let
        # it ping a channel.
        return Generation(text=neutralize_mentions(text), chunks=chunks, model_used=self.name,
                          retrieval_used=True)


def _opening(chunks: list[RetrievedChunk]) -> str:
    """The first prose of the best chunk holding any, cited: what to say when no block shares a word.

    Rather than saying nothing; its code may be an include of a file not there. A label ("Center
    of Mass (CoM)", a heading kept as a line) says nothing alone, and nor does a page's title: a
    chunk of code only (a canned reply in a text fence) answered "Issue triage [1]".
    """
    for n, chunk in enumerate(chunks, start=1):
        prose = (b.text for b in parse_blocks(chunk.content) if b.kind in ("para", "list") and not b.is_label)
        opening = _SPACE_RE.sub(" ", shown_links(next(prose, ""), page_url=chunk.url)).strip()
        if opening:
            snippet = opening if len(opening) <= 300 else opening[:300].rsplit(" ", 1)[0] + " …"
            return f"{snippet} [{n}]"
    return f"{chunks[0].title} [1]"
