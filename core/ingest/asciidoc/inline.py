"""AsciiDoc's inline markup -> Markdown's: formatting, links, cross references and UI macros.

``*bold*`` is Markdown's ``**bold**``; ``https://x.org[the site^]`` a link; ``xref:install.adoc[Install]``
and ``<<prerequisites>>`` the text the site shows for them; ``kbd:[Ctrl+T]`` the keys. Text
passed through (``+{x}+``, ``pass:[...]``) and code keep their characters; attribute references
are replaced by their values everywhere else, code included, as Asciidoctor does.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping

from core.ingest.asciidoc.attributes import substituted

__all__ = ["humanized", "inline"]

# Every pattern below is linear in its text: what a macro's brackets hold stops at the next bracket
# and runs so far at most, so a page of openers never closed (``image:a[ image:a[ ...``) is read at once.
#: Text no other markup is read in: ``+++x+++``, ``$$x$$``, ``pass:[x]``, ```+x+``` (code), ``+x+``.
_PASSTHROUGH = re.compile(
    r"\+\+\+(?P<triple>[^\n]{1,2000}?)\+\+\+|\$\$(?P<dollars>[^\n]{1,2000}?)\$\$"
    r"|pass:[a-z,]{0,20}\[(?P<macro>(?:[^\[\]\\\n]|\\.|\[[^\[\]\n]{0,200}\]){0,2000})\]"
    r"|(?<![\w`])`\+(?P<code>[^`\n]{1,2000}?)\+`(?![\w`])|(?<![\w+\\])\+(?=\S)(?P<plain>[^+\n]{0,2000}?\S)\+(?![\w+])")
_CODE = re.compile(r"``(?P<u>[^\n]{1,2000}?)``|(?<![\w`\\])`(?=\S)(?P<c>[^`\n]{0,2000}?\S)`(?![\w`])")
_SMART_QUOTES = re.compile(r"(?P<q>[\"'])`(?P<x>[^`\n]{1,2000}?)`(?P=q)")
#: What a macro's brackets hold: no bracket, no line break.
_HELD = r"[^\[\]\n]{0,1000}"
_URL_MACRO = re.compile(r"(?<![\w/])(?:link:(?P<target>[^\s\[\]]{1,2000})"
                        r"|(?P<url>(?:https?|ftp|irc|mailto|file):[^\s\[\]<>]{1,2000}))"
                        rf"\[(?P<text>{_HELD})\]")
#: A link whose target starts with an attribute no one set (``{url-org}/x[text]``): its text is shown.
_UNKNOWN_LINK = re.compile(rf"(?<!\\)\{{[\w-]{{1,100}}\}}[^\s\[\]]{{0,2000}}\[(?P<text>{_HELD})\]")
_XREF = re.compile(rf"xref:(?P<target>[^\s\[\]]{{1,2000}})\[(?P<text>{_HELD})\]")
#: ``<<install>>``, ``<<7-start,the steps>>``: an id starts right after ``<<`` (``x << 2 or y >> 1``
#: is no reference).
_CROSS_REFERENCE = re.compile(
    r"<<(?P<target>[\w:#][^,<>\n]{0,500}?)(?:,\s*(?P<text>[^<>\n]{1,1000}?))?>>")
#: Macros showing their text: keys, buttons, math.
_SHOWN = re.compile(rf"(?:kbd|btn|stem|latexmath|asciimath|indexterm2):\[(?P<x>{_HELD})\]")
_MENU = re.compile(rf"menu:(?P<menu>[^\s\[\]]{{1,500}})\[(?P<items>{_HELD})\]")
_IMAGE = re.compile(r"image:(?!:)[^\s\[\]]{1,2000}\[(?P<alt>[^\[\],\n]{0,1000})(?:,[^\[\]\n]{0,1000})?\]")
_FOOTNOTE = re.compile(r"footnote(?:ref)?:[\w-]{0,100}\[(?P<x>(?:[^\[\]\\\n]|\\.){0,2000})\]")
#: Markup showing nothing: icons, anchors, index terms (``(((term)))``), inline anchors.
_HIDDEN = re.compile(rf"icon:[^\s\[\]]{{1,200}}\[{_HELD}\]|anchor:[\w:.-]{{1,200}}\[{_HELD}\]"
                     rf"|indexterm:\[{_HELD}\]|\(\(\([^()\n]{{0,1000}}\)\)\)"
                     r"|\[\[[\w:.-]{1,200}(?:,[^\[\]\n]{0,500})?\]\]|\[#[\w:.-]{1,200}\]")
_INDEX_TERM = re.compile(r"\(\((?P<x>[^()\n]{1,500})\)\)")
#: A role, id or option opening a span (``[.path]_Gemfile_``, ``[.role]#text#``, the older
#: ``[blue]*text*``), and one opening code (``[.path]`config.yml```), left out before code is read.
_ROLE = re.compile(r"\[[.#%]?[\w .#%-]{0,100}\](?=[*_`#])")
_CODE_ROLE = re.compile(r"(?<!`)\[[.#%][\w .#%-]{0,100}\](?=`)")
_BOLD = re.compile(r"(?<![\w*\\])\*(?=\S)(?P<x>[^*\n]{0,2000}?\S)\*(?![\w*])")
_ITALIC = re.compile(r"__(?P<u>[^\n]{1,2000}?)__")
_MARKED = re.compile(r"##(?P<u>[^\n]{1,2000}?)##|(?<![\w#&\\/])#(?=\S)(?P<x>[^#\n]{0,2000}?\S)#(?![\w#])")
_HARD_BREAK = re.compile(r"[ \t]\+$", re.M)
#: Asciidoctor's replacements: `` -- `` and ``word--word`` are an em dash.
_DASH = re.compile(r"(?<=\w)--(?=\w)|(?<=\s)--(?=\s)|(?<=\s)--$")
#: A backslash escaping markup (``\*not bold*``, ``\=>``), not one of a path (``C:\Users``).
_ESCAPE = re.compile(r"\\(?=[*_`#+{}\[\]<>=~^']|--|\.\.\.)")
#: ... and in code, where a backslash is text but before a replacement (`` `'toc' \=> 'left'` ``).
_CODE_ESCAPE = re.compile(r"\\(?==>|->|<-|--|\.\.\.)")
_HOLD = "\x00"


def inline(text: str, attributes: Mapping[str, str], titles: Mapping[str, str],
           page_title: Callable[[str], str | None] = lambda target: None) -> str:
    """``text`` with AsciiDoc's inline markup read as Markdown (see the module's docstring).

    Args:
        text: a line or paragraph of prose.
        attributes: the attributes set where it is written.
        titles: section titles by id, for a cross reference that gives no text (``<<install>>``).
        page_title: the title of the page an ``xref`` names, when it is among the docs.
    """
    held: list[str] = []

    def hold(shown: str) -> str:
        """A placeholder for text no later markup may change."""
        held.append(shown)
        return f"{_HOLD}{len(held) - 1}{_HOLD}"

    text = _PASSTHROUGH.sub(lambda m: hold(_passed(m)), _CODE_ROLE.sub("", text))
    text = _SMART_QUOTES.sub(r"\g<q>\g<x>\g<q>", substituted(text, attributes))
    text = _CODE.sub(lambda m: hold(_code(m["u"] or m["c"])), text)
    text = _URL_MACRO.sub(lambda m: hold(_link(m)), text)
    text = _UNKNOWN_LINK.sub(lambda m: _link_text(m["text"]), text)
    named = functools.partial(_named, titles=titles, page_title=page_title)
    text = _XREF.sub(lambda m: hold(_link_text(m["text"]) or named(m["target"])), text)
    text = _CROSS_REFERENCE.sub(lambda m: hold((m["text"] or "").strip() or named(m["target"])), text)
    # What is left of ``<`` and ``>`` is text (``<docname>``): Markdown would read a tag, and drop it.
    text = text.replace("<", "&lt;").replace(">", "&gt;")
    for pattern, shown in _MARKUP:
        text = pattern.sub(shown, text)
    for _ in range(4):  # held text may hold more (code in a link's text)
        text = re.sub(f"{_HOLD}(\\d+){_HOLD}", lambda m: held[int(m[1])], text)
    return text


def _passed(match: re.Match[str]) -> str:
    """What a passthrough shows: code as code, ``+<x>+`` as text, raw HTML as it is."""
    if match["code"] is not None:  # passed through: shown as written
        fence = "``" if "`" in match["code"] else "`"
        return f"{fence}{match['code']}{fence}"
    if match["plain"] is not None:  # text shown as written: ``+<docname>+``
        return match["plain"].replace("<", "&lt;").replace(">", "&gt;")
    return match["triple"] or match["dollars"] or re.sub(r"\\(\])", r"\1", match["macro"] or "")


def _code(code: str) -> str:
    """A code span, its escapes read, its fence longer than a backtick inside it."""
    code = _CODE_ESCAPE.sub("", code)
    fence = "``" if "`" in code else "`"
    return f"{fence}{code}{fence}"


def _link_text(text: str) -> str:
    """A link's text without its attributes: ``text^``, ``text,window=_blank``, ``"a, b",role=x``."""
    if "=" in text:
        text = re.sub(r"""(?:^|,)\s*\w+=(?:"[^"]*"|[^,]*)""", "", text)
    return text.strip().strip('"').removesuffix("^").strip()


def _link(match: re.Match[str]) -> str:
    """A URL macro as a Markdown link (a ``mailto:`` without text as its address)."""
    target = match["target"] or match["url"]
    text = _link_text(match["text"])
    if target.startswith("mailto:") and not text:
        return target.removeprefix("mailto:")
    return f"[{text}]({target})" if text else target


def _named(target: str, *, titles: Mapping[str, str], page_title: Callable[[str], str | None]) -> str:
    """What a cross reference without text shows: a section's or page's title, else its id as words."""
    page, _, fragment = target.partition("#")
    if not page.endswith(".adoc"):  # a section of this page: ``<<install>>``, ``xref:#install[]``
        key = fragment or page
        return titles.get(key) or humanized(key)
    if fragment:  # a section of another page: its title is that page's to give
        return humanized(fragment)
    stem = page.rsplit(":", 1)[-1].rsplit("$", 1)[-1].rsplit("/", 1)[-1].removesuffix(".adoc")
    return page_title(page) or humanized(stem)


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
    (_DASH, "—"),
    (_ESCAPE, ""),
)
