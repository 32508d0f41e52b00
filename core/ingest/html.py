"""HTML pages -> sections: the main content only, headings as the path, ``<pre>`` as fenced code."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import PurePosixPath

from core.ingest.document import LoadedDocument, Section, SectionBuilder, clip_title, fenced
from core.ingest.urls import prettify_stem

_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
     "track", "wbr"}
)
_DROP = frozenset(
    {"script", "style", "nav", "footer", "aside", "noscript", "template", "svg", "button", "form",
     "iframe", "head", "select", "canvas", "object", "dialog"}
)
#: ARIA landmarks that are no content: a site's menus, its search box, its footer.
_DROP_ROLES = frozenset({"navigation", "search", "contentinfo"})
_HTML_BLOCKS = frozenset(
    {"p", "div", "section", "blockquote", "ul", "ol", "dl", "dd", "dt", "table", "figure", "figcaption",
     "details", "summary", "h5", "h6", "address", "center", "main", "article", "header", "hr", "body",
     "html"}
)
#: A one-row table's first cell this short labels the second ("Note", "Warning").
_NOTE_LABEL_CHARS = 20
#: A code span, text with no space, another code span: one name (Asciidoctor's
#: <code>branch.</code><em>&lt;name&gt;</em><code>.rebase</code>).
_GLUED_CODE_RE = re.compile(r"`([^`\s]+)`([^`\s,;:!?()]+)`([^`\s]+)`")
#: A code span followed by another after one space: the space joins them ("`git` `fetch`").
_ADJACENT_CODE_RE = re.compile(r"(?<=[^`\s])` `(?=[^`\s])")
#: Classes of what a page does not show: code line numbers, text for screen readers only
#: (Starlight's "Section titled ..." in every heading's anchor; Bootstrap's and Tailwind's sr-only),
#: Sphinx's "[source]" beside a signature (a way to the code, not words of the docs) and its
#: table of contents inside a page (the headings of other pages, which they answer from).
_UNSHOWN_CLASS_RE = re.compile(
    r"(?<![\w-])(?:linenos|sr-only|visually-hidden|screen-reader-text|viewcode-link|toctree-wrapper)(?![\w-])")
#: A note's title: Sphinx's and MkDocs' "admonition-title", Docusaurus' "admonitionHeading_x1y2",
#: Starlight's aside title.
_NOTE_TITLE_CLASS_RE = re.compile(
    r"(?<![\w-])(?:admonition-title|admonitionHeading\w*|starlight-aside__title)(?![\w-])")
#: Pages a generator makes from the others, no page of the docs: Sphinx's listings of the code
#: (``_modules/``, "viewcode"), its index of names, its index of modules.
_GENERATED_CLASS_RE = re.compile(r"(?<![\w-])(?:viewcode-block|genindextable|modindextable)(?![\w-])")
#: A link worth keeping: to a page or a place on another page, not to a place on this one or a script.
_LINK_TARGET_RE = re.compile(r"^\s*(?!#|javascript:|mailto:)\S", re.IGNORECASE)
#: A link inside a heading whose text is only one of these marks is the heading's permalink.
_PERMALINK_MARKS = frozenset({"", "#", "¶", "§", "🔗"})
#: A page asking browsers to go elsewhere: a redirect stub, no page of the docs to answer from.
_REFRESH_RE = re.compile(r"^\s*refresh\s*$", re.IGNORECASE)
_HTML_LINES = frozenset({"li", "tr", "br"})
#: Blocks that, inside a list item, are lines of the list rather than blocks of their own.
_ITEM_PARAGRAPHS = frozenset({"p", "div", "section", "span"})
_HEADING_LEVELS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4}
#: Characters a page shows nothing of, or only a font's icon of: zero-width ones and the private use
#: area (Read the Docs' theme writes its link icon, U+F0C1, in every heading's permalink).
_ZERO_WIDTH = dict.fromkeys([*map(ord, "\u200b\u200c\u200d\ufeff"), *range(0xE000, 0xF900)])


class _Node:
    __slots__ = ("attrs", "children", "tag")

    def __init__(self, tag: str, attrs: dict[str, str]) -> None:
        self.tag = tag
        self.attrs = attrs
        self.children: list[_Node | str] = []

    def find_all(self, tag: str) -> list[_Node]:
        """The outermost descendants named ``tag``, in document order."""
        return self.find(lambda node: node.tag == tag)

    def find(self, match: Callable[[_Node], bool], *, skip: Callable[[_Node], bool] | None = None
             ) -> list[_Node]:
        """The outermost descendants ``match`` accepts, in document order, none inside one ``skip`` does."""
        found: list[_Node] = []
        stack: list[_Node] = [self]
        while stack:
            node = stack.pop()
            if node is not self and match(node):
                found.append(node)
                continue
            if node is not self and skip is not None and skip(node):
                continue
            stack.extend(child for child in reversed(node.children) if isinstance(child, _Node))
        return found

    def text(self) -> str:
        """The text the element shows, spaces collapsed (scripts and screen-reader-only text left out)."""
        parts: list[str] = []
        stack: list[_Node | str] = [self]
        while stack:
            node = stack.pop()
            if isinstance(node, str):
                parts.append(node)
            elif node.tag not in _DROP and not _UNSHOWN_CLASS_RE.search(node.attrs.get("class", "")):
                stack.extend(reversed(node.children))
        return " ".join("".join(parts).translate(_ZERO_WIDTH).split())


class _TreeBuilder(HTMLParser):
    """A forgiving DOM: unknown end tags are ignored, unclosed ones closed at their parent's end."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = _Node("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = _Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in _VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(_Node(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse_html(text: str) -> tuple[str | None, list[Section]]:
    """Extract the main content of an HTML page as sections.

    The content root is ``<main>``, else an element with ``role="main"`` (narrowed to its
    ``<article>`` when it holds exactly one), else a lone ``<article>``, else ``<body>``.
    Navigation, headers outside the content root, footers, scripts, styles, asides and the
    navigation, search and footer landmarks are dropped; ``h1``-``h4`` form the heading path;
    ``<pre>`` becomes a fenced code block, a data table a Markdown table, a link ``[text](href)``.
    A redirect stub holds nothing.

    Returns:
        (title: the first ``<h1>`` of the content, else ``<title>`` without the site's name,
        or None; the sections).
    """
    builder = _TreeBuilder()
    builder.feed(text)
    builder.close()
    document = builder.root
    mains = document.find_all("main") or document.find(lambda node: node.attrs.get("role") == "main")
    bodies = document.find_all("body")
    root = mains[0] if mains else (bodies[0] if bodies else document)
    articles = root.find_all("article")
    if len(articles) == 1:
        root = articles[0]
    in_content = root.tag in ("main", "article") or root.attrs.get("role") == "main"

    if _not_a_page(document):
        return None, []
    title: str | None = None
    # Not a site header's or menu's <h1> (Node's docs: the site's name on every page).
    h1s = root.find(lambda node: node.tag == "h1", skip=lambda node: node.tag in _DROP or _unshown(node)
                    or (node.tag == "header" and not in_content))
    if h1s:
        title = _heading_node_text(h1s[0]) or None
    if title is None:
        titles = document.find_all("title")
        if titles:
            title = _SITE_SUFFIX_RE.split(titles[0].text())[0].strip() or None
    renderer = _HtmlRenderer(keep_header=in_content)
    renderer.walk(root)
    return title, renderer.builder.finish()


