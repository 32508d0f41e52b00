"""AsciiDoc's preprocessor: ``include::`` and ``ifdef``/``ifndef``/``ifeval``, read as the site reads them.

An Antora page includes its code from examples (``include::example$app.rb[tag=config]``) and its
shared paragraphs from partials; read without them, a page said "run the following:" over nothing.
Content for another place (``ifdef::env-github[]``) is left out, as the site leaves it out.
Nothing outside the docs folder is read (``read`` refuses it), nothing from the network, and an
include goes ``_MAX_DEPTH`` deep at most, so a page including itself ends.
"""

from __future__ import annotations

import logging
import re
import textwrap
from collections.abc import Callable
from pathlib import Path

from core.errors import IngestSourceError
from core.ingest.asciidoc.antora import Component, resource_path
from core.ingest.asciidoc.attributes import entry, substituted
from core.ingest.text import decode_text

__all__ = ["SUFFIXES", "Reader"]

log = logging.getLogger(__name__)

#: AsciiDoc's file suffixes: pages of their own.
SUFFIXES = frozenset({".adoc", ".asciidoc", ".asc"})
#: What an include reads as AsciiDoc (Asciidoctor's list: a ``.txt`` too); other files are code.
_INCLUDED_AS_ASCIIDOC = SUFFIXES | {".ad", ".txt"}
_INCLUDE = re.compile(r"^(?P<escape>\\?)include::(?P<target>[^\[\s][^\[]*)\[(?P<attributes>[^\]]*)\][ \t]*$")
_CONDITION = re.compile(
    r"^(?P<escape>\\?)(?P<kind>ifn?def|ifeval|endif)::(?P<names>[^\[]*)\[(?P<text>.*)\][ \t]*$")
#: A tag's start or end in an included file's comment: ``# tag::config[]``, ``// end::config[]``.
_TAG = re.compile(r"\b(?P<kind>tag|end)::(?P<name>[\w*-]+)\[\]")
#: An ``ifeval`` comparison: two values and an operator.
_COMPARISON = re.compile(r"^\s*(?P<left>.+?)\s*(?P<op>==|!=|<=|>=|<|>)\s*(?P<right>.+?)\s*$")
#: A line opening a block whose lines are never read as markup: a comment, code, a passthrough.
_VERBATIM_BLOCK = re.compile(r"^(?:-{4,}|\.{4,}|\+{4,}|/{4,}|`{3}.*)$")
#: A section title, whose level an include's or an entry's ``leveloffset`` moves.
_TITLE = re.compile(r"^(=+)(?=[ \t]+\S)")
#: Includes inside includes are read this deep; what all of them add stops at ``_MAX_CHARS``: a page
#: including a big file over and over is no bigger than the biggest file ragbot reads.
_MAX_DEPTH = 8
_MAX_CHARS = 16 * 1024 * 1024
#: An ``ifeval`` longer than this is not read (it holds): a comparison is short.
_MAX_EXPRESSION = 400
#: An include re-indents its lines by this many spaces at most (``indent=``).
_MAX_INDENT = 16


def verbatim_closing(line: str, closing: str | None) -> str | None:
    """The delimiter the lines after ``line`` are closed by: a comment's, code's or passthrough's, or None.

    Args:
        line: the line read.
        closing: what closed the lines before it (None: they were not in such a block).
    """
    stripped = line.rstrip()
    if closing is not None:
        return None if stripped == closing else closing
    if _VERBATIM_BLOCK.match(stripped):
        return "```" if stripped.startswith("```") else stripped
    return None


