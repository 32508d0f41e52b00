"""A chunk's quotable blocks, with what the excerpt's scoring needs to know of each.

Headings are left out (they label, they do not answer); long paragraphs and lists are read
sentence by sentence and item by item; each unit records whether it opens a section, asks
(a question, quiz options, an exercise's task) or starts mid-sentence (a chunk's cut first
words). Pure functions over the retrieved chunks' Markdown.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from core.answer.blocks import Block, list_items, parse_blocks, table_rows
from core.answer.links import link_labels, shown_links
from core.answer.sentences import split_prose
from core.models import RetrievedChunk
from core.retrieval.terms import STOPWORDS, content_terms, with_name_parts

#: A paragraph longer than this is quoted by its best sentences, not whole.
LONG_PARAGRAPH = 450
#: A lead-in sentence with fewer content words than this only points at what follows.
LEAD_IN_TERMS = 4

#: Multiple-choice options ("a) Local planner b) Global planner").
_CHOICE_A = re.compile(r"(?:^|\s)[aA]\)\s")
_CHOICE_B = re.compile(r"\s[bB]\)\s")
#: An exercise's task: prose opening with the verbs assignments use ("Explain the difference
#: between ...", "1. **Conceptual understanding**: Compare ..."), capitalised as a sentence
#: starts ("EXPLAIN ANALYZE" is SQL). Docs never open a paragraph or a list with them (none of
#: fastapi-docs', uv-docs' or gazebo-docs'); textbooks do, in exercises.
_TASK = re.compile(
    r"^\W*(?:\d+[.)]\s*)?(?:\*\*[^*\n]{1,60}\*\*\s*:?\s*)?(?:Explain|Discuss|Compare|Contrast|Justify"
    r"|Evaluate|Analy[sz]e|Describe)\s+(?:the|how|why|what|when|a|an|your|each|one|two|three)\b")

#: A heading that names an exercise or a quiz ("Exercise 2.3: Morphology", "Exercises", "Lab
#: Exercises", "Quiz 2", "Review Questions"), as a page title or a section in its heading path: what
#: its section says asks ("Design a mechanical system where ...", "Research one example of ...")
#: rather than explains, whatever its verbs. The word ends the heading, or only a number or a
#: colon and a title follow it, and no verb leads to it: "Quiz settings" and "Creating quizzes"
#: (a product's pages) are no quiz. Textbooks' headings, in English; "Assessment" is left out, as
#: a syllabus's grading sits under it.
_ASKING_NAMES = r"(?:exercises?|quiz(?:zes)?|homework|review\s+questions)"
_ASKING_HEADING = re.compile(
    rf"(?:^|>)\s*(?:\d[\d.]*\s*)?(?:(?![\w-]*ing\s)[\w-]+\s+){{0,2}}{_ASKING_NAMES}"
    r"(?:\s*\d[\d.]*)?\s*(?::[^>]*)?(?=>|$)", re.IGNORECASE)


#: The question asks about exercises or quizzes themselves: their sections then answer.
ASKING_WORD = re.compile(rf"\b{_ASKING_NAMES}\b", re.IGNORECASE)

#: Code in prose (`uv sync`) or fenced: a name written in it is written as the tool spells it.
CODE = re.compile(r"```.*?```|`[^`\n]+`", re.DOTALL)
WORD = re.compile(r"[^\W\d_][\w'-]*")


@dataclass(frozen=True, slots=True, kw_only=True)
class Unit:
    """A quotable block of one chunk, with what scoring needs."""

    chunk: int
    position: int
    block: Block
    terms: frozenset[str]
    pairs: frozenset[tuple[str, str]]
    #: The first block under a heading: what comes before it belongs to another section.
    opens_section: bool = False
    #: The block asks (a question, a task, quiz options), or most of its chunk does.
    asks: bool = False
    #: Prose that starts mid-sentence (``starts_mid_sentence``).
    cut: bool = False
    #: The label heading the merged part of the chunk this block is in ("DEPTH_LIMIT"): chunking
    #: writes the headings of small sections it merges as lines (``Block.is_label``).
    part: str = ""


def quote_key(text: str) -> str:
    """How a block is known once quoted: its words, spaces collapsed, case folded."""
    return " ".join(text.split()).casefold()


def prose_chars(block: Block) -> int:
    """How long a block reads: its characters with each link as its label (code as it is).

    A link's address ("cli/reference.md#hatch-publish") is no part of what a reader reads.
    """
    return len(block.text) if block.kind == "code" else len(link_labels(block.text))


@lru_cache(maxsize=16_384)
def unit_terms(text: str, *, names: bool = True) -> tuple[str, ...]:
    """The content terms of a block's text, a compound name's words with it unless ``names`` is off.

    "minResponseBodyBytes" holds the "min" and "response" of "a min size for responses"; code
    is read whole ("RuntimeError" is no error asked about), and so are word pairs, which the
    inserted words would split. Cached: popular chunks come back question after question.
    """
    return tuple(content_terms(with_name_parts(text) if names else text))


#: Prose with something to read: a letter or a digit.
_WORDY = re.compile(r"[^\W_]")


def read_units(chunks: Sequence[RetrievedChunk], *, exercises_asked: bool = False) -> list[list[Unit]]:
    """Each chunk's blocks, long paragraphs and lists split into sentences and items, no headings.

    Args:
        chunks: the chunks read.
        exercises_asked: the question is about exercises or quizzes themselves ("how do i add a
            quiz to a page?"): a section under such a heading then answers rather than asks.
    """
    out: list[list[Unit]] = []
    in_code = frozenset(WORD.findall(" ".join(CODE.findall("\n".join(c.content for c in chunks)))))
    for ci, chunk in enumerate(chunks):
        units: list[Unit] = []
        heading = False
        part = ""
        for block in _without_overlap(chunk, chunks):
            if block.kind == "heading":
                heading, part = True, ""
                continue
            if block.is_unreadable:
                # Never quoted: what introduced it is left with nothing to introduce, and
                # what follows it is no body of the prose before it.
                if units and units[-1].block.is_lead_in:
                    units[-1:] = _without_lead_in(units[-1])
                heading = True
                continue
            if block.kind == "para" and not _WORDY.search(shown_links(block.text, page_url=chunk.url)):
                continue  # only a picture chat cannot show, or a table's "|" a chunk opened with
            pieces = [block]
            if block.kind == "para" and len(block.text) > LONG_PARAGRAPH:
                pieces = [Block("para", s) for s in split_prose(block.text)]
            elif block.kind == "list" and len(block.text) > LONG_PARAGRAPH:
                pieces = list_items(block)  # a long list is read item by item, like sentences
            elif block.kind == "table" and len(block.text) > LONG_PARAGRAPH:
                # ... and a long table row by row, each under its header: a table of every option
                # holds some of any question's words in rows that have nothing to do with it.
                pieces = table_rows(block)
            part = block.text if block.heads_entry else part
            for piece in pieces:
                read = piece.text if piece.kind == "code" else link_labels(piece.text)
                terms = unit_terms(read, names=piece.kind != "code")
                pairs = frozenset(itertools.pairwise(unit_terms(read, names=False)))
                units.append(Unit(chunk=ci, position=len(units), block=piece, terms=frozenset(terms),
                                   pairs=pairs, opens_section=heading, asks=is_asking(piece),
                                   cut=starts_mid_sentence(piece, in_code), part=part))
                heading = False
        heading_path = f"{chunk.title} > {chunk.section}"
        set_work = not exercises_asked and _ASKING_HEADING.search(heading_path) is not None
        if units and (set_work or 2 * sum(u.asks for u in units) > len(units)):  # a quiz, an exercise
            units = [dataclasses.replace(u, asks=True) for u in units]
        out.append(units)
    return out


def _without_overlap(chunk: RetrievedChunk, chunks: Sequence[RetrievedChunk]) -> Sequence[Block]:
    """The chunk's blocks, less a first one cut mid-sentence that the chunk before it holds whole.

    Chunking starts a chunk with the tail of the one before (``overlap_chars``), from a word
    when no sentence starts there; when both chunks are read, that tail would be quoted twice,
    once as a fragment ("an operation returns an `Err` variant, ...").
    """
    blocks = parse_blocks(chunk.content)
    if not blocks or blocks[0].kind != "para" or not blocks[0].text[:1].islower():
        return blocks
    before = next((c for c in chunks if c.source_document == chunk.source_document
                   and c.chunk_index == chunk.chunk_index - 1), None)
    if before is not None and quote_key(before.content).endswith(quote_key(blocks[0].text)):
        return blocks[1:]
    return blocks


def _without_lead_in(unit: Unit) -> list[Unit]:
    """A lead-in whose code is left out: its pointing words go, what it says stays.

    "Shadow it as follows:" says nothing without its code and goes; "we'll convert our `String`
    to bytes using the `as_bytes` method:" is the answer, and ends with a full stop instead.
    """
    sentences = split_prose(unit.block.text) if unit.block.kind == "para" else []
    if not sentences:
        return []
    if len(frozenset(unit_terms(sentences[-1], names=False))) < LEAD_IN_TERMS:
        sentences = sentences[:-1]
    else:
        sentences[-1] = sentences[-1].rstrip().removesuffix(":").rstrip() + "."
    if not sentences:
        return []
    text = " ".join(sentences)
    read = link_labels(text)
    terms = unit_terms(read)
    return [dataclasses.replace(unit, block=Block("para", text), terms=frozenset(terms),
                                pairs=frozenset(itertools.pairwise(unit_terms(read, names=False))))]


def starts_mid_sentence(block: Block, in_code: frozenset[str]) -> bool:
    """Prose that starts in lower case where no name does: a chunk's cut first words.

    "resolution is often ...", "and then ..." read badly alone; "uv sync ..." or "pip ..."
    starts a whole sentence with a name the pages write in lower case. A first word counts as
    such a name only when the read chunks write it in code too (`uv lock`), and it is no
    function word.
    """
    if block.kind != "para" or not block.text[:1].islower():
        return False
    first = WORD.match(block.text.replace("\u2019", "'"))
    return first is None or first[0].lower() in STOPWORDS or first[0].removesuffix("'s") not in in_code


def is_asking(block: Block) -> bool:
    """A question, multiple-choice options or an exercise's task: what a quiz asks, not an answer."""
    if block.kind not in ("para", "list"):
        return False
    text = block.text.rstrip().rstrip("*_\"')").rstrip()
    choices = _CHOICE_A.search(block.text) is not None and _CHOICE_B.search(block.text) is not None
    return text.endswith("?") or _TASK.match(text) is not None or choices
