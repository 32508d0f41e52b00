"""AsciiDoc's blocks -> Markdown: sections, lists, code, admonitions, tables, read line by line.

A page's lines (includes and conditions already read, ``core.ingest.asciidoc.preprocess``) become
Markdown that ``core.ingest.markdown`` reads as it reads any page: ``== Install`` a heading,
``[source,ruby]`` over ``----`` a fenced block with its language and ``.Title`` its title,
``NOTE:`` or ``[TIP]`` over ``====`` a note whose kind opens it ("Note: ..."), ``* item`` and
``. step`` lists, ``term:: text`` a term leading its text, ``|===`` a table. Comments, attribute
entries, anchors, images and passthrough blocks show nothing.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator
from typing import NamedTuple

from core.ingest.asciidoc.attributes import entry, substituted
from core.ingest.asciidoc.inline import inline
from core.ingest.asciidoc.tables import markdown_table

__all__ = ["to_markdown"]

_HEADING = re.compile(r"^(?P<marks>={1,6}|#{1,6})[ \t]+(?P<title>\S.*?)(?:[ \t]+(?P=marks))?[ \t]*$")
_BLOCK_ATTRIBUTES = re.compile(r"^\[(?P<a>(?:[^\[\]]|\[[^\]]*\])*)\][ \t]*$")
_ANCHOR = re.compile(r"^\[\[(?P<id>[\w:.-]+)(?:,[^\]]*)?\]\][ \t]*$")
#: An id given in a block's attribute line: ``[#install]``, ``[source#app,ruby]``, ``[#ex,asciidoc]``.
_GIVEN_ID = re.compile(r"^\[[\w.%-]*#(?P<id>[\w:-]+)[^\]]*\][ \t]*$")
_BLOCK_TITLE = re.compile(r"^\.(?![.\s])(?P<title>.+)$")
_DELIMITER = re.compile(r"^(?:-{4,}|\.{4,}|={4,}|\*{4,}|_{4,}|\+{4,}|/{4,}|--|[|,:!]={3,}|`{3}.*)[ \t]*$")
_VERBATIM = re.compile(r"^(?:-{4,}|\.{4,}|\+{4,}|/{4,}|`{3}.*)$")
_COMMENT = re.compile(r"^//(?!/)|^//$")
_ADMONITION = re.compile(r"^(?P<kind>NOTE|TIP|IMPORTANT|WARNING|CAUTION):[ \t]+(?P<text>.*)$")
_ADMONITIONS = frozenset({"NOTE", "TIP", "IMPORTANT", "WARNING", "CAUTION"})
_BULLET = re.compile(r"^[ \t]*(?P<marks>\*{1,5}|-)[ \t]+(?P<text>\S.*)$")
_NUMBERED = re.compile(r"^[ \t]*(?P<marks>\.{1,5})[ \t]+(?P<text>\S.*)$")
_EXPLICIT_NUMBER = re.compile(r"^[ \t]*(?P<n>\d{1,9}|[a-zA-Z])\.[ \t]+(?P<text>\S.*)$")
_CALLOUT_ITEM = re.compile(r"^<(?:\d+|\.)>[ \t]+(?P<text>.*)$")
_TERM = re.compile(r"^(?P<term>[^\s/].*?)(?P<marks>:{2,4}|;;)(?:[ \t]+(?P<text>.*))?$")
_BLOCK_MACRO = re.compile(r"^[a-z][\w-]*::\S*\[.*\][ \t]*$")
_BREAK = re.compile(r"^(?:'{3,}|<{3}|-{3}|\*{3}|_{3})[ \t]*$")
#: A callout marker ending a line of code: ``<1>``, ``// <1>``, ``# <2>``, ``<!--3-->``, ``;; <1>``.
_MARKER = r"(?:<(?:\d+|\.)>|<!--\d+-->)"
_CALLOUT = re.compile(rf"[ \t]*(?:(?:(?<=\s)|^)(?://|#|;;|--)[ \t]*)?{_MARKER}(?:[ \t]*{_MARKER})*[ \t]*$")
_CODE_STYLES = frozenset({"source", "listing", "literal"})
#: Blocks inside blocks are read this deep.
_MAX_DEPTH = 16


class _Attributes(NamedTuple):
    """A block's attribute line read: its style, id, options and named attributes."""

    style: str
    positional: list[str]
    named: dict[str, str]
    options: set[str]