class Reader:
    """Reads one page with what it includes, under the conditions it sets."""

    def __init__(self, *, read: Callable[[Path], bytes], component: Component | None,
                 attributes: dict[str, str], follow: bool = True) -> None:
        """A reader of pages in ``component`` (None: outside Antora), with ``attributes`` set.

        ``read`` reads a file inside the docs only: the includes are read with it.
        """
        self._read = read
        self._component = component
        #: The attributes set so far, page entries included: what conditions and targets read.
        self.attributes = attributes
        #: Whether included files are read (else only named in ``includes``).
        self._follow = follow
        #: The files the page itself includes whole (no ``tag``, ``lines``), where its conditions hold.
        self.includes: list[Path] = []
        self._chars = 0
        self._offset = 0  # the ``leveloffset`` in force

    def lines(self, text: str, *, path: Path, depth: int = 0) -> list[str]:
        """The lines of ``text`` (the file at ``path``), includes read and conditions applied."""
        out: list[str] = []
        active: list[bool] = []  # one per open condition: whether its lines are read
        closing: str | None = None  # the delimiter closing a comment or verbatim block
        for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
            if closing is not None and closing.startswith("////") and line.rstrip() != closing:
                out.append(line)  # a comment's lines are never directives
                continue
            condition = _CONDITION.match(line) if "::" in line else None
            if condition is not None and not condition["escape"]:
                self._condition(condition, active, out)
                continue
            if not all(active):
                continue
            closing = verbatim_closing(line, closing)
            include = _INCLUDE.match(line) if line.startswith(("include::", "\\include::")) else None
            if include is not None:
                out.extend(self._included(include, path=path, depth=depth))
                continue
            if closing is None and (setting := entry(line)) is not None:
                self._set(*setting)
            elif closing is None and self._offset and (title := _TITLE.match(line)) is not None:
                line = _moved(line, title, self._offset)
            out.append(line[1:] if condition is not None else line)  # ``\ifdef::x[]`` shows as written
        return out

    def _set(self, name: str, value: str | None) -> None:
        """Sets (or unsets) an attribute; ``leveloffset`` moves the titles after it."""
        if name == "leveloffset":
            self._offset = _offset(value or "0", self._offset)
        elif value is None:
            self.attributes.pop(name, None)
        else:
            self.attributes[name] = substituted(value, self.attributes)

    def _condition(self, condition: re.Match[str], active: list[bool], out: list[str]) -> None:
        """Opens or closes a condition; its one-line form shows its text when it holds."""
        kind = condition["kind"]
        if kind == "endif":
            if active:
                active.pop()
            return
        holds = self._holds(kind, condition["names"], condition["text"]) if all(active) else False
        if kind != "ifeval" and condition["text"]:
            if all(active) and holds:  # the one-line form: ``ifdef::env-site[Shown on the site.]``
                out.append(condition["text"])
            return
        active.append(holds)

    def _holds(self, kind: str, names: str, text: str) -> bool:
        """Whether a condition holds: ``a,b`` any of them set, ``a+b`` all of them."""
        if kind == "ifeval":
            return _evaluated(substituted(text, self.attributes))
        wanted = [n.strip().lower() for n in re.split(r"[,+]", names) if n.strip()]
        found = [n in self.attributes for n in wanted]
        defined = all(found) if "+" in names else any(found)
        return defined if kind == "ifdef" else not defined

    def _included(self, include: re.Match[str], *, path: Path, depth: int) -> list[str]:
        """The lines an include stands for: the file's, picked, re-indented, their titles moved."""
        if include["escape"]:
            return [include[0][1:]]
        target = substituted(include["target"].strip(), self.attributes)
        found = resource_path(target, including=path, component=self._component)
        options = _options(include["attributes"])
        if found is not None and not self._follow:
            if not {"tag", "tags", "lines"} & options.keys():
                self.includes.append(found)
            return []
        if found is None or depth >= _MAX_DEPTH or self._chars > _MAX_CHARS:
            return []
        try:
            text = decode_text(self._read(found), name=str(found))
        except (IngestSourceError, OSError) as exc:
            # The site shows a warning, not text: so does the run (once a page, as it is read).
            if self._follow:
                log.warning("%s: %s not read: %s", path.name, include[0].strip(), exc)
            return []
        lines = _selected(text.replace("\r\n", "\n").split("\n"), options)
        self._chars += sum(len(line) + 1 for line in lines)
        if self._chars > _MAX_CHARS or found.suffix.lower() not in _INCLUDED_AS_ASCIIDOC:
            return lines if self._chars <= _MAX_CHARS else []
        before, self._offset = self._offset, _offset(options.get("leveloffset", ""), self._offset)
        try:
            return self.lines("\n".join(lines), path=found, depth=depth + 1)
        finally:
            self._offset = before