def _is_data_table(node: _Node) -> bool:
    """Whether a ``<table>`` holds data, not a layout: code with its line numbers, sections with headings."""
    return not any(node.find_all(tag) for tag in ("pre", "h1", "h2", "h3", "h4"))


#: Where a ``<title>`` goes on with the site's name: "Guide | Site", "Guide — Site", "Guide · Site".
_SITE_SUFFIX_RE = re.compile(r"\s+[|\u2014\u00b7]\s+")


def _not_a_page(document: _Node) -> bool:
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
_TEMPLATE_TAG_RE = re.compile(r"\{%-?\s*[A-Za-z_]\w*[^%\n]*%\}|\{\{-?\s*[^{}\s][^{}\n]*\}\}")
#: Fewer of them outside code may be a page's own words about a template language.
_TEMPLATE_TAGS = 2


def _is_template(document: _Node) -> bool:
    """Whether the file is a template of the site (Sphinx's ``_templates/``, Jekyll's ``_layouts/``).

    Its tags are written in its text, outside code, where a built page shows what they stood for.
    """
    found = 0
    stack: list[_Node | str] = [document]
    while stack and found < _TEMPLATE_TAGS:
        node = stack.pop()
        if isinstance(node, str):
            found += len(_TEMPLATE_TAG_RE.findall(node))
        elif node.tag not in ("pre", "code", "script", "style", "textarea"):
            stack.extend(node.children)
    return found >= _TEMPLATE_TAGS


