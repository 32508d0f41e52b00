"""AsciiDoc's section titles: ``== Title`` (or ``## Title``), two-line ones, ids and a book's parts."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

from core.ingest.asciidoc.attributes import entry
from core.ingest.asciidoc.inline import inline
from core.ingest.asciidoc.preprocess import verbatim_closing

__all__ = ["Heading", "after_header", "has_parts", "outside_verbatim", "section_title", "section_titles"]

#: A one-line title; matched on the line without its trailing blanks, so a run of them costs nothing.
_TITLE = re.compile(r"^(?P<marks>={1,6}|#{1,6})[ \t]+(?P<title>\S.*)$")
#: A two-line title's underline: one character, repeated (``=`` a level-0 title, ``-`` level 1 ...).
_UNDERLINE = re.compile(r"^(?:={2,}|-{2,}|~{2,}|\^{2,}|\+{2,})$")
_UNDERLINE_LEVELS = "=-~^+"
_UNDERLINE_CHARS = frozenset(_UNDERLINE_LEVELS)
#: A two-line title's first line starts with a word character (not a list, a block's attributes ...).
_UNDERLINED = re.compile(r"^\w.*\S$|^\w$")
_ANCHOR = re.compile(r"^\[\[(?P<id>[\w:.-]+)(?:,[^\]]*)?\]\][ \t]*$")
#: An id given in a block's attribute line: ``[#install]``, ``[source#app,ruby]``, ``[#ex,asciidoc]``.
_GIVEN_ID = re.compile(r"^\[[\w.%-]*#(?P<id>[\w:-]+)[^\]]*\][ \t]*$")
_BLOCK_TITLE = re.compile(r"^\.(?![.\s])(?P<title>.+)$")
_BLOCK_ATTRIBUTES = re.compile(r"^\[(?:[^\[\]]|\[[^\]]*\])*\][ \t]*$")
_COMMENT = re.compile(r"^//(?!/)|^//$")


class Heading(NamedTuple):
    """A section title: its level (0 for ``=``), its text as written, and how many lines it takes."""

    level: int
    title: str
    lines: int


def section_title(lines: list[str], k: int) -> Heading | None:
    """The section title ``lines[k]`` starts, if it starts one: ``== Title`` or a title over ``-----``."""
    line = lines[k]
    if line[:1] not in ("=", "#") and (k + 1 >= len(lines) or lines[k + 1][:1] not in _UNDERLINE_CHARS):
        return None  # most lines: read once per block, this is the common answer
    line = line.rstrip()
    if (written := _TITLE.match(line)) is not None:
        marks, title = written["marks"], written["title"]
        if title.endswith(" " + marks):  # the symmetric form: ``== Title ==``
            title = title[:-len(marks)].rstrip()
        return Heading(len(marks) - 1, title, 1)
    under = lines[k + 1].rstrip() if k + 1 < len(lines) else ""
    # Asciidoctor: the underline is as long as the title, give or take one character.
    if _UNDERLINE.match(under) and abs(len(under) - len(line)) <= 1 and _UNDERLINED.match(line):
        return Heading(_UNDERLINE_LEVELS.index(under[0]), line, 2)
    return None


def outside_verbatim(lines: list[str]) -> Iterator[str]:
    """The lines outside code, passthrough and comment blocks: a ``= Title`` in a listing is code.

    Their opening delimiters are kept: a block's title and id are over them.
    """
    closing: str | None = None
    underline = -1  # a two-line title's underline (``----``) opens no listing
    for k, line in enumerate(lines):
        inside = closing is not None
        heading = section_title(lines, k) if not inside and k != underline else None
        if heading is not None and heading.lines == 2:
            underline = k + 1
        elif k != underline:
            closing = verbatim_closing(line, closing)
        if not inside:
            yield line


def has_parts(lines: list[str]) -> bool:
    """Whether a page is a book of parts: level-0 titles (``= Part``) after its own."""
    return sum(1 for line in outside_verbatim(lines)
               if line.startswith("= ") and _TITLE.match(line.rstrip())) > 1


def after_header(lines: list[str], k: int) -> int:
    """Where a document's header ends: past its author and revision lines (two at most, before a blank)."""
    for _ in range(2):
        if k < len(lines) and lines[k].strip() and not entry(lines[k]) and not any(
                pattern.match(lines[k]) for pattern in (_COMMENT, _BLOCK_ATTRIBUTES)):
            k += 1
    return k


def section_titles(lines: list[str], attributes: dict[str, str]) -> dict[str, str]:
    """Each section's title by its id, and each titled block's by the id it is given.

    A section's id is the one an anchor over it gives, and the one Asciidoctor makes from its title
    (``idprefix``, ``idseparator``).
    """
    prefix = attributes.get("idprefix", "_")
    separator = attributes.get("idseparator", "_")
    titles: dict[str, str] = {}
    anchor = block_title = ""
    shown = list(outside_verbatim(lines))
    for k, line in enumerate(shown):
        if (given := _ANCHOR.match(line) or _GIVEN_ID.match(line)) is not None:
            anchor = given["id"]
        elif (titled := _BLOCK_TITLE.match(line)) is not None:
            block_title = titled["title"]
        elif (heading := section_title(shown, k)) is not None:
            title = inline(heading.title, attributes, {})
            words = re.sub(r"[^\w\s.-]", "", title.lower())
            made = prefix + re.sub(r"[\s_.-]+", separator, words).strip(separator)
            titles.setdefault(made, title)
            titles.setdefault(anchor or made, title)
            anchor = block_title = ""
        elif line.strip():
            if anchor and block_title:
                titles.setdefault(anchor, inline(block_title, attributes, {}))
            anchor = block_title = ""
    return titles
