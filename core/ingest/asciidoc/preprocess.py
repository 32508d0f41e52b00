"""AsciiDoc's preprocessor: ``include::`` and ``ifdef``/``ifndef``/``ifeval``, read as the site reads them.

An Antora page includes its code from examples (``include::example$app.rb[tag=config]``) and its
shared paragraphs from partials; read without them, a page said "run the following:" over nothing.
Content for another place (``ifdef::env-github[]``) is left out, as the site leaves it out.
Nothing outside the docs folder is read (``read`` refuses it), nothing from the network, and an
include goes ``_MAX_DEPTH`` deep at most, so a page including itself ends.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from pathlib import Path

from core.errors import IngestSourceError
from core.ingest.asciidoc.antora import Component, resource_path
from core.ingest.asciidoc.attributes import entry, substituted
from core.ingest.text import decode_text

__all__ = ["SUFFIXES", "Reader"]

#: AsciiDoc's file suffixes: what an include reads as AsciiDoc (other files are code, read as they are).
SUFFIXES = frozenset({".adoc", ".asciidoc", ".asc"})
_INCLUDE = re.compile(r"^(?P<escape>\\?)include::(?P<target>[^\[\s][^\[]*)\[(?P<attributes>[^\]]*)\][ \t]*$")
_CONDITION = re.compile(
    r"^(?P<escape>\\?)(?P<kind>ifn?def|ifeval|endif)::(?P<names>[^\[]*)\[(?P<text>.*)\][ \t]*$")
#: A tag's start or end in an included file's comment: ``# tag::config[]``, ``// end::config[]``.
_TAG = re.compile(r"\b(?P<kind>tag|end)::(?P<name>[\w*-]+)\[\]")
#: An ``ifeval`` comparison: two values and an operator.
_COMPARISON = re.compile(r"^\s*(?P<left>.+?)\s*(?P<op>==|!=|<=|>=|<|>)\s*(?P<right>.+?)\s*$")
#: Blocks whose lines are never read as directives (comments), or as attribute entries (verbatim).
_COMMENT_BLOCK = re.compile(r"^/{4,}[ \t]*$")
_VERBATIM_BLOCK = re.compile(r"^(?:-{4,}|\.{4,}|\+{4,}|`{3}.*)[ \t]*$")
#: Includes inside includes are read this deep; what all of them add stops at ``_MAX_LINES``.
_MAX_DEPTH = 8
#: An ``ifeval`` longer than this is not read (it holds): a comparison is short.
_MAX_EXPRESSION = 400
_MAX_LINES = 200_000


class Reader:
    """Reads one page with what it includes, under the conditions it sets."""

    def __init__(self, *, root: Path, read: Callable[[Path], bytes], component: Component | None,
                 attributes: dict[str, str]) -> None:
        self._root = root
        self._read = read
        self._component = component
        #: The attributes set so far, page entries included: what conditions and targets read.
        self.attributes = attributes
        self._lines = 0

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
            closing = _closing(line, closing)
            include = _INCLUDE.match(line) if line.startswith(("include::", "\\include::")) else None
            if include is not None:
                out.extend(self._included(include, path=path, depth=depth))
                continue
            if closing is None and (setting := entry(line)) is not None:
                self._set(*setting)
            out.append(line[1:] if condition is not None else line)  # ``\ifdef::x[]`` shows as written
        return out

    def _set(self, name: str, value: str | None) -> None:
        if value is None:
            self.attributes.pop(name, None)
        else:
            self.attributes[name] = substituted(value, self.attributes)

    def _condition(self, condition: re.Match[str], active: list[bool], out: list[str]) -> None:
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
        if kind == "ifeval":
            return _evaluated(substituted(text, self.attributes))
        wanted = [n.strip().lower() for n in re.split(r"[,+]", names) if n.strip()]
        found = [n in self.attributes for n in wanted]
        defined = all(found) if "+" in names else any(found)
        return defined if kind == "ifdef" else not defined

    def _included(self, include: re.Match[str], *, path: Path, depth: int) -> list[str]:
        if include["escape"]:
            return [include[0][1:]]
        target = substituted(include["target"].strip(), self.attributes)
        found = resource_path(target, including=path, component=self._component)
        if found is None or depth >= _MAX_DEPTH or self._lines > _MAX_LINES:
            return []
        try:
            text = decode_text(self._read(found), name=str(found))
        except (IngestSourceError, OSError):
            return []  # not there to read: the site shows a warning, not text
        options = _options(include["attributes"])
        lines = _selected(text.replace("\r\n", "\n").split("\n"), options)
        self._lines += len(lines)
        if found.suffix.lower() not in SUFFIXES:
            return lines
        lines = self.lines("\n".join(lines), path=found, depth=depth + 1)
        return _level_offset(lines, options.get("leveloffset", ""))


def _closing(line: str, closing: str | None) -> str | None:
    """The delimiter the next lines are closed by: a verbatim or comment block's, or None."""
    stripped = line.rstrip()
    if closing is not None:
        return None if stripped == closing else closing
    if _COMMENT_BLOCK.match(stripped) or _VERBATIM_BLOCK.match(stripped):
        return "```" if stripped.startswith("```") else stripped
    return None


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
    if options.get("indent", "").isdigit():
        lines = textwrap.indent(textwrap.dedent("\n".join(lines)), " " * int(options["indent"])).split("\n")
    return lines


def _line_ranges(lines: list[str], ranges: str) -> list[str]:
    picked: list[str] = []
    for written in re.split(r"[;,]", ranges):
        first, _, last = written.strip().partition("..")
        if not first.isdigit():
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


def _level_offset(lines: list[str], offset: str) -> list[str]:
    """Section titles moved by an include's ``leveloffset`` (``+1``: ``==`` becomes ``===``)."""
    if not re.fullmatch(r"[+-]?\d+", offset):
        return lines
    closing: str | None = None
    for k, line in enumerate(lines):
        closing = _closing(line, closing)
        title = re.match(r"^(=+)(?=[ \t]+\S)", line) if closing is None else None
        if title is not None:
            level = len(title[1]) - 1
            level = level + int(offset) if offset[0] in "+-" else int(offset)
            lines[k] = "=" * (min(max(level, 0), 5) + 1) + line[title.end():]
    return lines


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
    written = written.strip()
    if len(written) >= 2 and written[0] == written[-1] and written[0] in "\"'":
        return written[1:-1]
    try:
        return float(written)
    except ValueError:
        return written
