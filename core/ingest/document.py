"""What every loader produces: a ``LoadedDocument`` of ``Section`` s, and the builder they share.

A document is a title, tags, a URL and a list of sections, each a heading path
(``["ROS 2", "Nodes"]``) with its text blocks: paragraphs, lists, tables and fenced
code blocks (kept whole, fences included, so the chunker can see them).
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from typing import Any, NamedTuple

#: RetrievedChunk caps titles at 1000 characters; longer ones are cut here.
MAX_TITLE_CHARS = 1000


class Section(NamedTuple):
    """One part of a document: its heading path and its text blocks, in order."""

    headings: list[str]
    blocks: list[str]


@dataclass(frozen=True, kw_only=True, slots=True)
class LoadedDocument:
    """A parsed document, ready for ``core.ingest.chunking.chunk_document``.

    ``raw_sha256`` fingerprints what was read (the file's bytes, or a fetched
    page's extracted text) so an unchanged document can be skipped.
    """

    source_document: str
    title: str
    url: str
    sections: list[Section]
    raw_sha256: str
    tags: list[str] = field(default_factory=list)
    front_matter: dict[str, Any] = field(default_factory=dict)
    #: Names the parser when a format came to be read differently (``.rst`` by docutils, MyST
    #: pages through ``core.ingest.myst``), so pages stored the old way are chunked again once;
    #: "" for the rest, whose fingerprints stay as they were.
    parser: str = ""


class SectionBuilder:
    """Collects blocks under the current heading path (used by the Markdown and HTML parsers)."""

    def __init__(self) -> None:
        self.stack: list[tuple[int, str]] = []
        self.blocks: list[str] = []
        self.paragraph: list[str] = []
        self.sections: list[Section] = []
        self.first_h1: str | None = None
        #: The heading the page opens with, before any text: its title when it has no ``# H1``
        #: and the heading names what the file name does (``core.ingest.loaders``; mdBook's pages
        #: start at ``##``, some end with a "## Summary"). A page opening with prose or a note,
        #: or with the first of many sections at one level ("## 0.47.3" of a changelog: two or
        #: more later headings at its level or above), takes its title from elsewhere.
        self._opening_heading: str | None = None
        self._opening_level = 0
        self._opening_peers = 0
        #: Headings below the opening one (deeper than it): a page it heads has sections under it.
        self._opening_children = 0
        self._opened = False
        #: The heading path of the last section, shared by the next one when it is the same:
        #: a file of 300,000 small sections must not hold 300,000 copies of it.
        self._path: list[str] = []
        #: The level of the part (``part``) the current section is in, if it is in one.
        self._part_level: int | None = None
        #: Whether the current section's own blocks are left out (``leave_out``).
        self._left_out = False

    def part(self, text: str) -> None:
        """A titled part of the page (a changelog entry): a heading one level below the current one.

        The headings inside the part, up to ``end_part``, are under it. A part after a part is its
        sibling; a part is never the heading a page opens with, nor its title.
        """
        self.end_part()
        level = (self.stack[-1][0] if self.stack else 0) + 1
        self._opened = True
        first_h1 = self.first_h1
        self.heading(level, text)
        self.first_h1, self._part_level = first_h1, level

    def end_part(self) -> None:
        """The end of the current part (``part``): the section it was in goes on."""
        if self._part_level is None:
            return
        self.end_section()
        while self.stack and self.stack[-1][0] >= self._part_level:
            self.stack.pop()
        self._part_level = None

    def heading(self, level: int, text: str) -> None:
        if self._part_level is not None:  # a heading inside a part is under it, whatever its level
            level = max(level, self._part_level + 1)
        self.end_section()
        self._left_out = False
        if level == 1 and self.first_h1 is None and text:
            self.first_h1 = text
        if not self._opened and text:
            self._opening_heading, self._opening_level = text, level
        elif level <= self._opening_level:
            self._opening_peers += 1
        elif self._opening_heading is not None and text:
            self._opening_children += 1
        self._opened = True
        while self.stack and self.stack[-1][0] >= level:
            self.stack.pop()
        if text:
            self.stack.append((level, sys.intern(text) if len(text) < 200 else text))

    @property
    def opening(self) -> str | None:
        """The heading the page opens with, unless it is only the first of several at its level."""
        return self._opening_heading if self._opening_peers < 2 else None

    @property
    def heads_page(self) -> bool:
        """Whether the opening heading heads the page: none at its level or above after it, sections under it.

        NestJS' pages open with ``### Providers`` over ``####`` sections: the site titles the page
        "Providers", whatever its file (``components.md``) is named.
        """
        return self._opening_heading is not None and not self._opening_peers and self._opening_children > 0

    def end_paragraph(self) -> None:
        if self.paragraph:
            self._opened = True
            block = "\n".join(self.paragraph).strip("\n")
            if block.strip():
                self.blocks.append(block)
            self.paragraph = []

    def block(self, text: str) -> None:
        self.end_paragraph()
        if text.strip():
            self._opened = True
            self.blocks.append(text)

    def leave_out(self) -> None:
        """Leave the current section's own blocks out, up to the next heading (its subsections stay).

        Material for MkDocs' ``{ data-search-exclude }``: the site's search leaves the section
        out, and answers do too.
        """
        self._left_out = True

    def end_section(self) -> None:
        self.end_paragraph()
        if self._left_out:
            self.blocks = []
        if self.blocks:
            path = [t for _, t in self.stack]
            if path != self._path:
                self._path = path
            self.sections.append(Section(self._path, self.blocks))
            self.blocks = []

    def finish(self) -> list[Section]:
        self.end_section()
        return self.sections


def fenced(code: str, language: str = "") -> str:
    """``code`` as a fenced Markdown block, its fence longer than any backtick run inside it.

    A shorter fence would close where the code shows a fence of its own.
    """
    longest = max((len(m) for m in re.findall(r"`{3,}", code)), default=2)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{code.rstrip()}\n{fence}"


#: A line that starts a list, code, table, quote or heading: a lead goes on the line before it.
_BLOCK_START = re.compile(r"^\s*(?:[-*+]\s|\d+[.)]\s|`{3,}|~{3,}|\||#|>)")


def starts_block(line: str) -> bool:
    """Whether ``line`` starts a list, code, table, quote or heading: a label goes on the line before it."""
    return _BLOCK_START.match(line) is not None


def with_lead(lead: str, text: list[str]) -> list[str]:
    """``lead`` before the first paragraph of ``text`` (on its own line before a list or code).

    A label with nothing after it ("Note:" over an empty note) is left out.
    """
    if not any(line.strip() for line in text):
        return [lead] if lead and not lead.endswith(":") else []
    if not lead:
        return text
    if lead.endswith(":") and not starts_block(text[0]):
        return [f"{lead} {text[0].lstrip()}", *text[1:]]
    return [lead, "", *text]


def clip_title(title: str) -> str:
    """One line, at most ``MAX_TITLE_CHARS`` long; "Untitled" when nothing is left."""
    title = " ".join(title.split())
    return title[:MAX_TITLE_CHARS] or "Untitled"
