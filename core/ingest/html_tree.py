"""A forgiving HTML tree, the text an element shows, and whether a file is a page of the docs at all.

``core.ingest.html`` reads a page's content from the tree; here is what every reading shares: the
tree itself, what a page never shows (scripts, screen-reader text, icon glyphs), and the files
that are no page (redirect stubs, a generator's indexes and code listings, a site's templates).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from html.parser import HTMLParser

#: Elements that have no end tag, so hold nothing.
VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
     "track", "wbr"}
)
#: Elements whose content is no text of the page: scripts, styles, the site's menus and footer.
DROP = frozenset(
    {"script", "style", "nav", "footer", "aside", "noscript", "template", "svg", "button", "form",
     "iframe", "head", "select", "canvas", "object", "dialog"}
)
#: Classes of what a page does not show: code line numbers, text for screen readers only
#: (Starlight's "Section titled ..." in every heading's anchor; Bootstrap's and Tailwind's sr-only),
#: Sphinx's "[source]" beside a signature (a way to the code, not words of the docs) and its
#: table of contents inside a page (the headings of other pages, which they answer from).
UNSHOWN_CLASS_RE = re.compile(
    r"(?<![\w-])(?:linenos|sr-only|visually-hidden|screen-reader-text|viewcode-link|toctree-wrapper)(?![\w-])")
#: Pages a generator makes from the others, no page of the docs: Sphinx's listings of the code
#: (``_modules/``, "viewcode"), its index of names, its index of modules.
_GENERATED_CLASS_RE = re.compile(r"(?<![\w-])(?:viewcode-block|genindextable|modindextable)(?![\w-])")
#: A page asking browsers to go elsewhere: a redirect stub, no page of the docs to answer from.
_REFRESH_RE = re.compile(r"^\s*refresh\s*$", re.IGNORECASE)
#: Items whose end tag HTML lets out: a new one ends the open one (within its list).
_IMPLIED_END: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "dt": (("dt", "dd"), ("dl",)), "dd": (("dt", "dd"), ("dl",)), "li": (("li",), ("ul", "ol")),
}
#: Characters a page shows nothing of.
ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\ufeff"))
#: Those and, outside code, the private use area: a font's icons (Read the Docs' theme writes its
#: link icon, U+F0C1, in every permalink). Code keeps them: a prompt's powerline glyphs are its text.
UNPRINTED = {**ZERO_WIDTH, **dict.fromkeys(range(0xE000, 0xF900))}


class Node:
    """An element: its tag, its attributes, and its children (elements and text) in order."""

    __slots__ = ("attrs", "children", "tag")

    def __init__(self, tag: str, attrs: dict[str, str]) -> None:
        self.tag = tag
        self.attrs = attrs
        self.children: list[Node | str] = []

    def find_all(self, tag: str) -> list[Node]:
        """The outermost descendants named ``tag``, in document order."""
        return self.find(lambda node: node.tag == tag)

    def find(self, match: Callable[[Node], bool], *, skip: Callable[[Node], bool] | None = None
             ) -> list[Node]:
        """The outermost descendants ``match`` accepts, in document order, none inside one ``skip`` does."""
        found: list[Node] = []
        stack: list[Node] = [self]
        while stack:
            node = stack.pop()
            if node is not self and match(node):
                found.append(node)
                continue
            if node is not self and skip is not None and skip(node):
                continue
            stack.extend(child for child in reversed(node.children) if isinstance(child, Node))
        return found

    def text(self) -> str:
        """The text the element shows, spaces collapsed (scripts and screen-reader-only text left out)."""
        parts: list[str] = []
        stack: list[Node | str] = [self]
        while stack:
            node = stack.pop()
            if isinstance(node, str):
                parts.append(node)
            elif node.tag not in DROP and not UNSHOWN_CLASS_RE.search(node.attrs.get("class", "")):
                stack.extend(reversed(node.children))
        return " ".join("".join(parts).translate(UNPRINTED).split())


class TreeBuilder(HTMLParser):
    """A forgiving DOM: unknown end tags are ignored, unclosed ones closed at their parent's end."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._close_implied(tag)
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def _close_implied(self, tag: str) -> None:
        """Close the item a new one ends, as browsers do: ``<dt>a<dd>b``, ``<li>a<li>b``."""
        closes, within = _IMPLIED_END.get(tag, ((), ()))
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag in within:
                return
            if self.stack[depth].tag in closes:
                del self.stack[depth:]
                return

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Node(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def not_a_page(document: Node) -> bool:
    """Whether the page is a redirect stub or made by the generator from the others.

    A stub's ``<head>`` sends the reader to another address (a moved page's old one): it would be
    quoted as a page of its own. Sphinx's listings of the code, index of names and index of modules
    repeat the docs' names without their words: quoted, they answer with a line of an index or the
    library's source. A site's template (``{% if %}``, ``{{ _('Home') }}`` in its text) is no page.
    A page kept from search engines (``noindex``) is read: a private or staging site marks every
    page so.
    """
    heads = document.find_all("head")
    metas = heads[0].find_all("meta") if heads else []
    if any(_REFRESH_RE.match(meta.attrs.get("http-equiv", ""))
           and "url=" in meta.attrs.get("content", "").lower() for meta in metas):
        return True
    if document.find(lambda node: bool(_GENERATED_CLASS_RE.search(node.attrs.get("class", "")))):
        return True
    return _is_template(document)


#: A template's tag or expression: Jinja's, Liquid's ``{% if x %}``, ``{{ _('Home') }}``, Go's ``{{ .X }}``
_TEMPLATE_TAG_RE = re.compile(r"\{%-?\s*[A-Za-z_][^%\n]*%\}|\{\{-?\s*[^{}\s][^{}\n]*\}\}")
#: Where a page shows a template's tags as they are written: code and literals (docutils writes
#: inline literals as ``<tt>`` or ``<span class="docutils literal">``), keys, samples, variables.
_LITERAL_TAGS = frozenset({"pre", "code", "tt", "kbd", "samp", "var", "script", "style", "textarea"})
_LITERAL_CLASS_RE = re.compile(r"(?<![\w-])(?:literal|highlight[\w-]*)(?![\w-])")
#: Fewer of them outside code may be a page's own words about a template language.
_TEMPLATE_TAGS = 2


def _is_template(document: Node) -> bool:
    """Whether the file is a template of the site (Sphinx's ``_templates/``, Jekyll's ``_layouts/``).

    Its tags are written in its text, outside code, where a built page shows what they stood for.
    """
    found = 0
    stack: list[Node | str] = [document]
    while stack and found < _TEMPLATE_TAGS:
        node = stack.pop()
        if isinstance(node, str):
            found += len(_TEMPLATE_TAG_RE.findall(node))
        elif node.tag not in _LITERAL_TAGS and not _LITERAL_CLASS_RE.search(node.attrs.get("class", "")):
            stack.extend(node.children)
    return found >= _TEMPLATE_TAGS
