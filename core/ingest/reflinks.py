"""Markdown's reference links: ``[text][ref]`` with ``[ref]: https://...`` defined elsewhere on the page.

mdBook's and Django REST framework's pages write most links this way, the definitions
gathered at the bottom. Read as they are, chat shows "[std::io::Stdin][iostdin]" and the
chunks end in lines of addresses. Each reference becomes an inline link
(``[text](https://...)``, which answers show as chat can follow it) and the definition
lines go. A reference whose label is not defined stays as it is written: ``a[0][1]`` is
an index.
"""

from __future__ import annotations

import re

#: ``[label]: url`` or ``[label]: <url> "title"``, indented at most three spaces (CommonMark).
_DEFINITION = re.compile(
    r"^ {0,3}\[(?P<label>[^\]\n]+)\]:[ \t]*<?(?P<url>[^\s<>]+)>?"
    r"(?:[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^)\n]*\)))?[ \t]*$",
    re.MULTILINE)
#: ``[text][label]``, ``[text][]`` and ``![alt][label]``; the text may hold code spans.
_FULL = re.compile(r"(?P<bang>!?)\[(?P<text>[^\]\n]+)\]\[(?P<label>[^\]\n]*)\]")
#: ``[label]`` alone (a shortcut reference): not followed by ``(``, ``[`` or ``:``.
_SHORTCUT = re.compile(r"(?P<bang>!?)(?<!\])\[(?P<text>[^\]\n]+)\](?![\[(:])")


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
        url = defined.get(_key(match["label"] or match["text"]))
        return match[0] if url is None else f"{match['bang']}[{match['text']}]({url})"

    def shortcut(match: re.Match[str]) -> str:
        url = defined.get(_key(match["text"]))
        return match[0] if url is None else f"{match['bang']}[{match['text']}]({url})"

    prose = _DEFINITION.sub("", prose)
    return _SHORTCUT.sub(shortcut, _FULL.sub(full, prose))
