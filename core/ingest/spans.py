"""Markdown's inline code spans: where a line's text is code, which no rewrite of prose may touch.

A span opens with a run of backticks and closes with a run of the same length on the same line
(CommonMark): ``` ``a `b` c`` ``` is one span. The pattern starts only where a run starts, so a
long run of backticks costs one pass, not one per backtick.
"""

from __future__ import annotations

import re
from collections.abc import Callable

CODE_SPAN = re.compile(r"(?<!`)(?P<ticks>`+)(?!`)[^\n]*?(?<!`)(?P=ticks)(?!`)")


def outside_code_spans(text: str, rewrite: Callable[[str], str], *, code: re.Pattern[str] = CODE_SPAN) -> str:
    """``text`` with ``rewrite`` applied to what lies between its code spans (or what ``code`` finds)."""
    out, end = [], 0
    for span in code.finditer(text):
        out += [rewrite(text[end:span.start()]), span[0]]
        end = span.end()
    return "".join([*out, rewrite(text[end:])])
