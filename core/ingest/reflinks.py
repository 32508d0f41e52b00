"""Markdown's reference links: ``[text][ref]`` with ``[ref]: https://...`` defined elsewhere on the page.

mdBook's and Django REST framework's pages write most links this way, the definitions
gathered at the bottom. Read as they are, chat shows "[std::io::Stdin][iostdin]" and the
chunks end in lines of addresses. Each reference becomes an inline link
(``[text](https://...)``, which answers show as chat can follow it) and the definition
lines go. A full reference whose label the page does not define (``[errors()][pydantic.Error]``,
``[typing][]``) is a cross-reference the site's build resolves (mkdocs-autorefs): its text is
shown. After a word, a bracket or a parenthesis it stays as it is written (``a[0][1]`` is an
index), and so does what a code span writes.
"""

from __future__ import annotations

import re

from core.ingest.spans import set_code_aside

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
#: ``[text] [label]`` or ``[text]`` over ``[label]`` on the next line (one space or line break): a
#: full reference to Python-Markdown (MkDocs), when the label is defined and the text is not.
_SPACED = re.compile(rf"(?P<bang>!?)(?<!\])\[(?P<text>{_FLAT})\]\s\[(?P<label>[^\[\]\n]+)\]")
#: A task's box (``- [x] [Changelog] updated``) or an index (``a [0] [1]``) is no link text.
_NO_TEXT = re.compile(r"[ xX]|\d+")
#: The label of a cross-reference a site resolves: none (``[Unions][]``), a dotted or
#: snake_case name (``pydantic.BaseModel``), a heading's words (``handling exceptions``) or a
#: slug (``post-job-hook``); not ``[Ctrl][C]``, ``[0][1]`` or a character class (``[a-z][a-z0-9-]``).
_CROSS_REFERENCE = re.compile(r"^(?:|[^\s\[\]]*[._:][^\s\[\]]*|[A-Za-z]{3,}(?:[ \t-]+[A-Za-z]{2,})*)$")
#: What makes ``[a][b]`` after it an index or a call's subscript rather than a link.
_INDEXED = re.compile(r"[\w\])\x00]")
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


def has_full_reference(text: str) -> bool:
    """Whether ``text`` makes a full reference (``[text][ref]``, ``[text][]``)."""
    return "][" in text and any(pattern.search(text) is not None for pattern in _FULL)


def inline_links(prose: str, defined: dict[str, str]) -> str:
    """``prose`` with its references written inline (or as their text) and its definitions left out."""
    if not defined and "][" not in prose:
        return prose

    def full(match: re.Match[str]) -> str:
        url = defined.get(_key(back(match["label"] or match["text"])))
        if url is not None:
            return f"{match['bang']}[{match['text']}]({url})"
        if (match["bang"] or _INDEXED.match(match.string, max(match.start() - 1, 0))
                or not _CROSS_REFERENCE.match(match["label"])):
            return match[0]
        return match["text"]

    def shortcut(match: re.Match[str]) -> str:
        url = defined.get(_key(back(match["text"])))
        return match[0] if url is None else f"{match['bang']}[{match['text']}]({url})"

    def spaced(match: re.Match[str]) -> str:
        url = defined.get(_key(back(match["label"])))
        if url is None or _key(back(match["text"])) in defined or _NO_TEXT.fullmatch(match["text"]):
            return match[0]
        return f"{match['bang']}[{match['text']}]({url})"

    def rewrite(text: str) -> str:
        text = _SPACED.sub(spaced, text) if "] " in text or "]\n" in text else text
        for pattern in _FULL:
            text = pattern.sub(full, text)
        return _SHORTCUT.sub(shortcut, text)

    # What a code span writes is shown as it is ("`[dependencies]`" is a TOML table), but a span
    # may be a link's text ("[`Stdin`][stdin]"): spans are set aside while links are read.
    # NUL marks a span set aside; a page's own is no character (CommonMark reads it as U+FFFD).
    marked, back = set_code_aside(_DEFINITION.sub("", prose.replace("\x00", "\ufffd")))
    return back(rewrite(marked))
