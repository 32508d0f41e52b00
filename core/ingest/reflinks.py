"""Markdown's reference links: ``[text][ref]`` with ``[ref]: https://...`` defined elsewhere on the page.

mdBook's and Django REST framework's pages write most links this way, the definitions
gathered at the bottom. Read as they are, chat shows "[std::io::Stdin][iostdin]" and the
chunks end in lines of addresses. Each reference becomes an inline link
(``[text](https://...)``, which answers show as chat can follow it) and the definition
lines go. A reference whose label is not defined stays as it is written (``a[0][1]`` is
an index), and so does what a code span writes.
"""

from __future__ import annotations

import re

from core.ingest.spans import CODE_SPAN

#: ``[label]: url`` or ``[label]: <url> "title"``, indented at most three spaces, the URL on the
#: same line or the next (CommonMark); a footnote's ``[^1]: text`` is no link.
_DEFINITION = re.compile(
    r"^ {0,3}\[(?!\^)(?P<label>[^\[\]\n]+)\]:[ \t]*(?:\n[ \t]*)?<?(?P<url>[^\s<>]+)>?"
    r"(?:[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^)\n]*\)))?[ \t]*$",
    re.MULTILINE)
#: A link's text: no bracket, a line break within the paragraph (mdBook wraps its lines), or, in
#: the second pass, one bracketed part (a badge's ``[![Build](badge.svg)][build]``).
_FLAT = r"(?:[^\[\]\n]|\n(?![ \t]*\n))+"
_NESTED = r"(?:[^\[\]\n]|\n(?![ \t]*\n)|\[[^\[\]\n]*\])+"
#: ``[text][label]``, ``[text][]`` and ``![alt][label]``, inner ones first.
_FULL = [re.compile(rf"(?P<bang>!?)\[(?P<text>{text})\]\[(?P<label>[^\[\]\n]*)\]")
         for text in (_FLAT, _NESTED)]
_ASIDE = re.compile(r"\x00(\d+)\x00")
#: ``[label]`` alone (a shortcut reference): not after ``]``, not before ``(``, ``[`` or ``:``.
_SHORTCUT = re.compile(rf"(?P<bang>!?)(?<!\])\[(?P<text>{_FLAT})\](?![\[(:])")


def _key(label: str) -> str:
    return " ".join(label.split()).casefold()


def definitions(prose: str) -> dict[str, str]:
    """The page's link definitions: label (case and spacing folded) -> URL; the first one counts."""
    found: dict[str, str] = {}
    for match in _DEFINITION.finditer(prose):
        found.setdefault(_key(match["label"]), match["url"])
    return found


def inline_links(prose: str, defined: dict[str, str]) -> str:
    """``prose`` with its references to ``defined`` labels written inline and its definitions left out."""
    if not defined:
        return prose

    def full(match: re.Match[str]) -> str:
        url = defined.get(_key(back(match["label"] or match["text"])))
        return match[0] if url is None else f"{match['bang']}[{match['text']}]({url})"

    def shortcut(match: re.Match[str]) -> str:
        url = defined.get(_key(back(match["text"])))
        return match[0] if url is None else f"{match['bang']}[{match['text']}]({url})"

    def rewrite(text: str) -> str:
        for pattern in _FULL:
            text = pattern.sub(full, text)
        return _SHORTCUT.sub(shortcut, text)

    # What a code span writes is shown as it is ("`[dependencies]`" is a TOML table), but a span
    # may be a link's text ("[`Stdin`][stdin]"): spans are set aside while links are read.
    # NUL marks a span set aside; a page's own is no character (CommonMark reads it as U+FFFD).
    spans: list[str] = []

    def aside(match: re.Match[str]) -> str:
        spans.append(match[0])
        return f"\x00{len(spans) - 1}\x00"

    def back(text: str) -> str:
        return _ASIDE.sub(lambda match: spans[int(match[1])], text)

    return back(rewrite(CODE_SPAN.sub(aside, _DEFINITION.sub("", prose.replace("\x00", "\ufffd")))))
