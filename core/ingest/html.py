"""HTML pages -> sections: the main content only, headings as the path, ``<pre>`` as fenced code."""

from __future__ import annotations

import hashlib
import re
from pathlib import PurePosixPath

from core.ingest.document import LoadedDocument, Section, SectionBuilder, clip_title, fenced
from core.ingest.html_tree import (
    DROP,
    UNPRINTED,
    UNSHOWN_CLASS_RE,
    ZERO_WIDTH,
    Node,
    TreeBuilder,
    not_a_page,
)
from core.ingest.urls import prettify_stem

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
#: A note's title: Sphinx's and MkDocs' "admonition-title", Docusaurus' "admonitionHeading_x1y2",
#: Starlight's aside title.
_NOTE_TITLE_CLASS_RE = re.compile(
    r"(?<![\w-])(?:admonition-title|admonitionHeading\w*|starlight-aside__title)(?![\w-])")
#: A link worth keeping: to a page or a place on another page, not to a place on this one or a script.
_LINK_TARGET_RE = re.compile(r"^\s*(?!#|javascript:|mailto:)\S", re.IGNORECASE)
#: A link to a place on its own page whose text is only one of these marks is a permalink.
_PERMALINK_MARKS = frozenset({"", "#", "¶", "§", "🔗"})
_HTML_LINES = frozenset({"li", "tr", "br"})
#: Blocks that, inside a list item, are lines of the list rather than blocks of their own.
_ITEM_PARAGRAPHS = frozenset({"p", "div", "section"})
_HEADING_LEVELS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4}