def to_markdown(lines: list[str], *, attributes: dict[str, str],
                page_title: Callable[[str], str | None] = lambda target: None) -> str:
    """The page's lines as Markdown (see the module's docstring).

    Args:
        lines: the page's, includes read.
        attributes: those set before its first line.
        page_title: the title of a page an ``xref`` names.
    """
    converter = _Converter(attributes=dict(attributes), titles=_section_titles(lines, attributes),
                           page_title=page_title, parts=_has_parts(lines))
    return "\n".join(converter.convert(lines))


class _Converter:
    def __init__(self, *, attributes: dict[str, str], titles: dict[str, str],
                 page_title: Callable[[str], str | None], parts: bool = False, depth: int = 0) -> None:
        self.attributes = attributes
        self.titles = titles
        self.page_title = page_title
        #: A book's parts (``= Part``) are sections of the page: its title stays over them.
        self.parts = parts
        self.numbers: dict[int, int] = {}
        self.attached = False
        self.delimiters: dict[str, list[int]] = {}
        self.depth = depth

    def convert(self, lines: list[str]) -> list[str]:
        """Markdown for ``lines``, a page or a compound block's inside."""
        out: list[str] = []
        # Where each delimiter is, so a block finds its end at once (a page of unclosed ones stays linear).
        self.delimiters = {}
        for j, line in enumerate(lines):
            if _DELIMITER.match(line):
                self.delimiters.setdefault("```" if line.startswith("```") else line.rstrip(), []).append(j)
        block = _Attributes("", [], {}, set())
        title = ""
        k = 0
        header = True  # the document title's author and revision lines show nothing
        while k < len(lines):
            line = lines[k]
            k += 1
            if not line.strip():
                out.append("")
                continue
            if _COMMENT.match(line) and not line.startswith("////"):
                continue
            if (setting := entry(line)) is not None:
                k = self._set(setting, lines, k)
                continue
            if (attributes := _BLOCK_ATTRIBUTES.match(line)) is not None and not _ANCHOR.match(line):
                block = _read_attributes(substituted(attributes["a"], self.attributes))
                continue
            if line.rstrip() == "+":
                self.attached = True  # the next block belongs to the list item above: its numbering goes on
                continue
            if _ANCHOR.match(line) or _BREAK.match(line):
                continue
            if (titled := _BLOCK_TITLE.match(line)) is not None:
                title = self._inline(titled["title"])
                continue
            if (tab := _TERM.match(line)) is not None and not tab["text"] and _code_attached(lines, k):
                title = self._inline(tab["term"].strip())  # a tab (``Java::``, ``+``) titles its code
                continue
            k = self._block(lines, k - 1, block, title, out, header=header)
            header = self.attached = False
            block, title = _Attributes("", [], {}, set()), ""
        return out

    def _set(self, setting: tuple[str, str | None], lines: list[str], k: int) -> int:
        name, value = setting
        while value is not None and lines[k - 1].rstrip().endswith((" \\", " +")) and k < len(lines):
            value = value + " " + lines[k].strip().removesuffix(" \\").removesuffix(" +")  # over lines
            k += 1
        if value is None:
            self.attributes.pop(name, None)
        else:
            self.attributes[name] = substituted(value, self.attributes)
        return k

    def _inline(self, text: str) -> str:
        return inline(text, self.attributes, self.titles, self.page_title)

    def _inner(self) -> _Converter:
        return _Converter(attributes=self.attributes, titles=self.titles, page_title=self.page_title,
                          depth=self.depth + 1)

    def _block(self, lines: list[str], k: int, block: _Attributes, title: str, out: list[str], *,
               header: bool) -> int:
        """Reads the block starting at ``lines[k]`` into ``out``; returns where the next starts."""
        line = lines[k]
        if _DELIMITER.match(line):
            return self._delimited(lines, k, block, title, out)
        if (heading := _HEADING.match(line)) is not None:
            level = len(heading["marks"])
            level = min(level + 1, 6) if self.parts and not (level == 1 and header) else level
            out.extend(["", f"{'#' * level} {self._inline(heading['title'])}", ""])
            return _after_header(lines, k + 1) if level == 1 and header else k + 1
        if _BLOCK_MACRO.match(line):
            return k + 1  # an image, a video, a table of contents: nothing to read
        paragraph = _paragraph(lines, k)
        if block.style in _CODE_STYLES or (line[:1] in " \t" and not _is_list_item(line)):
            language = block.positional[1] if block.style == "source" and len(block.positional) > 1 else ""
            out.extend(_fenced(self._code_lines(_unindented(lines[k:paragraph]), block), language, title))
            return paragraph
        if title:
            out.extend([f"{title.rstrip(':')}:", ""])
        kind = block.style.upper() if block.style.upper() in _ADMONITIONS else ""
        for n, item in enumerate(_items(lines[k:paragraph])):
            out.append(self._line(item, kind=kind if n == 0 else ""))
        return paragraph

    def _line(self, line: str, *, kind: str = "") -> str:
        """One line of prose or a list's item, as Markdown."""
        if (admonition := _ADMONITION.match(line)) is not None:
            kind, line = admonition["kind"], admonition["text"]
        lead = f"{kind.capitalize()}: " if kind else ""
        if (bullet := _BULLET.match(line)) is not None:
            depth = 1 if bullet["marks"] == "-" else len(bullet["marks"])
            return f"{'  ' * (depth - 1)}- {lead}{self._inline(bullet['text'])}"
        if (numbered := _NUMBERED.match(line)) is not None:
            depth = len(numbered["marks"])
            self.numbers = {d: n for d, n in self.numbers.items() if d <= depth}
            self.numbers[depth] = self.numbers.get(depth, 0) + 1
            return f"{'   ' * (depth - 1)}{self.numbers[depth]}. {lead}{self._inline(numbered['text'])}"
        if (callout := _CALLOUT_ITEM.match(line)) is not None:
            return f"- {self._inline(callout['text'])}"
        if (term := _TERM.match(line)) is not None and not _BLOCK_MACRO.match(line):
            depth = len(term["marks"]) - 1 if term["marks"] != ";;" else 3
            text = f" {self._inline(term['text'])}" if term["text"] else ""
            return f"{'  ' * (depth - 1)}- **{self._inline(term['term'].strip())}**:{text}"
        if not self.attached and not _EXPLICIT_NUMBER.match(line):
            self.numbers = {}  # a paragraph of its own ends the numbered list
        return lead + self._inline(line.strip())

    def _delimited(self, lines: list[str], k: int, block: _Attributes, title: str, out: list[str]) -> int:
        """Reads a delimited block (``----``, ``====``, ``|===`` ...) into ``out``."""
        opening = lines[k].rstrip()
        closing = "```" if opening.startswith("```") else opening
        after = bisect.bisect_right(self.delimiters.get(closing, []), k)
        end = self.delimiters[closing][after] if after < len(self.delimiters.get(closing, [])) else len(lines)
        inside = lines[k + 1:end]
        char = opening[0]
        if opening.startswith("```") or (char in "-." and opening != "--") or (
                opening == "--" and block.style in _CODE_STYLES):
            out.extend(self._code(inside, opening, block, title))
        elif opening[1:4] == "===" and char in "|,:!":
            out.extend(self._table(inside, char, block, title))
        elif char in "=*_" or opening == "--":
            out.extend(self._compound(inside, block, title))
        return end + 1  # a passthrough or comment block (``++++``, ``////``) shows nothing

    def _code(self, inside: list[str], opening: str, block: _Attributes, title: str) -> list[str]:
        language = opening[3:].strip() if opening.startswith("```") else ""
        if block.style == "source" or not block.style:
            language = language or (block.positional[1] if len(block.positional) > 1 else "")
        elif block.style not in _CODE_STYLES:
            language = block.style  # ``[plantuml]``, ``[mermaid]``: the diagram's source
        return _fenced(self._code_lines(inside, block), language, title)

    def _code_lines(self, code: list[str], block: _Attributes) -> list[str]:
        """Lines of code without their callout markers, attributes replaced when ``subs`` says so."""
        code = [_CALLOUT.sub("", line) for line in code]
        if "attributes" in block.named.get("subs", ""):
            code = [substituted(line, self.attributes) for line in code]
        return code

    def _table(self, inside: list[str], separator: str, block: _Attributes, title: str) -> list[str]:
        if block.named.get("format") == "csv":
            separator = ","
        separator = block.named.get("separator", separator)[:1] or separator
        options = " ".join(block.options | set(block.named.get("options", "").replace(",", " ").split()))

        def cell(text: str) -> str:
            lines = text.split("\n")
            if _holds_blocks(lines):
                return _flat(self._inner().convert(lines)).replace("|", "\\|")  # an ``a|`` cell's blocks
            # A line break (`` +``) in a cell parts what it lists: "Windows 10; Windows Server 2019".
            words = " ".join(re.sub(r" \+$", ";", line.strip()) for line in lines if line.strip())
            return self._inline(words).replace("|", "\\|")

        table = markdown_table(_uncommented(inside), options=options, cols=block.named.get("cols", ""),
                               separator=separator, cell=cell)
        return ["", *([f"{title.rstrip(':')}:", ""] if title else []), *table, ""]

    def _compound(self, inside: list[str], block: _Attributes, title: str) -> list[str]:
        """An example, sidebar, quote or open block: its blocks; a note's kind opens its first line."""
        if self.depth >= _MAX_DEPTH:
            return ["", *inside, ""]  # blocks in blocks this deep: their lines as they are
        converted = self._inner().convert(inside)
        kind = block.style.upper()
        if kind not in _ADMONITIONS:
            return ["", *([f"{title.rstrip(':')}:", ""] if title else []), *converted, ""]
        label = f"{kind.capitalize()}: {title}" if title else f"{kind.capitalize()}:"
        first = next((j for j, line in enumerate(converted) if line.strip()), None)
        if title or first is None or not _is_prose(converted[first]):
            return ["", label, "", *converted, ""]
        converted[first] = f"{label} {converted[first].strip()}"
        return ["", *converted, ""]


