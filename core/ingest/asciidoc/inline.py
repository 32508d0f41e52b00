"""AsciiDoc's inline markup -> Markdown's: formatting, links, cross references and UI macros.

``*bold*`` is Markdown's ``**bold**``; ``https://x.org[the site^]`` a link; ``xref:install.adoc[Install]``
and ``<<prerequisites>>`` the text the site shows for them; ``kbd:[Ctrl+T]`` the keys. Text
passed through (``+{x}+``, ``pass:[...]``) and code keep their characters; attribute references
are replaced by their values everywhere else, code included, as Asciidoctor does.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from core.ingest.asciidoc.attributes import substituted

__all__ = ["humanized", "inline"]

#: Text no other markup is read in: ``+++x+++``, ``pass:[x]``, ```+x+``` (code), ``+x+``.
_PASSTHROUGH = re.compile(
    r"\+\+\+(?P<triple>.+?)\+\+\+|pass:[a-z,]*\[(?P<macro>[^\]]*)\]|(?<![\w`])`\+(?P<code>[^\n]+?)\+`(?![\w`])"
    r"|(?<![\w+\\])\+(?=\S)(?P<plain>[^+\n]*?\S)\+(?![\w+])")
_CODE = re.compile(r"``(?P<u>.+?)``|(?<![\w`\\])`(?=\S)(?P<c>[^`\n]*?\S)`(?![\w`])")
_SMART_QUOTES = re.compile(r"(?P<q>[\"'])`(?P<x>[^`\n]+?)`(?P=q)")
_URL_MACRO = re.compile(r"(?<![\w/])(?:link:(?P<target>[^\s\[]+)"
                        r"|(?P<url>(?:https?|ftp|irc|mailto|file):[^\s\[\]<>]+))"
                        r"\[(?P<text>[^\]]*)\]")
_XREF = re.compile(r"xref:(?P<target>[^\s\[]+)\[(?P<text>[^\]]*)\]")
_CROSS_REFERENCE = re.compile(r"<<(?P<target>[^,<>\n]+?)(?:,\s*(?P<text>[^<>\n]+?))?>>")
#: Macros showing their text: keys, buttons, math.
_SHOWN = re.compile(r"(?:kbd|btn|stem|latexmath|asciimath|indexterm2):\[(?P<x>[^\]]*)\]")
_MENU = re.compile(r"menu:(?P<menu>[^\s\[]+)\[(?P<items>[^\]]*)\]")
_IMAGE = re.compile(r"image:(?!:)[^\s\[]+\[(?P<alt>[^\],]*)[^\]]*\]")
_FOOTNOTE = re.compile(r"footnote(?:ref)?:[\w-]*\[(?P<x>(?:[^\]\\]|\\.)*)\]")
#: Markup showing nothing: icons, anchors, index terms (``(((term)))``), inline anchors.
_HIDDEN = re.compile(r"icon:[^\s\[]+\[[^\]]*\]|anchor:[\w:.-]+\[[^\]]*\]|indexterm:\[[^\]]*\]"
                     r"|\(\(\([^()\n]*\)\)\)"
                     r"|\[\[[\w:.-]+(?:,[^\]]*)?\]\]|\[#[\w:.-]+\]")
_INDEX_TERM = re.compile(r"\(\((?P<x>[^()\n]+)\)\)")
#: A role, id or option opening a span (``[.path]_Gemfile_``, ``[.role]#text#``).
_ROLE = re.compile(r"\[[.#%][\w .#%-]*\](?=[*_`#])")
_BOLD = re.compile(r"(?<![\w*\\])\*(?=\S)(?P<x>[^*\n]*?\S)\*(?![\w*])")
_ITALIC = re.compile(r"__(?P<u>.+?)__")
_MARKED = re.compile(r"##(?P<u>.+?)##|(?<![\w#&\\/])#(?=\S)(?P<x>[^#\n]*?\S)#(?![\w#])")
_HARD_BREAK = re.compile(r"[ \t]\+$", re.M)
_HOLD = "\x00"


def inline(text: str, attributes: Mapping[str, str], titles: Mapping[str, str]) -> str:
    """``text`` with AsciiDoc's inline markup read as Markdown (see the module's docstring).

    Args:
        text: a line or paragraph of prose.
        attributes: the attributes set where it is written.
        titles: section titles by id, for a cross reference that gives no text (``<<install>>``).
    """
    held: list[str] = []

    def hold(shown: str) -> str:
        held.append(shown)
        return f"{_HOLD}{len(held) - 1}{_HOLD}"

    text = _PASSTHROUGH.sub(lambda m: hold(_passed(m)), text)
    text = _SMART_QUOTES.sub(r"\g<q>\g<x>\g<q>", substituted(text, attributes))
    text = _CODE.sub(lambda m: hold(_code(m["u"] or m["c"])), text)
    text = _URL_MACRO.sub(lambda m: hold(_link(m)), text)
    text = _XREF.sub(lambda m: m["text"].strip() or _named(m["target"], titles), text)
    text = _CROSS_REFERENCE.sub(lambda m: (m["text"] or "").strip() or _named(m["target"], titles), text)
    for pattern, shown in _MARKUP:
        text = pattern.sub(shown, text)
    return re.sub(f"{_HOLD}(\\d+){_HOLD}", lambda m: held[int(m[1])], text)


def _passed(match: re.Match[str]) -> str:
    if match["code"] is not None:
        return _code(match["code"])
    return match["triple"] or match["macro"] or match["plain"] or ""


def _code(code: str) -> str:
    fence = "``" if "`" in code else "`"
    return f"{fence}{code}{fence}"


def _link(match: re.Match[str]) -> str:
    target = match["target"] or match["url"]
    text = match["text"]
    if "=" in text:  # ``text,window=_blank`` or ``"text, with a comma",role=x``
        text = re.sub(r"""(?:^|,)\s*\w+=(?:"[^"]*"|[^,]*)""", "", text)
    text = text.strip().strip('"').removesuffix("^").strip()
    if target.startswith("mailto:") and not text:
        return target.removeprefix("mailto:")
    return f"[{text}]({target})" if text else target


def _named(target: str, titles: Mapping[str, str]) -> str:
    """What a cross reference without text shows: the section's title, else its id or page as words."""
    page, _, fragment = target.partition("#")
    if fragment or not page.endswith(".adoc"):
        key = fragment or page
        return titles.get(key) or humanized(key)
    return humanized(page.rsplit(":", 1)[-1].rsplit("$", 1)[-1].rsplit("/", 1)[-1].removesuffix(".adoc"))


def humanized(name: str) -> str:
    """An id or file name as words: ``_system_encoding`` -> "system encoding"."""
    return re.sub(r"[-_]+", " ", name).strip() or name


_MARKUP: tuple[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]], ...] = (
    (_SHOWN, r"\g<x>"),
    (_MENU, lambda m: " > ".join([m["menu"], *(i.strip() for i in m["items"].split(">") if i.strip())])),
    (_IMAGE, r"\g<alt>"),
    (_FOOTNOTE, lambda m: f" ({m['x'].strip()})" if m["x"].strip() else ""),
    (_HIDDEN, ""),
    (_INDEX_TERM, r"\g<x>"),
    (_ROLE, ""),
    (_BOLD, r"**\g<x>**"),
    (_ITALIC, r"_\g<u>_"),
    (_MARKED, lambda m: m["u"] or m["x"]),
    (_HARD_BREAK, ""),
)
