"""Markdown's inline code spans: where a line's text is code, which no rewrite of prose may touch.

A span opens with a run of backticks and closes with a run of the same length on the same line
(CommonMark): ``` ``a `b` c`` ``` is one span. The pattern starts only where a run starts, so a
long run of backticks costs one pass, not one per backtick.
"""

from __future__ import annotations

import re
from collections.abc import Callable

#: A backslash escape of ASCII punctuation (CommonMark): ``\<`` shows ``<``.
MARKDOWN_ESCAPE = re.compile(r"\\(?P<escaped>[!-/:-@\[-`{-~])")
CODE_SPAN = re.compile(r"(?<!`)(?P<ticks>`+)(?!`)[^\n]*?(?<!`)(?P=ticks)(?!`)")


def outside_code_spans(text: str, rewrite: Callable[[str], str], *, code: re.Pattern[str] = CODE_SPAN) -> str:
    """``text`` with ``rewrite`` applied to what lies between its code spans (or what ``code`` finds)."""
    out, end = [], 0
    for span in code.finditer(text):
        out += [rewrite(text[end:span.start()]), span[0]]
        end = span.end()
    return "".join([*out, rewrite(text[end:])])


_SET_ASIDE = re.compile(r"\x00(\d+)\x00")


def set_code_aside(text: str) -> tuple[str, Callable[[str], str]]:
    """``text`` with each code span replaced by a NUL-marked number, and what puts them back.

    For rewrites of prose whose matches may hold a span (a link's text, "[`Stdin`][stdin]") but
    must never read inside one. ``text`` must hold no NUL of its own.
    """
    spans: list[str] = []

    def aside(match: re.Match[str]) -> str:
        spans.append(match[0])
        return f"\x00{len(spans) - 1}\x00"

    def back(marked: str) -> str:
        return _SET_ASIDE.sub(lambda match: spans[int(match[1])], marked)

    return CODE_SPAN.sub(aside, text), back
