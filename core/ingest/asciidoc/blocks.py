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
import textwrap
from collections.abc import Callable
from typing import NamedTuple

from core.ingest.asciidoc.attributes import entry, substituted
from core.ingest.asciidoc.inline import inline
from core.ingest.asciidoc.preprocess import verbatim_closing
from core.ingest.asciidoc.sections import after_header, has_parts, section_title, section_titles
from core.ingest.asciidoc.tables import markdown_table
from core.ingest.document import fenced
from core.ingest.markdown import titled_fence

__all__ = ["to_markdown"]

_BLOCK_ATTRIBUTES = re.compile(r"^\[(?P<a>(?:[^\[\]]|\[[^\]]*\])*)\][ \t]*$")
_ANCHOR = re.compile(r"^\[\[(?P<id>[\w:.-]+)(?:,[^\]]*)?\]\][ \t]*$")
_BLOCK_TITLE = re.compile(r"^\.(?![.\s])(?P<title>.+)$")
_DELIMITER = re.compile(r"^(?:-{4,}|\.{4,}|={4,}|\*{4,}|_{4,}|\+{4,}|/{4,}|--|[|,:!]={3,}|`{3}.*)[ \t]*$")
_COMMENT = re.compile(r"^//(?!/)|^//$")
_ADMONITION = re.compile(r"^(?P<kind>NOTE|TIP|IMPORTANT|WARNING|CAUTION):[ \t]+(?P<text>.*)$")
_ADMONITIONS = frozenset({"NOTE", "TIP", "IMPORTANT", "WARNING", "CAUTION"})
_BULLET = re.compile(r"^[ \t]*(?P<marks>\*{1,5}|-)[ \t]+(?P<text>\S.*)$")
_NUMBERED = re.compile(r"^[ \t]*(?P<marks>\.{1,5})[ \t]+(?P<text>\S.*)$")
_EXPLICIT_NUMBER = re.compile(r"^[ \t]*(?P<n>\d{1,9}|[a-zA-Z])\.[ \t]+(?P<text>\S.*)$")
_CALLOUT_ITEM = re.compile(r"^<(?:\d+|\.)>[ \t]+(?P<text>.*)$")
_TERM = re.compile(r"^(?P<term>[^\s/].*?)(?P<marks>:{2,4}|;;)(?:[ \t]+(?P<text>.*))?$")
_BLOCK_MACRO = re.compile(r"^[a-z][\w-]*::[^\s\[]*\[.*\][ \t]*$")
_BREAK = re.compile(r"^(?:'{3,}|<{3}|-{3}|\*{3}|_{3})[ \t]*$")
#: A callout marker ending a line of code: ``<1>``, ``// <1>``, ``# <2>``, ``<!--3-->``, ``;; <1>``.
_MARKER = r"(?:<(?:\d+|\.)>|<!--\d+-->)"
_CALLOUT = re.compile(rf"[ \t]*(?:(?:(?<=\s)|^)(?://|#|;;|--)[ \t]*)?{_MARKER}(?:[ \t]*{_MARKER})*$")
_ENDS_WITH_MARKER = re.compile(rf"{_MARKER}$")
#: Callouts are looked for in a line's last characters only: a marker and its comment are short.
_CALLOUT_WINDOW = 200
_CODE_STYLES = frozenset({"source", "listing", "literal"})
#: Blocks the site does not show: a comment, raw HTML passed through.
_HIDDEN_STYLES = frozenset({"comment", "pass"})
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
    converter = _Converter(attributes=dict(attributes), titles=section_titles(lines, attributes),
                           page_title=page_title, parts=has_parts(lines))
    return "\n".join(converter.convert(lines))


