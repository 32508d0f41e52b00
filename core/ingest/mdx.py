"""MDX's own syntax over lines, read before a page is split at its code fences.

A comment (``{/*`` ... ``*/}``) or an ESM statement (``export function Demo() { ... }``) may hold
blank lines and fences: split first, a fence inside one opened a code block that ran to the end
of the page, or a commented-out section became one of the page's.
"""

from __future__ import annotations

import re

from core.ingest.fences import Fences

__all__ = ["has_mdx_syntax", "without_comments", "without_exports"]

#: A line opening an ESM statement: ``export const``, ``export function``, ``export default``.
_EXPORT = re.compile(r"^export\s+(?:default\s+|const\s|let\s|var\s|function[\s*]|class\s|async\s|\{)", re.M)
#: A line of ESM (an ``import``, or an ``export`` read as one before): a statement may follow it.
_ESM = re.compile(r"^(?:import|export)\s")
#: Lines an ESM statement may run over: past this, the page is read as it is.
_MAX_STATEMENT_LINES = 400


def without_comments(text: str) -> str:
    """A page without its MDX comments running over lines (``{/*`` ... ``*/}``), code in them included.

    Commenting a section out is how pages retire it; read line by line, a fence inside the comment
    made its text a section of the page, answered from. One-line comments go with other markup; a
    ``{/*`` in a code span is shown, and one never closed hides nothing.
    """
    if "{/*" not in text:
        return text
    out: list[str] = []
    fences = Fences()
    hidden: list[str] | None = None  # the comment's lines, given back if it never closes
    for line in text.split("\n"):
        if hidden is not None:
            hidden.append(line)
            end = line.find("*/}")
            if end != -1:
                out[-1] += line[end + 3:]
                hidden = None
            continue
        start = -1 if fences.code(line) else _comment_start(line)
        if start != -1 and line.find("*/}", start) == -1:
            hidden = [line]
            line = line[:start]
        out.append(line)
    if hidden is not None:
        out[-1:] = hidden
    return "\n".join(out)


def _comment_start(line: str) -> int:
    """Where a comment opens in a line of prose, not in a code span (``Start one with `{/*`.``), or -1."""
    start = line.find("{/*")
    while start != -1 and line.count("`", 0, start) % 2:
        start = line.find("{/*", start + 3)
    return start


def has_mdx_syntax(text: str) -> bool:
    """Whether ``text`` holds a comment or an ESM statement, read line by line before parser ``mdx-1``."""
    return "{/*" in text or _EXPORT.search(text) is not None


def without_exports(text: str) -> str:
    """A page without its ESM statements (``export ...``) running over lines, blank ones included.

    A statement ends where its brackets close outside strings and template literals, as MDX's
    parser reads it; one never closed is left to the line-by-line reading.
    """
    if "export" not in text:
        return text
    lines = text.split("\n")
    out: list[str] = []
    fences = Fences()
    k = 0
    while k < len(lines):
        # A statement starts a block: a line of a paragraph, or of a component's attribute
        # (``code={`...\nexport default $`}``), is no statement.
        starts = k == 0 or not lines[k - 1].strip() or _ESM.match(lines[k - 1]) is not None
        end = (None if fences.code(lines[k]) or not starts or not _EXPORT.match(lines[k])
               else _statement_end(lines, k))
        if end is None:
            out.append(lines[k])
            k += 1
        elif end < 0:  # never closed: the rest is left to the line-by-line reading, scanned once
            out.extend(lines[k:])
            break
        else:
            out.append("")
            k = end + 1
    return "\n".join(out)


def _statement_end(lines: list[str], start: int) -> int:
    """The last line of the statement opening ``lines[start]``, or -1 when it never closes."""
    depth, quote = 0, ""
    for k in range(start, min(len(lines), start + _MAX_STATEMENT_LINES)):
        escaped = False
        for ch in lines[k]:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif quote:
                quote = "" if ch == quote else quote
            elif ch in "\"'`":
                quote = ch
            elif ch in "{([":
                depth += 1
            elif ch in "})]":
                depth -= 1
        if quote in "\"'":  # a string ends with its line; a template literal goes on
            quote = ""
        if depth <= 0 and not quote:
            return k
    return -1
