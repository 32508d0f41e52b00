"""Cutting text to a platform's limits, the same way on every platform.

Mentions are defused by ``core.answer.citations.neutralize_mentions`` (re-exported here
so adapters find every text rule in one place); platforms add their own escaping.
"""

from __future__ import annotations

from collections.abc import Callable

from core.answer.citations import neutralize_mentions
from core.ingest.spans import MARKDOWN_ESCAPE

__all__ = ["KeepWhole", "neutralize_mentions", "split_text", "truncate", "unescaped"]

#: Moves a cut position back so it does not fall inside markup (a Slack link, an entity).
KeepWhole = Callable[[str, int], int]
#: Boundaries a cut prefers, best first.
_SEPARATORS = ("\n\n", "\n", ". ", " ")


def _cut_point(text: str, limit: int, keep_whole: KeepWhole | None) -> int:
    # The window reaches one past the limit: a space right at the limit is a fine boundary.
    window = text[: limit + 1]
    cut = limit
    for separator in _SEPARATORS:
        at = window.rfind(separator, limit // 3)
        if at > 0:
            cut = at + len(separator)
            break
    if keep_whole is not None:
        cut = keep_whole(text, cut) or cut
    return cut


def split_text(
    text: str, limit: int, *, first: int | None = None, keep_whole: KeepWhole | None = None
) -> list[str]:
    """Split ``text`` into pieces of at most ``limit`` characters at natural boundaries.

    Prefers paragraph breaks, then line breaks, then sentence ends, then spaces; a word
    longer than ``limit`` is cut hard.

    Args:
        text: the text to split.
        limit: maximum length of each piece, at least 1.
        first: a smaller maximum for the first piece (it shares its message with other parts).
        keep_whole: moves a cut out of markup that must stay in one piece.

    Returns:
        The pieces in order, none empty (one empty string for empty input).
    """
    pieces: list[str] = []
    rest = text.strip()
    while len(rest) > (size := limit if pieces or first is None else first):
        cut = _cut_point(rest, size, keep_whole)
        pieces.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    pieces.append(rest)
    return pieces


def truncate(text: str, limit: int, *, keep_whole: KeepWhole | None = None) -> str:
    """Cut ``text`` to at most ``limit`` characters, ending with "…" when cut.

    Args:
        text: any text.
        limit: maximum length, at least 1.
        keep_whole: moves the cut out of markup that must stay in one piece.
    """
    if len(text) <= limit:
        return text
    cut = limit - 1
    if keep_whole is not None:
        cut = keep_whole(text, cut) or cut
    return text[:cut].rstrip() + "…"


def unescaped(prose: str, *, keep: str = "") -> str:
    """``prose`` (no code in it) with Markdown's backslash escapes read: ``\\>`` is ``>``.

    Discord reads them as Markdown does; Slack and a terminal would show the backslash.

    Args:
        prose: text outside code.
        keep: characters whose escape stays (a platform's own markup: Slack's ``*`` would be bold).
    """
    return MARKDOWN_ESCAPE.sub(lambda m: m[0] if m["escaped"] in keep else m["escaped"], prose)