class _Converter:
    """Reads a page's blocks in order, with the attributes and list numbers they set as it goes."""

    def __init__(self, *, attributes: dict[str, str], titles: dict[str, str],
                 page_title: Callable[[str], str | None], parts: bool = False, depth: int = 0) -> None:
        """A converter for a page, or (``depth``) for a block inside one."""
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
        self.delimiters = _delimiters(lines)
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
                if not self.attached:
                    self.numbers = {}  # a titled list is a list of its own (a titled block in a step is not)
                continue
            if (tab := _TERM.match(line)) is not None and not tab["text"] and _code_attached(lines, k):
                title = self._inline(tab["term"].strip())  # a tab (``Java::``, ``+``) titles its code
                continue
            k = self._block(lines, k - 1, block, title, out, header=header)
            header = self.attached = False
            block, title = _Attributes("", [], {}, set()), ""
        return out

    def _set(self, setting: tuple[str, str | None], lines: list[str], k: int) -> int:
        """Sets an attribute from its entry (its value may go on over lines); returns the next line."""
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
        """Prose read as Markdown, with what this page has set and titled."""
        return inline(text, self.attributes, self.titles, self.page_title)

    def _inner(self) -> _Converter:
        """A converter for a block's inside: the same attributes, one level deeper."""
        return _Converter(attributes=self.attributes, titles=self.titles, page_title=self.page_title,
                          depth=self.depth + 1)

    def _block(self, lines: list[str], k: int, block: _Attributes, title: str, out: list[str], *,
               header: bool) -> int:
        """Reads the block starting at ``lines[k]`` into ``out``; returns where the next starts."""
        line = lines[k]
        if (heading := section_title(lines, k)) is not None:
            level = heading.level + 1
            level = min(level + 1, 6) if self.parts and not (level == 1 and header) else level
            out.extend(["", f"{'#' * level} {self._inline(heading.title)}", ""])
            return after_header(lines, k + 1) if level == 1 and header else k + heading.lines
        if _DELIMITER.match(line):
            return self._delimited(lines, k, block, title, out)
        if _BLOCK_MACRO.match(line) and not line.startswith("include::"):  # an escaped include is text
            return k + 1  # an image, a video, a table of contents: nothing to read
        if block.style in _CODE_STYLES or (line[:1] in " \t" and not _is_list_item(line)):
            # To a blank line (or a list's ``+``): its ``#`` and ``//`` lines are code.
            end = next((j for j in range(k, len(lines)) if not lines[j].strip() or lines[j].rstrip() == "+"),
                       len(lines))
            language = block.positional[1] if block.style == "source" and len(block.positional) > 1 else ""
            code = textwrap.dedent("\n".join(lines[k:end])).split("\n")
            out.extend(_fenced(self._code_lines(code, block), language, title))
            return end
        paragraph = _paragraph(lines, k)
        if block.style in _HIDDEN_STYLES:
            return paragraph
        if title:
            out.extend([f"{title.rstrip(':')}:", ""])
        kind = block.style.upper() if block.style.upper() in _ADMONITIONS else ""
        start = block.named.get("start", "")
        if re.fullmatch(r"\d{1,6}", start):
            self.numbers = {1: int(start) - 1}  # ``[start=4]``: the list's first number
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
        if not self.attached:
            self.numbers = {}  # a block between two lists parts them
        if block.style in _HIDDEN_STYLES:
            return end + 1
        if opening.startswith("```") or (char in "-." and opening != "--") or (
                opening == "--" and block.style in _CODE_STYLES):
            out.extend(self._code(inside, opening, block, title))
        elif opening[1:4] == "===" and char in "|,:!":
            out.extend(self._table(inside, char, block, title))
        elif char in "=*_" or opening == "--":
            out.extend(self._compound(inside, block, title))
        return end + 1  # a passthrough or comment block (``++++``, ``////``) shows nothing

    def _code(self, inside: list[str], opening: str, block: _Attributes, title: str) -> list[str]:
        """A listing as fenced code, in the language its style or fence names."""
        language = opening[3:].strip() if opening.startswith("```") else ""
        if block.style == "source" or not block.style:
            language = language or (block.positional[1] if len(block.positional) > 1 else "")
        elif block.style not in _CODE_STYLES:
            language = block.style  # ``[plantuml]``, ``[mermaid]``: the diagram's source
        return _fenced(self._code_lines(inside, block), language, title)

    def _code_lines(self, code: list[str], block: _Attributes) -> list[str]:
        """Lines of code without their callout markers, attributes replaced when ``subs`` says so."""
        code = [_without_callout(line) for line in code]
        if "attributes" in block.named.get("subs", ""):
            code = [substituted(line, self.attributes) for line in code]
        if re.fullmatch(r"\d{1,2}", indent := block.named.get("indent", "")):  # ``[source,java,indent=0]``
            code = textwrap.indent(textwrap.dedent("\n".join(code)), " " * int(indent)).split("\n")
        return code

    def _table(self, inside: list[str], separator: str, block: _Attributes, title: str) -> list[str]:
        """A table as a Markdown table, each cell on one line."""
        if block.named.get("format") == "csv":
            separator = ","
        separator = block.named.get("separator", separator)[:1] or separator
        options = " ".join(block.options | set(block.named.get("options", "").replace(",", " ").split()))

        def cell(text: str, style: str) -> str:
            """A cell's text (an ``a|`` cell's blocks) on one line."""
            lines = text.strip().split("\n")
            if style == "a" and _holds_blocks(lines):
                return _flat(self._inner().convert(lines)).replace("|", "\\|")
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
    """Whether an ``a|`` cell's lines hold blocks: code, a list, a note, a block's attributes.

    A cell of one bracketed line (``["localhost:5701"]``) is text. (Other cells are text: Asciidoctor
    reads no blocks in them, ``- if title?`` is a line of Slim.)
    """
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
    """A paragraph's lines joined into one per list item (or one for the paragraph).

    A link, a cross reference or bold text may run over two lines. `` +`` ending a line breaks it.
    """
    items: list[list[str]] = []
    for line in lines:
        if items and not _is_list_item(line) and not _TERM.match(line) and not _ADMONITION.match(line):
            items[-1][-1] = items[-1][-1].rstrip().removesuffix(" +")
            items[-1].append(line.strip())
        else:
            items.append([line])
    return [" ".join(parts) for parts in items]


