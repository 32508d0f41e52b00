"""Markdown definition lists (Goldmark's, PHP Markdown Extra's, Pandoc's) -> a term leading its text.

A term on its own line, ``: its definition`` on the next. Read as written, the colon opened a line
of prose under a term standing apart ("`delimiter`" over ": (`string`) The delimiter ..."). Here
the term opens its definition's line in bold, as reST's and HTML's definitions are read
(``core.ingest.rst``, ``core.ingest.html``): ``**`delimiter`**: (`string`) The delimiter ...``;
another definition of the same term goes on the next line. Code is left as written.

One blank line may stand between a term and its definition (a "loose" list: Pandoc's, PHP Markdown
Extra's, and MyST's, as Sphinx projects write them): the term still opens it.
"""

from __future__ import annotations

import re

from core.ingest.fences import Fences

#: A definition's line: a colon and up to four spaces, then its text.
_DEFINITION = re.compile(r"^:[ \t]{1,4}(?=\S)")
#: A line of text, then a definition's line under it, or one blank line below it (one pass over a
#: long line).
_SIGN = re.compile(r"\S[^\S\n]*\n(?:[^\S\n]*\n)?:[ \t]{1,4}\S")
#: A line that cannot be a term: a heading, list item, quote, table row, tag, indented text, a rule
#: or a fence, a note's or tab's marker (``!!! note``, ``=== "Tab"``); a term names something.
_NOT_A_TERM = re.compile(r"^(?:#|[-+*][ \t]|\d{1,9}[.)][ \t]|[ \t]*[>|<]| {4}|\t|:|`{3}|~{3}|[!?=]{3})|^\W*$")
_INDENTED = re.compile(r"^(?: {4}|\t)")
#: A term is a name or a short phrase, never a paragraph.
_TERM_CHARS = 200


def has_definition_lists(text: str) -> bool:
    """Whether ``text`` has a line opening with ``: `` under a line of text."""
    return _SIGN.search(text) is not None


def definition_lists(text: str) -> str:
    """``text`` with each definition's line opened by its term (see the module's docstring).

    A definition's paragraphs and code after it, indented under it, are its own: read unindented,
    not as indented code.
    """
    out: list[str] = []
    fences = Fences()
    #: Where in ``out`` the line of the definition being read is, while it is the last one.
    defined: int | None = None
    inside = False  # in a definition: its indented lines go on
    code = -1  # where in ``out`` the last line of code is: no term
    owned = -1  # where in ``out`` the last line a definition owns is (indented under it): no term
    for line in text.split("\n"):
        if inside and _INDENTED.match(line):
            line = _INDENTED.sub("", line, count=1)
            owned = len(out)
        elif line.strip() and fences.fence is None:
            inside = False
        if fences.code(line):
            out.append(line)
            code = len(out) - 1
            continue
        opening = _DEFINITION.match(line)
        if (opening is None and defined is not None and defined == len(out) - 1 and line[:1] in (" ", "\t")
                and line.strip() and fences.fence is None):
            # The definition's text going on, indented on its next line: another definition may follow it.
            out.append(line)
            defined, inside = len(out) - 1, True
            continue
        text_of = line[opening.end():] if opening is not None else ""
        # A loose list: one blank line between the term (or the definition before) and this one.
        loose = opening is not None and len(out) >= 2 and not out[-1].strip()
        if opening is not None and defined is not None and defined == len(out) - 1:
            out.append(text_of)  # another definition of the same term
        elif loose and defined is not None and defined == len(out) - 2:
            out[-1] = text_of  # another definition of the same term, after a blank line
        elif opening is not None and _is_term(out) and code != len(out) - 1 and owned != len(out) - 1:
            out[-1] = f"{_shown_term(out[-1])}: {text_of}"
        elif loose and _is_term(out, -2) and code != len(out) - 2 and owned != len(out) - 2:
            out.pop()  # the blank line between the term and its definition
            out[-1] = f"{_shown_term(out[-1])}: {text_of}"
        else:
            out.append(line)
            continue
        defined, inside = len(out) - 1, True
    return "\n".join(out)


def _is_term(out: list[str], last: int = -1) -> bool:
    """Whether ``out[last]`` (the last line read) is a term: a short line of text opening a paragraph."""
    k = len(out) + last if last < 0 else last
    if k < 0 or not out[k].strip() or len(out[k]) > _TERM_CHARS or _NOT_A_TERM.match(out[k]):
        return False
    return k == 0 or not out[k - 1].strip()


def _shown_term(line: str) -> str:
    """The term in bold, unless it holds a star of its own (``*args``, or bold already)."""
    term = line.strip().rstrip(":").rstrip()
    return term if "*" in term else f"**{term}**"
