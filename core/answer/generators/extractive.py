"""The extractive answerer: quotes the best-matching sentences of the retrieved chunks.

It needs no model and no network, so it is both the default generator and the
fallback when the LLM fails or its answer cannot be grounded. Quoted sentences
are kept verbatim (only whitespace is normalised) and each carries the ``[n]``
of the chunk it came from, so the answer is grounded by construction.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from core.answer.citations import CITATION_RE, neutralize_mentions
from core.models import RetrievedChunk
from core.protocols import Generation, GenerationRequest, SearchFn
from core.retrieval.terms import content_terms

NO_CHUNKS_TEXT = (
    "I could not find anything in the documentation that answers this question. "
    "Try rephrasing it or naming the feature or page you mean."
)

_FENCE_RE = re.compile(r"^\s*(```|~~~)")
_HEADING_RE = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
_LIST_RE = re.compile(r"^(?:[-*+•▪◦]|\d{1,3}[.)]|[a-zA-Z][.)])\s+(.*)$")
_TABLE_RE = re.compile(r"^\|.*\|$|^[-:|\s]{3,}$")
# A boundary candidate: sentence punctuation, optional closing quotes/brackets, whitespace.
_BOUNDARY_RE = re.compile(r"[.!?]+[\"'”’)\]]*\s+")
_LEADING_CITES_RE = re.compile(r"(?:" + CITATION_RE.pattern + r"\s*)+")
_LAST_WORD_RE = re.compile(r"(\S+)$")
_SPACE_RE = re.compile(r"\s+")
_CODE_SYMBOLS_RE = re.compile(r"[{}\[\]();=<>$\\|`_/#*]")
# Unfenced code (a chunk boundary can cut a fence in half) still has tell-tale tokens.
_CODE_TOKENS_RE = re.compile(
    r"\b(?:def|elif|import|return|lambda|self)\b[ .(:]|\w\(\)|[=!<>]=|\s=\s|\):|\"\"\"|;\s*$"
    r"|^[a-z_]+\.[a-z_]+\("
)
_LINK_ONLY_RE = re.compile(r"^\[[^\]]*\]\([^)]*\)[.;,]?$")
# Deletes ASCII non-letters, so len(s.translate(...)) counts letters in one C pass.
_KEEP_LETTERS = str.maketrans("", "", "".join(chr(i) for i in range(128) if not chr(i).isalpha()))
_FRONT_MATTER_RE = re.compile(r"\A\s*---\s*\n.*?\n---\s*(?:\n|\Z)", re.DOTALL)

#: Words ending in "." that do not end a sentence, even before a capital letter.
_ABBREVIATION_TEXT = """e.g. i.e. vs. cf. dr. mr. mrs. ms. prof. fig. figs. eq. eqs. no. nos.
    approx. al. st. jr. sr.
    inc. ltd. co. corp. sec. ch. vol. pp. p. ed. eds. ref. refs. dept. est. resp. e.g.: i.e.:
    e.g., i.e., u.s. u.k. a.k.a. ca."""
_ABBREVIATIONS: frozenset[str] = frozenset(_ABBREVIATION_TEXT.split())


def _split_prose(text: str) -> list[str]:
    """Split one paragraph (whitespace already normalised) into sentences."""
    sentences: list[str] = []
    start = 0
    for match in _BOUNDARY_RE.finditer(text):
        end = match.end()
        if start >= end or end >= len(text):
            continue
        nxt = text[end]
        if nxt.islower():
            continue  # "e.g. the robot", "etc. and": a lower-case word continues the sentence.
        word_match = _LAST_WORD_RE.search(text, start, match.start() + 1)
        word = word_match.group(1).lower() if word_match else ""
        if word in _ABBREVIATIONS or re.fullmatch(r"[a-z]\.", word):
            continue  # "Fig. 3", initials like "J. Smith"
        cites = _LEADING_CITES_RE.match(text, end)
        if cites:
            # "... end. [2] Next": the marker belongs to the sentence before it.
            end = cites.end()
            if end >= len(text):
                continue
        sentences.append(text[start:end].strip())
        start = end
    tail = text[start:].strip()
    if tail:
        sentences.append(tail)
    return [s for s in sentences if s]


@lru_cache(maxsize=4096)
def _segments(text: str) -> tuple[tuple[str, str], ...]:
    """Split markdown-ish text into ``(kind, sentence)`` with kind text, heading or table.

    Code fences are dropped; list items start a new unit; wrapped lines are joined.
    Cached: popular chunks come back question after question.
    """
    out: list[tuple[str, str]] = []
    para: list[str] = []
    text = _FRONT_MATTER_RE.sub("", text, count=1)

    def flush() -> None:
        if para:
            for sentence in _split_prose(_SPACE_RE.sub(" ", " ".join(para)).strip()):
                out.append(("text", sentence))
            para.clear()

    in_fence = False
    for raw in text.splitlines():
        line = raw.strip()
        if _FENCE_RE.match(line):
            flush()
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        if not line:
            flush()
            continue
        heading = _HEADING_RE.match(line)
        if heading:
            flush()
            if heading.group(1):
                out.append(("heading", _SPACE_RE.sub(" ", heading.group(1))))
            continue
        if _TABLE_RE.match(line):
            flush()
            out.append(("table", _SPACE_RE.sub(" ", line)))
            continue
        item = _LIST_RE.match(line)
        if item:
            flush()
            para.append(item.group(1))
            continue
        para.append(line)
    flush()
    return tuple(out)


def split_sentences(text: str) -> list[str]:
    """Split text into sentences, whitespace normalised, code fences skipped.

    Handles abbreviations ("e.g.", "Fig. 2"), decimals ("2.5 m"), markdown list
    items and headings (each its own unit, markers removed) and citation markers
    written after the full stop ("... works. [1] Next ..." keeps ``[1]`` with the
    first sentence).

    Args:
        text: Markdown or plain text.

    Returns:
        Sentences in order; table rows are left out.
    """
    return [s for kind, s in _segments(text) if kind != "table"]


def _looks_like_code(sentence: str) -> bool:
    symbols = len(_CODE_SYMBOLS_RE.findall(sentence))
    if symbols > 0.08 * len(sentence) or _CODE_TOKENS_RE.search(sentence):
        return True
    return len(sentence.translate(_KEEP_LETTERS)) < 0.6 * len(sentence)


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


@dataclass(frozen=True, slots=True)
class _Candidate:
    chunk: int
    position: int
    text: str
    terms: frozenset[str]
    bigrams: frozenset[tuple[str, str]]


@lru_cache(maxsize=16_384)
def _sentence_terms(sentence: str) -> tuple[str, ...]:
    return tuple(content_terms(sentence))


def _bigrams(terms: Sequence[str]) -> frozenset[tuple[str, str]]:
    return frozenset(itertools.pairwise(terms))


def select_sentences(
    question: str,
    chunks: Sequence[RetrievedChunk],
    *,
    max_sentences: int = 3,
    max_chunks: int = 5,
    min_words: int = 5,
) -> list[tuple[int, str]]:
    """Pick the sentences that best answer ``question``, in reading order.

    Args:
        question: The user's question.
        chunks: Ranked chunks, best first, scores in [0, 1].
        max_sentences: How many sentences to quote at most.
        max_chunks: How many of the top chunks to read.
        min_words: Shorter sentences are skipped as fragments.

    Returns:
        ``(n, sentence)`` pairs where ``n`` is the chunk's 1-based number,
        ordered by chunk rank then position in the chunk.
    """
    candidates: list[_Candidate] = []
    for ci, chunk in enumerate(chunks[:max_chunks]):
        position = 0
        for kind, sentence in _segments(chunk.content):
            if kind != "text":
                continue
            if (
                len(sentence) < 20
                or sentence.endswith("?")  # quiz and FAQ questions do not answer anything
                or len(sentence.split()) < min_words
                or _looks_like_code(sentence)
                or _LINK_ONLY_RE.match(sentence)
            ):
                continue
            terms = _sentence_terms(sentence)
            if len(terms) < 2:
                continue
            candidates.append(
                _Candidate(ci, position, sentence, frozenset(terms), _bigrams(terms))
            )
            position += 1
    if not candidates:
        return []

    q_terms_list = content_terms(question)
    q_terms = frozenset(q_terms_list)
    q_bigrams = _bigrams(q_terms_list)
    # Inverse document frequency over the candidate sentences: a question word found
    # in every sentence ("robot" in a robotics book) says little about which one answers.
    df = {t: sum(1 for c in candidates if t in c.terms) for t in q_terms}
    n = len(candidates)
    weights = {t: math.log(1.0 + n / d) for t, d in df.items() if d}
    total = sum(weights.values())

    def score(c: _Candidate) -> float:
        overlap = sum(w for t, w in weights.items() if t in c.terms) / total if total else 0.0
        bigram = len(q_bigrams & c.bigrams) / len(q_bigrams) if q_bigrams else 0.0
        words = len(c.text.split())
        # Very long sentences are usually run-on PDF text or lists flattened into one line.
        length_penalty = 0.1 if words > 60 else 0.0
        # "... the following steps:" introduces an answer but is not one.
        intro_penalty = 0.15 if c.text.endswith(":") else 0.0
        return (
            0.55 * overlap
            + 0.1 * bigram
            + 0.25 * chunks[c.chunk].score
            + 0.1 / (1 + c.position)
            - length_penalty
            - intro_penalty
        )

    ranked = sorted(candidates, key=lambda c: (-score(c), c.chunk, c.position))
    chosen: list[_Candidate] = []
    for cand in ranked:
        if len(chosen) >= max_sentences:
            break
        if any(_jaccard(cand.terms, other.terms) >= 0.7 for other in chosen):
            continue  # near-duplicate (overlapping chunks often repeat a sentence)
        chosen.append(cand)
    chosen.sort(key=lambda c: (c.chunk, c.position))
    return [(c.chunk + 1, c.text) for c in chosen]


def format_extract(selected: Sequence[tuple[int, str]]) -> str:
    """Join quoted sentences into one paragraph, each followed by its ``[n]``."""
    return " ".join(f"{sentence} [{n}]" for n, sentence in selected)


class ExtractiveGenerator:
    """A Generator that quotes the best-matching sentences of the top chunks, cited."""

    def __init__(self, *, max_sentences: int = 3, max_chunks: int = 5) -> None:
        if max_sentences < 1:
            raise ValueError(f"max_sentences must be at least 1, got {max_sentences}")
        self.max_sentences = max_sentences
        self.max_chunks = max_chunks

    @property
    def name(self) -> str:
        """Recorded as AgentResponse.model_used."""
        return "extractive"

    async def generate(self, request: GenerationRequest, *, search: SearchFn) -> Generation:
        """Quote up to ``max_sentences`` sentences from ``request.chunks``, each cited.

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
        selected = select_sentences(
            request.query.query_text, chunks,
            max_sentences=self.max_sentences, max_chunks=self.max_chunks,
        )
        if not selected:
            # Every sentence was a heading, code or a fragment: quote the top chunk's
            # opening rather than saying nothing, still cited.
            first = _SPACE_RE.sub(" ", chunks[0].content).strip()
            snippet = first if len(first) <= 300 else first[:300].rsplit(" ", 1)[0] + " …"
            selected = [(1, snippet)]
        # Quoted text comes from documents, which anyone may have written: never let
        # it ping a channel.
        text = neutralize_mentions(format_extract(selected))
        return Generation(text=text, chunks=chunks, model_used=self.name, retrieval_used=True)