def _holds_blocks(lines: list[str]) -> bool:
    """Whether a table cell's lines hold blocks (``a|`` cells): code, a list, a note, attributes over a
    block. A cell of one bracketed line (``["localhost:5701"]``) is text."""
    written = [line for line in lines if line.strip()]
    return any(_DELIMITER.match(line) or _is_list_item(line) or _ADMONITION.match(line)
               or (_BLOCK_ATTRIBUTES.match(line) and k + 1 < len(written))
               for k, line in enumerate(written))


def _code_attached(lines: list[str], k: int) -> bool:
    """Whether ``lines[k]`` attaches (``+``) a code block to the term above it: a tab's code."""
    if k >= len(lines) or lines[k].rstrip() != "+":
        return False
    j = k + 1
    while j < len(lines) and (_BLOCK_ATTRIBUTES.match(lines[j]) or _BLOCK_TITLE.match(lines[j])):
        j += 1
    return j < len(lines) and re.match(r"^(?:-{4,}|\.{4,}|`{3})", lines[j]) is not None


def _items(lines: list[str]) -> list[str]:
    """A paragraph's lines joined into one per list item (or one for the paragraph): a link, a cross
    reference or bold text may run over two lines."""
    items: list[str] = []
    for line in lines:
        if items and not _is_list_item(line) and not _TERM.match(line) and not _ADMONITION.match(line):
            items[-1] = f"{items[-1].rstrip().removesuffix(' +')} {line.strip()}"  # `` +``: a line break
        else:
            items.append(line)
    return items


