"""Sentence splitting for Markdown-ish passages (grounding and the extractive answerer).

Handles abbreviations ("e.g.", "Fig. 2"), decimals, list items, headings and
citation markers written after the full stop. Pure functions; cached because
popular chunks come back question after question.
"""

from __future__ import annotations

import re
from functools import lru_cache

from core.answer.citations import CITATION_RE
from core.answer.links import link_labels
from core.ingest.spans import CODE_SPAN

_FENCE_RE = re.compile(r"^\s*(```|~~~)")
_HEADING_RE = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
_LIST_RE = re.compile(r"^(?:[-*+•▪◦]|\d{1,3}[.)]|[a-zA-Z][.)])\s+(.*)$")
_TABLE_RE = re.compile(r"^\|.*\|$|^[-:|\s]{3,}$")
# A boundary candidate: sentence punctuation, optional closing quotes/brackets, whitespace.
_BOUNDARY_RE = re.compile(r"[.!?]+[\"'”’)\]]*\s+")
_LEADING_CITES_RE = re.compile(r"(?:" + CITATION_RE.pattern + r"\s*)+")
_SPACE_RE = re.compile(r"\s+")
_CODE_SYMBOLS_RE = re.compile(r"[{}\[\]();=<>$\\|`_/#*]")
# Unfenced code (a chunk boundary can cut a fence in half) still has tell-tale tokens.
_CODE_TOKENS_RE = re.compile(
    r"\b(?:def|elif|import|return|lambda|self)\b[ .(:]|\w\(\)|[=!<>]=|\s=\s|\):|\"\"\"|;\s*$"
    r"|^[a-z_]+\.[a-z_]+\("
)

# Deletes ASCII non-letters, so len(s.translate(...)) counts letters in one C pass.
_KEEP_LETTERS = str.maketrans("", "", "".join(chr(i) for i in range(128) if not chr(i).isalpha()))
_FRONT_MATTER_RE = re.compile(r"\A\s*---\s*\n.*?\n---\s*(?:\n|\Z)", re.DOTALL)

#: Words ending in "." that do not end a sentence, even before a capital letter.
_ABBREVIATION_TEXT = """e.g. i.e. vs. cf. dr. mr. mrs. ms. prof. fig. figs. eq. eqs. no. nos.
    approx. al. st. jr. sr.
    inc. ltd. co. corp. sec. ch. vol. pp. p. ed. eds. ref. refs. dept. est. resp. e.g.: i.e.:
    e.g., i.e., u.s. u.k. a.k.a. ca."""
_ABBREVIATIONS: frozenset[str] = frozenset(_ABBREVIATION_TEXT.split())


def split_prose(text: str) -> list[str]:
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
        # The word before the mark, found backwards (a search from ``start`` made a long
        # paragraph of abbreviations quadratic); "(e.g." is "e.g.".
        stop = match.start() + 1
        word = text[max(start, text.rfind(" ", start, stop) + 1):stop].lower().lstrip("([{\"'\u201c\u2018")
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
            for sentence in split_prose(_SPACE_RE.sub(" ", " ".join(para)).strip()):
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


def looks_like_code(sentence: str) -> bool:
    """True for unfenced code (a chunk boundary can cut a fence in half) or symbol soup."""
    symbols = len(_CODE_SYMBOLS_RE.findall(sentence))
    if symbols > 0.08 * len(sentence) or _CODE_TOKENS_RE.search(sentence):
        return True
    return len(sentence.translate(_KEEP_LETTERS)) < 0.6 * len(sentence)


_LINK_MARKUP_RE = re.compile(r"[\[\]*_]")


def paragraph_looks_like_code(paragraph: str) -> bool:
    """``looks_like_code`` for a Markdown paragraph, read as its words: links and inline code are prose.

    "joined in order using [`sequence()`](/en/reference/...)" names code; judged as written, its
    link target and backticks made it symbol soup (a quarter of one site's paragraphs). Link
    targets, brackets and emphasis go, and each code span counts as one word.
    """
    words = CODE_SPAN.sub("code", link_labels(paragraph))
    return looks_like_code(_LINK_MARKUP_RE.sub("", words))