def _unshown(node: _Node) -> bool:
    """Whether the page hides ``node`` or it is the site's, not the page's: menus, search, footer."""
    hidden = _UNSHOWN_CLASS_RE.search(node.attrs.get("class", "")) is not None
    return hidden or node.attrs.get("role") in _DROP_ROLES


def _heading_node_text(node: _Node) -> str:
    """A heading's text without its permalink: Docusaurus' "#" (class hash-link), Sphinx's and MkDocs' "¶"."""
    clone = _Node(node.tag, node.attrs)
    clone.children = [c for c in node.children if not (isinstance(c, _Node) and _is_permalink(c))]
    return clone.text()


def _is_permalink(node: _Node) -> bool:
    """Whether ``node`` is a heading's link to itself, shown as a mark ("#", "\u00b6") or nothing."""
    classes = node.attrs.get("class", "")
    return node.tag == "a" and ("hash-link" in classes or "headerlink" in classes or (
        node.attrs.get("href", "").startswith("#") and node.text().strip() in _PERMALINK_MARKS))


class _HtmlRenderer:
    """Walks the content tree, turning elements into lines, blocks and sections."""

    def __init__(self, *, keep_header: bool) -> None:
        self.builder = SectionBuilder()
        self.keep_header = keep_header
        self.inline: list[str] = []
        self.prefix = ""
        self.lines: list[str] = []
        #: The lists being read, innermost last: each its next item's number, None for bullets.
        self.lists: list[int | None] = []
        #: The rows of each table being read (tables nest), each row its cells' text, and its element.
        self.tables: list[list[list[str]]] = []
        self.table_nodes: list[_Node] = []
        #: How deep inside a data table's cell the tables being read are nested.
        self.nested = 0
        #: Where each open link's text starts in ``inline``, and how many lines had ended then: a
        #: link around a block (a card of a list of pages) is read as its text.
        self.links: list[tuple[int, int]] = []
        self.lines_ended = 0
        #: A definition list's terms read since its last definition, then the start its definition's
        #: first line gets from them: a term stays with what it defines.
        self.terms: list[str] = []
        self.term_prefix = ""

    def walk(self, node: _Node) -> None:
        # An explicit stack, not recursion: deeply nested markup must not hit the recursion limit.
        stack: list[tuple[_Node | str, bool]] = [(node, False)]
        while stack:
            item, leaving = stack.pop()
            if isinstance(item, str):
                self.inline.append(item)
                continue
            tag = item.tag
            if leaving:
                self._leave(item)
                continue
            if tag in _DROP or (tag == "header" and not self.keep_header) or _unshown(item):
                continue
            if tag in _HEADING_LEVELS and not self.tables:
                self.end_block()
                self.builder.heading(_HEADING_LEVELS[tag], _heading_node_text(item))
                continue
            if tag == "pre" and not self.tables:
                self._code_block(item)
                continue
            if tag in ("code", "pre"):
                self.inline.append("`" + item.text() + "`")
                continue
            if tag == "img" or _is_permalink(item):
                continue
            if _NOTE_TITLE_CLASS_RE.search(item.attrs.get("class", "")) and not self.tables:
                self._note_title(item)
                continue
            self._enter(item)
            stack.append((item, True))
            stack.extend((child, False) for child in reversed(item.children))

    def _enter(self, node: _Node) -> None:
        tag = node.tag
        if tag == "a" and _LINK_TARGET_RE.match(node.attrs.get("href", "")):
            self.links.append((len(self.inline), self.lines_ended))
            return
        if tag == "table" and self.tables:
            self.nested += 1  # a table inside a cell is read as that cell's text
        elif tag == "table" and _is_data_table(node):
            self.end_block()
            self.tables.append([])
            self.table_nodes.append(node)
            return
        if self.tables:
            self._enter_table_part(tag)
            return
        if tag in ("ul", "ol") and self.lists:
            self.end_line()  # a nested list continues its parent's block
        elif tag == "dt":
            self.end_block()
            self.terms.append("")
        elif tag in _ITEM_PARAGRAPHS and self.lists:
            self.end_line()  # Sphinx writes every item's text as <li><p>: a line of the list
        elif tag in _HTML_BLOCKS:
            self.end_block()
            if tag == "dd":
                self._open_definition()
        elif tag == "li":
            self.end_line()
            self.prefix = "  " * max(len(self.lists) - 1, 0) + self._marker()
        elif tag == "tr":
            self.end_line()
        elif tag in ("td", "th") and self.inline and "".join(self.inline).strip():
            self.inline.append(" | ")
        if tag in ("ul", "ol"):
            start = node.attrs.get("start", "1").strip()
            self.lists.append((int(start) if start.isdigit() else 1) if tag == "ol" else None)

    def _marker(self) -> str:
        """The marker of the next item of the innermost list: "- ", or its number ("3. ")."""
        number = self.lists[-1] if self.lists else None
        if number is None:
            return "- "
        self.lists[-1] = number + 1
        return f"{number}. "

    def _leave(self, node: _Node) -> None:
        tag = node.tag
        if tag == "a" and _LINK_TARGET_RE.match(node.attrs.get("href", "")):
            self._close_link(node.attrs["href"])
            return
        if self.table_nodes and node is self.table_nodes[-1]:
            self._close_cell()
            self.table_nodes.pop()
            self._table_block(self.tables.pop())
            return
        if self.tables:
            if tag == "table":
                self.nested -= 1
            elif tag in ("td", "th") and not self.nested:
                self._close_cell()
            elif tag in _HTML_BLOCKS or tag in _HTML_LINES:
                self.inline.append(" ")
            return
        if tag in ("ul", "ol"):
            self.end_line()
            self.prefix = ""  # an item with no text: its marker marks nothing
            if self.lists:
                self.lists.pop()
            if self.lists:
                return
        if tag == "dt":
            text = " ".join("".join(self.inline).translate(_ZERO_WIDTH).split())
            self.inline, self.terms[-1] = [], text
        elif tag in _ITEM_PARAGRAPHS and self.lists:
            self.end_line()
        elif tag in _HTML_BLOCKS:
            self.end_block()
            if tag in ("dd", "dl"):
                self._close_definition()
        elif tag in _HTML_LINES:
            self.end_line()

    def _note_title(self, node: _Node) -> None:
        """A note's title ("Warning") opens its text's first line, as a note is read in Markdown."""
        self.end_block()
        title = node.text().rstrip(":").strip()
        title = title.capitalize() if title.islower() else title  # Docusaurus' "note", shown in capitals
        self.term_prefix = f"{title}: " if title else ""

    def _open_definition(self) -> None:
        """The terms over a definition start its first line: ``**-f, --force**: Usually, ...``."""
        joined = ", ".join(term for term in self.terms if term).rstrip(":").rstrip()
        self.terms = []
        if joined:
            self.term_prefix = f"{joined}: " if "*" in joined else f"**{joined}**: "

    def _close_definition(self) -> None:
        """Terms no text followed (an empty definition, the list's end) stand as a paragraph."""
        self._open_definition()
        if self.term_prefix:
            self.builder.block(self.term_prefix.rstrip().rstrip(":"))
            self.term_prefix = ""

    def _close_link(self, href: str) -> None:
        """``[text](href)`` for a link with text on one line; an icon's link leaves nothing."""
        start, ended = self.links.pop()
        if ended == self.lines_ended and "".join(self.inline[start:]).strip():
            self.inline.insert(start, "[")
            self.inline.append(f"]({href.strip().replace(' ', '%20')})")

    def _enter_table_part(self, tag: str) -> None:
        """A row or a cell opens; whatever else a cell holds (a paragraph, a list) stays on its line."""
        rows = self.tables[-1]
        if self.nested:
            self.inline.append(" ")
        elif tag == "tr":
            self._close_cell()
            rows.append([])
        elif tag in ("td", "th"):
            self._close_cell()
            if not rows:
                rows.append([])
            rows[-1].append("")
        elif tag in _HTML_BLOCKS or tag in _HTML_LINES:
            self.inline.append(" ")

    def _close_cell(self) -> None:
        """The text read since the current cell opened becomes its text."""
        rows = self.tables[-1]
        text = " ".join("".join(self.inline).translate(_ZERO_WIDTH).split())
        self.inline = []
        self.lines_ended += 1
        if rows and rows[-1] and not rows[-1][-1]:
            rows[-1][-1] = text.replace("|", "\\|")

    def _table_block(self, rows: list[list[str]]) -> None:
        """A table as Markdown: its first row the header, ``| --- |`` under it."""
        rows = [row for row in rows if any(cell for cell in row)]
        if not rows:
            return
        if len(rows) == 1:
            # One row lays a note out (Asciidoctor's "Note" cell beside its text): read as prose.
            cells = [cell for cell in rows[0] if cell]
            labelled = len(cells) == 2 and len(cells[0]) <= _NOTE_LABEL_CHARS
            self.builder.block(f"{cells[0]}: {cells[1]}" if labelled else " ".join(cells))
            return
        width = max(len(row) for row in rows)
        lines = ["| " + " | ".join([*row, *[""] * (width - len(row))]) + " |" for row in rows]
        lines.insert(1, "| " + " | ".join(["---"] * width) + " |")
        self.builder.block("\n".join(lines))

    def _code_block(self, node: _Node) -> None:
        self.end_block()
        if self.term_prefix:  # a definition that is code: its term is the lead-in
            self.builder.block(self.term_prefix.rstrip())
            self.term_prefix = ""
        parts: list[str] = []
        stack: list[_Node | str] = [node]
        language = ""
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                parts.append(item)
                continue
            if "lineno" in item.attrs.get("class", ""):
                continue  # Sphinx's and pdoc's line numbers, written inside the code
            if item.tag == "br":
                parts.append("\n")
            match = re.search(r"language-([\w+#-]+)", item.attrs.get("class", ""))
            if match and not language:
                language = match.group(1)
            stack.extend(reversed(item.children))
        code = "".join(parts).translate(_ZERO_WIDTH).strip("\n")
        if code.strip():
            self.builder.block(fenced(code, language))

    def end_line(self) -> None:
        self.lines_ended += 1
        line = " ".join("".join(self.inline).translate(_ZERO_WIDTH).split())
        # Asciidoctor writes "git fetch" as <code>git</code> <code>fetch</code>: one name, one span.
        line = _ADJACENT_CODE_RE.sub(" ", line) if "` `" in line else line
        line = _GLUED_CODE_RE.sub(r"`\1\2\3`", line) if line.count("`") >= 4 else line
        self.inline = []
        if not line.strip(" |"):
            return  # an item's marker waits for its text (<li><p>...)
        prefix, self.prefix = self.prefix, ""
        if self.term_prefix and prefix:  # a definition that is a list: the term is its lead-in
            self.lines.append(self.term_prefix.rstrip())
        elif self.term_prefix:
            prefix = self.term_prefix
        self.term_prefix = ""
        self.lines.append(prefix + line)

    def end_block(self) -> None:
        self.end_line()
        if self.lines:
            self.builder.block("\n".join(self.lines))
            self.lines = []


def html_document(
    text: str, *, source_document: str, url: str, raw_sha256: str | None = None
) -> LoadedDocument:
    """Parse an HTML page fetched from ``url`` (sitemap ingestion).

    Args:
        text: the page's HTML.
        source_document: what identifies the page in the store (its URL).
        url: the link shown to users.
        raw_sha256: fingerprint to use; by default the hash of the extracted text, so
            pages whose markup changes without their content (asset hashes) stay unchanged.

    Returns:
        The parsed document.
    """
    title, sections = parse_html(text)
    if raw_sha256 is None:
        digest = hashlib.sha256()
        for section in sections:
            digest.update("\x1f".join(section.headings).encode())
            for block in section.blocks:
                digest.update(b"\x1e" + block.encode())
        raw_sha256 = digest.hexdigest()
    path = PurePosixPath(url.split("?", 1)[0].split("#", 1)[0].rstrip("/"))
    return LoadedDocument(
        source_document=source_document,
        title=clip_title(title or prettify_stem(path.name or "index")),
        url=url,
        sections=sections,
        raw_sha256=raw_sha256,
    )