def _delimiters(lines: list[str]) -> dict[str, list[int]]:
    """Where each delimiter is, so a block finds its end at once (a page of unclosed ones stays linear).

    Lines inside code, a passthrough or a comment are no delimiters: a listing showing ``====``
    does not close the example around it. Nor is a two-line title's underline.
    """
    found: dict[str, list[int]] = {}
    closing: str | None = None
    underline = -1
    for j, line in enumerate(lines):
        if closing is None and j != underline and (heading := section_title(lines, j)) is not None:
            underline = j + heading.lines - 1
            continue
        if j == underline or (closing is not None and line.rstrip() != closing) or not _DELIMITER.match(line):
            continue
        found.setdefault("```" if line.startswith("```") else line.rstrip(), []).append(j)
        closing = verbatim_closing(line, closing)
    return found


def _uncommented(lines: list[str]) -> list[str]:
    """Lines without comments (``// a line``, ``////`` blocks), but a comment in code is code."""
    kept: list[str] = []
    closing: str | None = None
    for line in lines:
        opened, closing = closing, verbatim_closing(line, closing)
        if (opened or closing or "").startswith("////") or (opened is None and _COMMENT.match(line)):
            continue
        kept.append(line)
    return kept


def _without_callout(line: str) -> str:
    """A line of code without the callout markers ending it (``// <1>``)."""
    stripped = line.rstrip()
    if not stripped.endswith(">") or not _ENDS_WITH_MARKER.search(stripped[-_CALLOUT_WINDOW:]):
        return line
    window = stripped[-_CALLOUT_WINDOW:]
    marker = _CALLOUT.search(window)
    return stripped[:len(stripped) - len(window) + marker.start()] if marker else line


_MARKDOWN_ITEM = re.compile(r"^\s*(?:-|\d+\.)\s+(.*\S)")


def _flat(markdown: list[str]) -> str:
    """A table cell's blocks on one line: prose as it is, code in a code span."""
    parts: list[str] = []
    code: list[str] | None = None
    for line in markdown:
        if line.startswith(("```", "~~~~")):
            if code is not None and code:
                parts.append(f"`{' '.join(c.strip() for c in code if c.strip())}`")
            elif code is None and (titled := re.search(r'title="([^"]*)"', line)):
                parts.append(f"{titled[1]}:")  # a tab's name, over its code
            code = [] if code is None else None
        elif code is not None:
            code.append(line)
        elif line.strip():
            item = _MARKDOWN_ITEM.match(line)
            text = item[1] if item else line.strip()
            # A list's items one after another; a tab's name ("**XML**:") leads its code in.
            parts.append(f"{text};" if item and not text.endswith(":") else text)
    return " ".join(parts).removesuffix(";")


def _paragraph(lines: list[str], k: int) -> int:
    """Where the paragraph (or list item's lines) starting at ``lines[k]`` ends."""
    j = k + 1
    while j < len(lines) and lines[j].strip() and lines[j].rstrip() != "+" and not any(
            pattern.match(lines[j]) for pattern in (_DELIMITER, _BLOCK_ATTRIBUTES, _COMMENT)) \
            and section_title(lines, j) is None:
        j += 1
    return j


def _is_list_item(line: str) -> bool:
    """Whether ``line`` starts a list's item: ``*``, ``-``, ``.``, ``1.``, ``<1>``."""
    return any(p.match(line) for p in (_BULLET, _NUMBERED, _EXPLICIT_NUMBER, _CALLOUT_ITEM))


def _is_prose(line: str) -> bool:
    """Whether a line of Markdown is prose, which a note's kind may open."""
    return not line.startswith(("```", "~~~", "|", "#", "- ", "  ")) and not re.match(r"\d+\. ", line)


def _fenced(code: list[str], language: str, title: str) -> list[str]:
    """Code as a fenced block, its title (a block's) shown above it."""
    opening, *rest = fenced("\n".join(code), language).split("\n")
    # A fence's info is not decoded as prose is, and holds no backtick: Markdown reads no fence there.
    shown = title.replace("&lt;", "<").replace("&gt;", ">").replace("`", "")
    return ["", titled_fence(opening, shown or None), *rest, ""]


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