def parse_html(text: str) -> tuple[str | None, list[Section]]:
    """Extract the main content of an HTML page as sections.

    The content root is ``<main>``, else an element with ``role="main"`` (narrowed to its
    ``<article>`` when it holds exactly one), else a lone ``<article>``, else ``<body>``.
    Navigation, headers outside the content root, footers, scripts, styles, asides and the
    navigation, search and footer landmarks are dropped; ``h1``-``h4`` form the heading path;
    ``<pre>`` becomes a fenced code block, a data table a Markdown table, a link ``[text](href)``,
    a list Markdown's (numbered when it is), a definition list's term and a note's title the
    start of their text's first line. What is no page (``not_a_page``: a redirect stub, a
    generator's indexes and code listings, a site's template) holds nothing.

    Returns:
        (title: the first ``<h1>`` of the content, else ``<title>`` without the site's name,
        or None; the sections).
    """
    builder = TreeBuilder()
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

    if not_a_page(document):
        return None, []
    title: str | None = None
    # Not a site header's or menu's <h1> (Node's docs: the site's name on every page).
    h1s = root.find(lambda node: node.tag == "h1", skip=lambda node: node.tag in DROP or _unshown(node)
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


def _is_data_table(node: Node) -> bool:
    """Whether a ``<table>`` holds data, not a layout: code with its line numbers, sections with headings."""
    return not any(node.find_all(tag) for tag in ("pre", "h1", "h2", "h3", "h4"))


#: Where a ``<title>`` goes on with the site's name: "Guide | Site", "Guide — Site", "Guide · Site".
_SITE_SUFFIX_RE = re.compile(r"\s+[|\u2014\u00b7]\s+")


def _unshown(node: Node) -> bool:
    """Whether the page hides ``node`` or it is the site's, not the page's: menus, search, footer."""
    hidden = UNSHOWN_CLASS_RE.search(node.attrs.get("class", "")) is not None
    return hidden or node.attrs.get("role") in _DROP_ROLES


def _collapsed(parts: list[str]) -> str:
    """Text read in pieces as one line: unprinted characters out, runs of spaces one space."""
    return " ".join("".join(parts).translate(UNPRINTED).split())


def _heading_node_text(node: Node) -> str:
    """A heading's text without its permalink: Docusaurus' "#" (class hash-link), Sphinx's and MkDocs' "¶"."""
    clone = Node(node.tag, node.attrs)
    clone.children = [c for c in node.children if not (isinstance(c, Node) and _is_permalink(c))]
    return clone.text()


def _is_permalink(node: Node) -> bool:
    """Whether ``node`` is a link to its own place, shown as a mark ("#", "\u00b6", an icon) or nothing.

    Headings and definitions carry one (Docusaurus' ``hash-link``, Sphinx's ``headerlink``).
    """
    classes = node.attrs.get("class", "").split()
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
        #: The lists being read, innermost last: each its next item's number, None for bullets; and
        #: the width of each one's current marker, which its nested lists are indented by.
        self.lists: list[int | None] = []
        self.widths: list[int] = []
        #: The rows of each table being read (tables nest), each row its cells' text, and its element.
        self.tables: list[list[list[str]]] = []
        self.table_nodes: list[Node] = []
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
        #: How many lists were open when the definition opened: a list inside it is its text.
        self.term_depth = 0

    def walk(self, node: Node) -> None:
        # An explicit stack, not recursion: deeply nested markup must not hit the recursion limit.
        stack: list[tuple[Node | str, bool]] = [(node, False)]
        while stack:
            item, leaving = stack.pop()
            if isinstance(item, str):
                self.inline.append(item)
                continue
            tag = item.tag
            if leaving:
                self._leave(item)
                continue
            if tag in DROP or (tag == "header" and not self.keep_header) or _unshown(item):
                continue
            if tag in _HEADING_LEVELS and not self.tables:
                self.end_block()
                self._flush_prefix()
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

    def _enter(self, node: Node) -> None:
        tag = node.tag
        if tag == "a" and _LINK_TARGET_RE.match(node.attrs.get("href", "")):
            self.links.append((len(self.inline), self.lines_ended))
            return
        if tag == "table" and self.tables:
            self.nested += 1  # a table inside a cell is read as that cell's text
        elif tag == "table" and _is_data_table(node):
            self.end_block()
            self._flush_prefix()
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
            marker = self._marker()
            self.prefix = " " * sum(self.widths[:-1]) + marker
            if self.widths:
                self.widths[-1] = len(marker)
        elif tag == "tr":
            self.end_line()
        elif tag in ("td", "th") and self.inline and "".join(self.inline).strip():
            self.inline.append(" | ")
        if tag in ("ul", "ol"):
            start = node.attrs.get("start", "1").strip()
            self.lists.append((int(start) if start.isdigit() else 1) if tag == "ol" else None)
            self.widths.append(2)

    def _marker(self) -> str:
        """The marker of the next item of the innermost list: "- ", or its number ("3. ")."""
        number = self.lists[-1] if self.lists else None
        if number is None:
            return "- "
        self.lists[-1] = number + 1
        return f"{number}. "

    def _leave(self, node: Node) -> None:
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
                self.widths.pop()
            if self.lists:
                return
        if tag == "dt":
            text, self.inline = _collapsed(self.inline), []
            if self.terms:
                self.terms[-1] = text
        elif tag in _ITEM_PARAGRAPHS and self.lists:
            self.end_line()
        elif tag in _HTML_BLOCKS:
            self.end_block()
            if tag in ("dd", "dl"):
                self._close_definition()
        elif tag in _HTML_LINES:
            self.end_line()

    def _note_title(self, node: Node) -> None:
        """A note's title ("Warning") opens its text's first line, as a note is read in Markdown."""
        self.end_block()
        self._flush_prefix()
        title = node.text().rstrip(":").strip()
        title = title.capitalize() if title.islower() else title  # Docusaurus' "note", shown in capitals
        self.term_prefix = f"{title}: " if title else ""

    def _open_definition(self) -> None:
        """The terms over a definition start its first line: ``**-f, --force**: Usually, ...``."""
        joined = ", ".join(term for term in self.terms if term).rstrip(":").rstrip()
        self.terms = []
        if joined:
            self._flush_prefix()  # a definition opening with a definition list: its term stays
            self.term_prefix = f"{joined}: " if "*" in joined else f"**{joined}**: "
            self.term_depth = len(self.lists)

    def _close_definition(self) -> None:
        """Terms no text followed (an empty definition, the list's end) stand as a paragraph."""
        self._open_definition()
        self._flush_prefix()

    def _flush_prefix(self, *, lead_in: bool = False) -> None:
        """A term or note title no text took stands as a paragraph (before a heading, a table, another).

        ``lead_in``: it introduces the code that follows, and keeps its colon.
        """
        if self.term_prefix:
            prefix = self.term_prefix.rstrip()
            self.builder.block(prefix if lead_in else prefix.rstrip(":"))
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
        text, self.inline = _collapsed(self.inline), []
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

    def _code_block(self, node: Node) -> None:
        self.end_block()
        self._flush_prefix(lead_in=True)  # a definition that is code: its term introduces it
        parts: list[str] = []
        stack: list[Node | str] = [node]
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
        code = "".join(parts).translate(ZERO_WIDTH).strip("\n")
        if code.strip():
            self.builder.block(fenced(code, language))

    def end_line(self) -> None:
        self.lines_ended += 1
        line = _collapsed(self.inline)
        # Asciidoctor writes "git fetch" as <code>git</code> <code>fetch</code>: one name, one span.
        line = _ADJACENT_CODE_RE.sub(" ", line) if "` `" in line else line
        line = _GLUED_CODE_RE.sub(r"`\1\2\3`", line) if line.count("`") >= 4 else line
        self.inline = []
        if not line.strip(" |"):
            return  # an item's marker waits for its text (<li><p>...)
        prefix, self.prefix = self.prefix, ""
        if self.term_prefix and prefix and len(self.lists) > self.term_depth:
            self.lines.append(self.term_prefix.rstrip())  # a definition that is a list: its lead-in
        elif self.term_prefix:
            prefix += self.term_prefix
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
