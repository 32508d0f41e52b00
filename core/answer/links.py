"""Links in quoted docs prose as a chat reader can follow them.

Docs link to each other with paths that only their site generator resolves
(``[caching](../guides/integration/github.md#caching)``, MyST's ``[](my-label)``, Hugo's
``relref``). Quoted as they are, Slack and Discord show the raw Markdown, and the target is
no address anyone can open. So a quoted link keeps its target only when chat can open it: a
web address, or an anchor of the quoted page when that page has one. Any other link
(``mailto:`` too, which Slack does not link) reads as its text; a link without text (MyST
fills it in from the target) reads as the target's name. A picture becomes a link to it, or
is left out when its file is no web address (chat shows no picture for it, and its alt text
is no sentence); a picture that is a link reads as that one link.
"""

from __future__ import annotations

import re

_TARGET = r"\(\s*<?(?P<target>[^\s()<>]*)>?(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'))?\s*\)"
_CODE = r"(?P<code>(?P<ticks>`+)[^`\n](?:[^\n]*?[^`\n])?(?P=ticks)(?!`))"  # a code span: literal
#: A picture that is a link (``[![logo](logo.png)](https://site.dev)``): read as one link.
_LINKED_PICTURE = re.compile(rf"{_CODE}|\[\s*!\[(?P<text>[^\]\n]*)\]\([^)\n]*\)\s*\]{_TARGET}")
#: ``[text](target "title")`` or ``![alt](target)``; the text may hold code spans with brackets
#: (``[`[build-system]`](pyproject.md)``), the target may sit in ``<...>``; ``\[`` is no link.
_CODE_OR_LINK = re.compile(rf"{_CODE}|(?<!\\)(?P<image>!?)\[(?P<text>(?:`[^`\n]*`|[^\[\]`\n])*)\]{_TARGET}")
_WEB_PAGE = re.compile(r"(?i)^https?://")


def shown_links(text: str, *, page_url: str) -> str:
    """Rewrite the links of quoted prose so that every one left can be followed from chat.

    Args:
        text: Markdown prose of one page (never a code block: a link there is literal, as it
            is in a code span).
        page_url: the address of the page quoted, against which ``#anchor`` links resolve.

    Returns:
        The text with relative links reduced to their text, anchors made absolute when the
        page has a web address, and relative images left out.
    """
    if "](" not in text:
        return text
    page = page_url.split("#", 1)[0]

    def picture(match: re.Match[str]) -> str:
        if match["code"]:
            return match[0]
        target = match["target"]
        return f"[{match['text'].strip() or 'image'}]({target})" if _WEB_PAGE.match(target) else ""

    def shown(match: re.Match[str]) -> str:
        if match["code"]:
            return match[0]
        label, target = match["text"].strip(), match["target"]
        if match["image"]:  # a link to a picture is what chat can show of it
            return f"[{label or 'image'}]({target})" if _WEB_PAGE.match(target) else ""
        if _WEB_PAGE.match(target):
            return match[0]
        if target.startswith("#") and len(target) > 1 and label and _WEB_PAGE.match(page):
            return f"[{label}]({page}{target})"
        # Slack and Discord link only web addresses: "write to [us](mailto:a@b.c)" reads as text.
        return label or _name(target)

    return _CODE_OR_LINK.sub(shown, _LINKED_PICTURE.sub(picture, text))


def link_labels(text: str) -> str:
    """Prose as read: each link or picture as its text, or its target's name when it has none.

    A link's address ("cli/reference.md#hatch-publish") names another page; its words are no words
    of the sentence. A code span is literal, whatever brackets it holds.
    """
    if "](" not in text:
        return text

    def label(match: re.Match[str]) -> str:
        if match["code"]:
            return match[0]
        return match["text"].strip() or ("" if match["image"] else _name(match["target"]))

    return _CODE_OR_LINK.sub(label, text)


def _name(target: str) -> str:
    """The name of what a link without text points at: ``../types/notebooks.md`` -> ``notebooks``."""
    path = target.split("#", 1)
    stem = path[0].rstrip("/").rsplit("/", 1)[-1].split(":")[-1]  # "mailto:a@b.c" -> the address
    stem = stem if "@" in stem else stem.rsplit(".", 1)[0] if "." in stem else stem
    return stem.strip(".") or (path[1] if len(path) > 1 else "")