def _has_parts(lines: list[str]) -> bool:
    """Whether a page is a book of parts: level-0 titles (``= Part``) after its own."""
    return sum(1 for line in _outside_verbatim(lines) if line.startswith("= ") and _HEADING.match(line)) > 1


def _outside_verbatim(lines: list[str]) -> Iterator[str]:
    """The lines outside code, passthrough and comment blocks (their opening delimiters kept): a
    ``= Title`` in a listing is code."""
    closing = ""
    for line in lines:
        stripped = line.rstrip()
        if closing:
            closing = "" if stripped == closing else closing
        else:
            if _VERBATIM.match(stripped):
                closing = "```" if stripped.startswith("```") else stripped
            yield line  # an opening delimiter too: a block's title and id are over it


def _uncommented(lines: list[str]) -> list[str]:
    """Lines without comments: ``// a line`` and ``////`` blocks."""
    kept: list[str] = []
    inside = False
    for line in lines:
        if line.startswith("////") and not line.strip("/ \t"):
            inside = not inside
        elif not inside and not _COMMENT.match(line):
            kept.append(line)
    return kept


_MARKDOWN_ITEM = re.compile(r"^\s*(?:-|\d+\.)\s+(.*\S)")


def _flat(markdown: list[str]) -> str:
    """A table cell's blocks on one line: prose as it is, code in a code span."""
    parts: list[str] = []
    code: list[str] | None = None
    for line in markdown:
        if line.startswith(("```", "~~~~")):
            if code is not None and code:
                parts.append(f"`{' '.join(c.strip() for c in code if c.strip())}`")
            code = [] if code is None else None
        elif code is not None:
            code.append(line)
        elif line.strip():
            item = _MARKDOWN_ITEM.match(line)
            parts.append(f"{item[1]};" if item else line.strip())  # a list's items, one after another
    return " ".join(parts).removesuffix(";")