def _offset(written: str, current: int) -> int:
    """A ``leveloffset``: ``+1`` and ``-1`` move the one in force, ``2`` replaces it."""
    if not re.fullmatch(r"[+-]?\d{1,2}", written.strip()):
        return current
    written = written.strip()
    return current + int(written) if written[0] in "+-" else int(written)


def _moved(line: str, title: re.Match[str], offset: int) -> str:
    """A section title moved ``offset`` levels (``+1``: ``==`` becomes ``===``)."""
    level = min(max(len(title[1]) - 1 + offset, 0), 5)
    return "=" * (level + 1) + line[title.end():]


def _options(written: str) -> dict[str, str]:
    """An include's attributes: ``tag=x``, ``tags="a;b"``, ``lines=1..5``, ``leveloffset=+1``, ``indent``."""
    found = re.findall(r"""(\w+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^,]*))""", written)
    return {name.lower(): (a or b or c).strip() for name, a, b, c in found}


def _selected(lines: list[str], options: dict[str, str]) -> list[str]:
    """The lines an include's ``lines``, ``tag`` or ``tags`` pick, re-indented by its ``indent``."""
    if options.get("lines"):
        lines = _line_ranges(lines, options["lines"])
    else:
        lines = _tagged(lines, options.get("tags") or options.get("tag") or "")
    if re.fullmatch(r"\d{1,4}", options.get("indent", "")):
        indent = " " * min(int(options["indent"]), _MAX_INDENT)
        lines = textwrap.indent(textwrap.dedent("\n".join(lines)), indent).split("\n")
    return lines


def _line_ranges(lines: list[str], ranges: str) -> list[str]:
    """The lines ``lines=1..5;10;15..-1`` picks, in that order."""
    picked: list[str] = []
    for written in re.split(r"[;,]", ranges):
        first, _, last = written.strip().partition("..")
        if not re.fullmatch(r"\d{1,9}", first) or len(last) > 9:
            continue
        # ``15..-1`` and ``15..`` run to the end
        end = int(last) if last.isdigit() else len(lines) if ".." in written else int(first)
        picked.extend(lines[int(first) - 1:end])
    return picked


def _tagged(lines: list[str], tags: str) -> list[str]:
    """The lines inside the tags named (``x;y``, ``*``, ``**``, ``!z``), tag lines themselves left out."""
    named = [t for t in re.split(r"[;,]", tags) if t]
    wanted = {t for t in named if not t.startswith("!")}
    unwanted = {t[1:] for t in named if t.startswith("!")}
    inside: list[str] = []
    picked: list[str] = []
    for line in lines:
        if (tag := _TAG.search(line)) is not None:
            if tag["kind"] == "tag":
                inside.append(tag["name"])
            elif tag["name"] in inside:
                inside.remove(tag["name"])
            continue
        if any(t in unwanted for t in inside):
            continue
        if not wanted or "**" in wanted or ("*" in wanted and inside) or wanted & set(inside):
            picked.append(line)
    return picked


def _evaluated(expression: str) -> bool:
    """An ``ifeval`` comparison of numbers or quoted strings; one it cannot read holds."""
    match = _COMPARISON.match(expression) if len(expression) <= _MAX_EXPRESSION else None
    if match is None:
        return True
    left, right = _value(match["left"]), _value(match["right"])
    if type(left) is not type(right):
        left, right = str(left), str(right)
    op = match["op"]
    try:
        return {"==": left == right, "!=": left != right, "<": left < right, "<=": left <= right,  # type: ignore[operator]
                ">": left > right, ">=": left >= right}[op]  # type: ignore[operator]
    except TypeError:
        return True


def _value(written: str) -> str | float:
    """An ``ifeval`` operand: a quoted string, a number, or the word as written."""
    written = written.strip()
    if len(written) >= 2 and written[0] == written[-1] and written[0] in "\"'":
        return written[1:-1]
    try:
        return float(written)
    except ValueError:
        return written
