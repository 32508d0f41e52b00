"""Markdown's inline markup read as a browser shows it, outside code spans.

Character references (``&mdash;``, ``&#124;``) read as their characters, an inline
``<code>`` element as a code span, HTML comments go (a code span showing one keeps it), and
footnote marks go while the footnote's text stays. What a decoded character would start in
Markdown (a code span, a heading, a table cell) is escaped, so the text reads as the page does.
A tag's ``name="value"`` attributes are read here for every format's tags.
"""

from __future__ import annotations

import bisect
import html
import re
from functools import lru_cache

from core.ingest.spans import CODE_SPAN, MARKDOWN_ESCAPE, outside_code_spans

#: A character reference, as CommonMark reads one: named (``&vert;``), decimal or hexadecimal.
ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
#: What Markdown reads in one pass, left to right: ``\&lt;`` is "&lt;", ``&#92;&lt;`` is "\<".
_ESCAPE_OR_ENTITY = re.compile(rf"{MARKDOWN_ESCAPE.pattern}|{ENTITY.pattern}")
#: A tag inside ``<code>``: an unescaped ``<`` (``\<css|strict>`` is text).
_TAG_IN_CODE = re.compile(r"(?<!\\)<")
_COMMENT_OR_TICKS = re.compile(r"`+|<!--")
#: Characters Markdown reads as markup wherever they stand: written as references, they are text.
_MARKUP_CHARACTERS = frozenset("`|*_[]\\")
#: A footnote's definition (``[^note]: text``, its text perhaps on the lines below).
_FOOTNOTE_DEFINITION = re.compile(r"^([ \t]*)\[\^(?P<label>[^\[\]\s]+)\]:[ \t]*", re.M)
#: A reference to a footnote, with the space before it ("is required [^1].").
_FOOTNOTE_REF = re.compile(r"[ \t]?\[\^(?P<label>[^\[\]\s]+)\](?!:)")


def decode_entities(line: str) -> str:
    """``line`` with its character references outside code spans read as their characters.

    A decoded character that Markdown would read as markup stays text: it is backslash-escaped
    (``&#96;rm&#96;`` is no code span, ``&#124;`` no table cell, ``&#42;a&#42;`` no emphasis),
    and a line break is a space. What a decoded character would start at the line's start (a
    heading, a quote, a list item) is escaped by the caller, which knows the line's shape. An
    unknown name stays as written.
    """
    if "&" not in line:
        return line
    return outside_code_spans(line, lambda part: ENTITY.sub(lambda m: _as_text(html.unescape(m[0])), part))


def plain_text(text: str) -> str:
    """``text`` (a heading's or a label's, no Markdown) with its character references read."""
    return ENTITY.sub(lambda match: html.unescape(match[0]), text) if "&" in text else text


def _as_text(text: str) -> str:
    if text in ("\n", "\r"):
        return " "
    return f"\\{text}" if text in _MARKUP_CHARACTERS else text


def code_element(text: str, start: int, inner: int) -> tuple[str, int] | None:
    """An inline ``<code>...</code>`` (at ``start``, its text from ``inner``) as a code span, and its end.

    Docs write ``<code>`` where a code span cannot go: in a table cell holding a pipe
    (``<code>a &vert; b</code>``) or around escaped text (``<code>\\<a&#124;b></code>``).
    Between the tags a browser shows the text with its escapes and references read, so the
    span holds that, fenced by more backticks than it holds; in a table row a pipe stays
    escaped, or it would end the cell. A ``<code>`` spanning lines or holding a tag or a
    backtick as written is left to the tag stripping (its text kept).
    """
    close = text.find("</code>", inner, inner + 1000)
    body = text[inner:close]
    if close == -1 or "\n" in body or "`" in body or _TAG_IN_CODE.search(body):
        return None
    end = close + len("</code>")
    shown = _ESCAPE_OR_ENTITY.sub(lambda m: m["escaped"] or html.unescape(m[0]), body)
    if not shown.strip():
        return "", end  # an empty span would pair with a later backtick
    if "|" in shown:  # only then is the line read: a table row, with or without outer pipes
        line_end = text.find("\n", end)
        if "|" in text[text.rfind("\n", 0, start) + 1:start] + text[end:None if line_end == -1 else line_end]:
            shown = shown.replace("|", "\\|")
    ticks = "`" * (1 + max((len(run) for run in re.findall(r"`+", shown)), default=0))
    pad = " " if "`" in shown else ""
    return f"{ticks}{pad}{shown}{pad}{ticks}", end


def drop_html_comments(prose: str) -> str:
    """``prose`` without its HTML comments; a code span showing one keeps it.

    A comment inside a paragraph is inline HTML: it closes before the next blank line or it is
    text (a comment opening a line may run on; ``markdown._after_comment`` reads those).
    """
    if "<!--" not in prose:
        return prose
    closes = [m.start() for m in re.finditer("-->", prose)]
    blanks = [m.start() for m in re.finditer("\n[ \t]*\n", prose)]
    out: list[str] = []
    pos = 0
    while (found := _COMMENT_OR_TICKS.search(prose, pos)) is not None:
        end = found.end()
        if found[0].startswith("`"):
            span = CODE_SPAN.match(prose, found.start())
            end = span.end() if span else end
        elif (close := _next(closes, end)) is not None and close < (_next(blanks, end) or len(prose)):
            out.append(prose[pos:found.start()])  # a comment within its paragraph (inline HTML)
            pos = close + 3
            continue
        out.append(prose[pos:end])
        pos = end
    out.append(prose[pos:])
    return "".join(out)


def _next(positions: list[int], start: int) -> int | None:
    """The first of the sorted ``positions`` at or after ``start``, or None."""
    k = bisect.bisect_left(positions, start)
    return positions[k] if k < len(positions) else None


def footnote_labels(prose: str) -> frozenset[str]:
    """The labels of the footnotes a page defines (``[^note]: text``)."""
    if "[^" not in prose:
        return frozenset()
    return frozenset(match["label"] for match in _FOOTNOTE_DEFINITION.finditer(prose))


def without_footnote_marks(prose: str, labels: frozenset[str]) -> str:
    """Footnotes as chat reads them: a mark (``[^1]``) goes, a definition's text stays a paragraph.

    Only marks of ``labels`` the page defines go (CommonMark): ``[^a-z]`` in prose is a pattern.
    """
    if not labels or "[^" not in prose:
        return prose

    def rewrite(part: str) -> str:
        part = _FOOTNOTE_DEFINITION.sub(lambda m: m[1] if m["label"] in labels else m[0], part)
        return _FOOTNOTE_REF.sub(lambda m: "" if m["label"] in labels else m[0], part)

    return outside_code_spans(prose, rewrite)


def attribute(args: str, name: str) -> str | None:
    """The value of a tag's ``name="value"`` (or ``name='value'``) attribute, or None."""
    found = _attribute_pattern(name).search(args)
    return None if found is None else found[1] if found[1] is not None else found[2]


@lru_cache(maxsize=32)
def _attribute_pattern(name: str) -> re.Pattern[str]:
    return re.compile(rf"""\b{re.escape(name)}\s*=\s*(?:"([^"]*)"|'([^']*)')""")