def _paragraph(lines: list[str], k: int) -> int:
    """Where the paragraph (or list item's lines) starting at ``lines[k]`` ends."""
    j = k + 1
    while j < len(lines) and lines[j].strip() and lines[j].rstrip() != "+" and not any(
            pattern.match(lines[j]) for pattern in (_DELIMITER, _BLOCK_ATTRIBUTES, _HEADING, _COMMENT)):
        j += 1
    return j


def _after_header(lines: list[str], k: int) -> int:
    """Where a document's header ends: past its author and revision lines (two at most, before a blank)."""
    for _ in range(2):
        if k < len(lines) and lines[k].strip() and not entry(lines[k]) and not _COMMENT.match(lines[k]) \
                and not _BLOCK_ATTRIBUTES.match(lines[k]):
            k += 1
    return k


def _is_list_item(line: str) -> bool:
    return any(p.match(line) for p in (_BULLET, _NUMBERED, _EXPLICIT_NUMBER, _CALLOUT_ITEM))


def _is_prose(line: str) -> bool:
    return not line.startswith(("```", "~~~", "|", "#", "- ", "  ")) and not re.match(r"\d+\. ", line)


def _unindented(lines: list[str]) -> list[str]:
    indent = min((len(line) - len(line.lstrip()) for line in lines if line.strip()), default=0)
    return [line[indent:] for line in lines]


def _fenced(code: list[str], language: str, title: str) -> list[str]:
    fence = "~~~~" if any(line.lstrip().startswith("```") for line in code) else "```"
    # A fence's info is not decoded as prose is, and may hold no backtick (```` ``` ```` would not open code).
    title = title.replace("&lt;", "<").replace("&gt;", ">").replace("`", "")
    info = language + (f' title="{title}"' if title and '"' not in title else "")
    return ["", f"{fence}{info}", *code, fence, ""]


def _read_attributes(written: str) -> _Attributes:
    """A block attribute line: ``source,ruby``, ``#id.role%option``, ``cols="1,2",options=header``."""
    parts = re.findall(r'''(?:[^,"']|"[^"]*"|'[^']*')+|(?<=,)(?=,|$)|^(?=,)''', written)
    positional: list[str] = []
    named: dict[str, str] = {}
    for part in (p.strip() for p in parts):
        key, equals, value = part.partition("=")
        if equals and re.fullmatch(r"[\w-]+", key.strip()):
            named[key.strip().lower()] = value.strip().strip("\"'")
        else:
            positional.append(part.strip("\"'"))
    first = positional[0] if positional else ""
    style = re.split(r"[#.%]", first, maxsplit=1)[0]
    options = set(re.findall(r"%([\w-]+)", first))
    style = style.upper() if style.upper() in _ADMONITIONS else style.lower()
    return _Attributes(style, positional, named, options)


def _section_titles(lines: list[str], attributes: dict[str, str]) -> dict[str, str]:
    """Each section's title by its id (the one an anchor over it gives, and the one Asciidoctor
    makes), and each titled block's by the id it is given."""
    prefix = attributes.get("idprefix", "_")
    separator = attributes.get("idseparator", "_")
    titles: dict[str, str] = {}
    anchor = block_title = ""
    for line in _outside_verbatim(lines):
        if (given := _ANCHOR.match(line) or _GIVEN_ID.match(line)) is not None:
            anchor = given["id"]
        elif (titled := _BLOCK_TITLE.match(line)) is not None:
            block_title = titled["title"]
        elif (heading := _HEADING.match(line)) is not None:
            title = inline(heading["title"], attributes, {})
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
