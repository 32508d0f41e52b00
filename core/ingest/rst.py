"""reStructuredText (``.rst``, Sphinx docs) -> sections, read with docutils.

Section titles form the heading path, literal blocks and ``code-block`` become fenced
code (language kept), lists, tables, definitions and notes keep their shape, and Sphinx's
roles read as the text they show (``core.ingest.sphinx``). Read as plain text, a Sphinx
page had no headings for ranking to use and no code blocks for an answer to quote whole.

Nothing outside the file is read: ``include`` and ``raw`` are off, and docutils' config
files (``docutils.conf`` in the docs folder or the home folder) are ignored, since they
could turn them back on or send warnings to a file. Nothing is printed either.
"""

from __future__ import annotations

import ast
import io
import re
import textwrap

from docutils import nodes
from docutils.core import publish_doctree

from core.ingest.document import Section, SectionBuilder, fenced, starts_block
from core.ingest.sphinx import register
from core.ingest.sphinx_markup import LITERAL_ROLES, role_shown, shown_text
from core.ingest.text import parse_plain_text

_SETTINGS = {
    "_disable_config": True,  # a docs repo's docutils.conf must not re-enable file insertion
    "report_level": 5,  # nothing reported: an unknown directive is read only for its Python or prose
    "halt_level": 5,  # never stop on a markup error; the rest of the page still counts
    "file_insertion_enabled": False,  # ``.. include:: /etc/passwd`` must not read the file
    "raw_enabled": False,
    "syntax_highlight": "none",
    "input_encoding": "unicode",
    # docutils refuses lines over 10,000 characters, and with them the whole page; no line of
    # a file ragbot reads (16 MB at most) is longer than this.
    "line_length_limit": 1 << 24,
}
_LISTS = (nodes.bullet_list, nodes.enumerated_list, nodes.definition_list, nodes.field_list,
          nodes.option_list)
_CODE = (nodes.literal_block, nodes.doctest_block, nodes.math_block)
#: Left out of the text: targets, comments, substitution definitions (all Invisible), errors,
#: raw markup, images, metadata, and footnotes (supplementary; their "[1]" would read as a citation).
_SKIPPED = (nodes.Invisible, nodes.system_message, nodes.raw, nodes.image, nodes.docinfo,
            nodes.footnote, nodes.citation)
_ROLE_RE = re.compile(r"^:(?P<name>[\w:+.-]+):`(?P<text>.*)`$", re.DOTALL)
_SUBSTITUTION_RE = re.compile(r"^\|[^|]+\|_{0,2}$")

register()


def parse_rst(text: str) -> tuple[str | None, list[Section]]:
    """Parse a reStructuredText page into its title and sections.

    Returns:
        (the page title: its lone top-level section title, else None; the sections). A page
        docutils cannot parse is read as plain text rather than lost.
    """
    try:
        document = publish_doctree(text, settings_overrides={**_SETTINGS, "warning_stream": io.StringIO()})
        renderer = _RstRenderer()
        title = renderer.render(document)
    # docutils raises assorted errors on malformed input (and RecursionError on deep nesting);
    # the page is still text worth searching.
    except Exception:
        return None, parse_plain_text(text)
    return title, renderer.builder.finish()


class _RstRenderer:
    """Walks a docutils tree into ``SectionBuilder`` blocks."""

    def __init__(self) -> None:
        self.builder = SectionBuilder()

    def render(self, document: nodes.document) -> str | None:
        """Render the whole page; returns the page title (docutils promotes a lone top title)."""
        first = document.children[0] if document.children else None
        title = _inline(first) if isinstance(first, nodes.title) else None
        if title:
            self.builder.heading(1, title)
        self.children(document, level=2 if title else 1)
        return title or None

    def children(self, node: nodes.Element, *, level: int) -> None:
        """Render each child of ``node`` under headings of ``level``."""
        for child in node.children:
            self.visit(child, level=level)

    def visit(self, node: nodes.Node, *, level: int) -> None:
        """Render one node: a section opens a heading, a block becomes a block, the rest recurses."""
        if isinstance(node, nodes.section):
            self.builder.heading(level, _inline(node[0]) if node.children else "")
            self.children(node, level=level + 1)
        elif isinstance(node, nodes.subtitle):
            self.builder.heading(level, _inline(node))
        elif isinstance(node, nodes.system_message):
            if code := _extension_example(node) or _malformed_table(node):
                self.builder.block(code)
            elif entry := _extension_entry(node):
                self._entry(*entry, level=level)
        elif _generated_contents(node):
            return  # ``.. contents::``: the page's own headings again, as a list that answers nothing
        elif isinstance(node, _SKIPPED) or (isinstance(node, nodes.title)
                                            and isinstance(node.parent, (nodes.section, nodes.document))):
            return
        elif isinstance(node, (nodes.paragraph, nodes.rubric, nodes.caption, nodes.title)):
            self.builder.block(_inline(node))  # a title here names a topic, sidebar or table
        elif isinstance(node, nodes.line_block):
            self.builder.block("\n".join(_inline(line) for line in node.findall(nodes.line)))
        elif isinstance(node, _CODE):
            self.builder.block(_fence(node))
        elif isinstance(node, _LISTS):
            self.builder.block("\n".join(_list_lines(node)))
        elif isinstance(node, nodes.table):
            for title in (child for child in node.children if isinstance(child, nodes.title)):
                self.builder.block(_inline(title))
            self.builder.block(_table(node))
        elif isinstance(node, nodes.Admonition):
            self._admonition(node, level=level)
        elif isinstance(node, nodes.Element):
            self.children(node, level=level)  # block quotes, containers, topics, figures

    def _admonition(self, node: nodes.Element, *, level: int) -> None:
        """A note as "Note: its first paragraph", then its other blocks."""
        body = [child for child in node.children if not isinstance(child, nodes.title)]
        title = _admonition_title(node)
        if body and isinstance(body[0], nodes.paragraph) and title:
            self.builder.block(f"{title}: {_inline(body[0])}")
            body = body[1:]
        elif title and body:  # an empty note says nothing
            self.builder.block(f"{title}:")
        for child in body:
            self.visit(child, level=level)

    def _entry(self, lead: str, body: nodes.document, *, level: int) -> None:
        """An extension's entry: its lead line, then its body's blocks."""
        if lead:
            self.builder.block(lead)
        self.children(body, level=level)


def _said(node: nodes.system_message) -> str:
    """What docutils says of the markup it could not read ("Unknown directive type ...")."""
    return node.children[0].astext() if node.children else ""


def _written(node: nodes.system_message) -> str:
    """The markup docutils could not read, as the page writes it ("": none kept)."""
    return next((child.astext() for child in node.children if isinstance(child, nodes.literal_block)), "")


#: An extension's example longer than this is not parsed to tell whether it is code.
_EXAMPLE_CHARS = 20_000
_OPTION_LINE_RE = re.compile(r"^[ \t]+:[\w-]+:")
#: Statements that make a body code rather than a word or two ("Note", "Hello").
_CODE_STATEMENTS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom,
                    ast.Assign, ast.AugAssign, ast.AnnAssign, ast.With, ast.For, ast.If, ast.Try)


def _generated_contents(node: nodes.Node) -> bool:
    """Whether ``node`` is the table of contents ``.. contents::`` generates: links to the page's sections.

    A ``.. topic::`` an author writes with ``:class: contents`` holds prose of its own, and is read.
    """
    if not isinstance(node, nodes.topic) or "contents" not in node.get("classes", ()):
        return False
    entries = list(node.findall(nodes.paragraph))
    return bool(entries) and all(len(p.children) == 1 and isinstance(p[0], nodes.reference)
                                 and bool(p[0].get("refid")) for p in entries)


def _extension_example(node: nodes.system_message) -> str:
    """The Python an unknown directive holds, fenced ("": none, or not Python).

    Sphinx extensions show their examples in directives docutils does not know
    (``.. click:example::`` and its indented code); dropped with the other unknown
    directives, a page lost every example it gives. Other unknown directives are read when they
    write prose (``_extension_entry``), else dropped.
    """
    source = _written(node)
    lines = source.split("\n")
    if not lines or not lines[0].startswith(".. ") or len(source) > _EXAMPLE_CHARS:
        return ""
    body = textwrap.dedent("\n".join(line for line in lines[1:] if not _OPTION_LINE_RE.match(line))).strip()
    return fenced(body, "python") if body and _is_python(body) else ""


_DIRECTIVE_HEAD_RE = re.compile(r"^\.\.[ \t]+(?P<name>[\w:+.-]+)::[ \t]*(?P<argument>.*)$")
_OPTION_RE = re.compile(r"^:(?P<key>[\w-]+):(?:[ \t]+(?P<value>.*))?$")
_WORD_RE = re.compile(r"[^\W\d_][\w'-]*")
#: A sentence ends in a stop, maybe inside a bracket or quotes.
_STOP_RE = re.compile(r"[.!?:][)\"']?$")
#: A sentence of a body has at least this many words ("Name of the environment used to ...").
_SENTENCE_WORDS = 5


def _is_sentence(text: str) -> bool:
    """Whether ``text`` reads as a sentence: enough words, ending in a stop (a diagram's source does not)."""
    return _STOP_RE.search(text) is not None and len(_WORD_RE.findall(text)) >= _SENTENCE_WORDS


def _extension_entry(node: nodes.system_message) -> tuple[str, nodes.document] | None:
    """What an unknown directive writing prose shows: a lead line naming it, and its body parsed.

    A project's own directive documents its settings (``.. conf::`` with ``:keys: pass_env``,
    ``:default:`` and a paragraph saying what it does); dropped with the other unknown
    directives, a page lost every entry it gives. The lead is its name and argument
    (``http:get /users/{id}``), else its first option's value, in backticks, then its other
    options ("default: 0.3"). A body with no sentence (a diagram's source, a word list) stays
    out, and so does a directive docutils knows but refused (``raw`` is off).
    """
    message = _said(node)
    source = _written(node)
    lines = source.split("\n")
    head = _DIRECTIVE_HEAD_RE.match(lines[0]) if len(source) <= _EXAMPLE_CHARS else None
    # Only a directive docutils does not know: a known one in error (``raw``, which is off) stays out.
    if head is None or not message.startswith("Unknown directive type"):
        return None
    rest = textwrap.dedent("\n".join(lines[1:])).split("\n")
    options: list[tuple[str, str]] = []
    while rest and (option := _OPTION_RE.match(rest[0])):
        rest.pop(0)
        value = [option["value"] or ""]
        while rest and rest[0][:1] in (" ", "\t") and rest[0].strip():  # a value going on indented
            value.append(rest.pop(0))
        options.append((option["key"], _as_shown(" ".join(" ".join(value).split()))))
    body = publish_doctree("\n".join(rest), settings_overrides={**_SETTINGS, "warning_stream": io.StringIO()})
    # docutils' own messages (about a directive inside) are no sentence of the page.
    messages = {id(p) for message in body.findall(nodes.system_message)
                for p in message.findall(nodes.paragraph)}
    if not any(_is_sentence(" ".join(p.astext().split())) for p in body.findall(nodes.paragraph)
               if id(p) not in messages):
        return None
    # ".. http:get:: /users/{id}": the directive names what its argument is.
    argument = _as_shown(head["argument"].strip())
    name = f"{head['name']} {argument}" if argument else options.pop(0)[1] if options else ""
    details = "; ".join(f"{re.sub('[_-]', ' ', key)}: {value}" for key, value in options if value)
    lead = " - ".join(part for part in (f"`{name}`" if name else "", details) if part)
    return lead, body


#: An inline role or literal as written in a table docutils could not read: ``x`` and :role:`x`.
_WRITTEN_MARKUP_RE = re.compile(r"``(?P<literal>[^`\n]+)``"
                                r"|(?<![\w:+.-]):(?P<name>[\w+.-]++(?::[\w+.-]++)*+):`(?P<role>[^`\n]+)`")


def _malformed_table(node: nodes.system_message) -> str:
    """A table docutils refused ("Malformed table."), as the text it is written as, fenced ("": none).

    One cell wider than its column makes docutils drop the whole table; a page's table of old
    and new setting names went with it. Its lines stay as written, a literal or a role shown as
    the text it shows (the columns after it shift).
    """
    message = _said(node)
    source = _written(node)
    if not message.startswith("Malformed table") or not source.strip():
        return ""
    return fenced(_as_shown(source).strip("\n"), "text")


def _as_shown(text: str) -> str:
    """``text`` with its literals and roles as written (````x````, ``:role:`x```) as the text they show."""
    return _WRITTEN_MARKUP_RE.sub(lambda m: m["literal"] or (
        m["role"] if m["name"].split(":")[-1] in LITERAL_ROLES else role_shown(m["name"], m["role"])), text)


def _is_python(text: str) -> bool:
    """Whether ``text`` parses as Python and does something (a call, a definition, an assignment)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return any(isinstance(statement, _CODE_STATEMENTS)
               or (isinstance(statement, ast.Expr) and isinstance(statement.value, (ast.Call, ast.Await)))
               for statement in tree.body)


def _admonition_title(node: nodes.Element) -> str:
    """"Note", "Warning", or the title a generic ``admonition`` (or Sphinx tab) gives itself."""
    titled = next((_inline(child) for child in node.children if isinstance(child, nodes.title)), "")
    return titled or ("" if node.tagname == "admonition" else node.tagname.capitalize())


def _inline(node: nodes.Node, *, bold: bool = True) -> str:
    """A text element's content as Markdown: code in backticks, emphasis kept, links as links.

    ``bold=False`` leaves strong text plain: a term bold already ("**run** (*or* **r**)") is set
    in bold as a whole, and "****run**" reads as nothing.
    """
    if isinstance(node, nodes.Text):
        return node.astext()  # astext: backslash escapes resolved (str() keeps docutils' NULs)
    if isinstance(node, nodes.literal):
        return f"`{node.astext()}`"
    if isinstance(node, (nodes.footnote_reference, nodes.citation_reference, nodes.system_message,
                         nodes.image, nodes.raw)):
        return ""
    if isinstance(node, nodes.problematic):  # an unknown role or substitution: its text, no markup
        raw = node.astext()
        match = _ROLE_RE.match(raw)
        return shown_text(match["text"]) if match else ("" if _SUBSTITUTION_RE.match(raw) else raw)
    children = node.children if isinstance(node, nodes.Element) else []
    inner = "".join(_inline(child, bold=bold) for child in children)
    if isinstance(node, nodes.strong) and bold:
        return f"**{inner}**"
    if isinstance(node, (nodes.emphasis, nodes.title_reference)):
        return f"*{inner}*"
    uri = node.get("refuri", "") if isinstance(node, nodes.reference) else ""
    if uri.startswith(("http://", "https://")) and uri != inner:
        return f"[{inner}]({uri})"
    if isinstance(node, nodes.paragraph):
        return re.sub(r"(?<=\S) {2,}(?=\S)", " ", inner)  # where a footnote reference was
    return inner


def _fence(node: nodes.Element) -> str:
    classes = [c for c in node.get("classes", []) if c != "code"]
    language = "pycon" if isinstance(node, nodes.doctest_block) else (classes[0] if classes else "")
    if isinstance(node, nodes.math_block):
        language = "math"
    return fenced(node.astext().rstrip("\n"), language)


def _list_lines(node: nodes.Element, indent: str = "") -> list[str]:
    """A list (bullet, numbered, definitions, fields, options) as Markdown list lines."""
    lines: list[str] = []
    for number, item in enumerate(node.children, start=node.get("start", 1)):
        marker = f"{number}. " if isinstance(node, nodes.enumerated_list) else "- "
        head, rest = _item_parts(item)
        if not head and rest and isinstance(rest[0], nodes.definition_list) and len(rest[0].children) == 1:
            # "- text, for example:" over an indented block is an item holding one definition:
            # its term is the item's text (as written, not bold), not a line under an empty marker.
            definition = rest[0].children[0]
            head = " ".join(_term(definition).split())
            rest = [*definition.children[-1].children, *rest[1:]]
        lines.append(f"{indent}{marker}{head}".rstrip())
        for child in rest:
            lines.extend(_nested_lines(child, indent + "  "))
    return lines


def _nested_lines(node: nodes.Node, indent: str) -> list[str]:
    """The lines of a block inside a list item, indented under it."""
    if isinstance(node, _SKIPPED):
        return []
    if isinstance(node, _LISTS):
        return _list_lines(node, indent)
    if isinstance(node, _CODE):
        return [f"{indent}{line}" if line else "" for line in _fence(node).split("\n")]
    if isinstance(node, (nodes.paragraph, nodes.title, nodes.rubric)):
        return [f"{indent}{' '.join(_inline(node).split())}"]
    if isinstance(node, nodes.Admonition):
        title = _admonition_title(node)
        body = [child for child in node.children if not isinstance(child, nodes.title)]
        lines = [line for child in body for line in _nested_lines(child, indent)]
        if title and lines and starts_block(lines[0].lstrip()):
            lines.insert(0, f"{indent}{title}:")  # code or a list opens its own line ("TOML:" over its code)
        elif title and lines:
            lines[0] = f"{indent}{title}: {lines[0].lstrip()}"
        return lines
    if isinstance(node, nodes.Element) and node.children:  # block quotes, containers, tables
        return [line for child in node.children for line in _nested_lines(child, indent)]
    return [f"{indent}{' '.join(node.astext().split())}"] if node.astext().strip() else []


def _item_parts(item: nodes.Node) -> tuple[str, list[nodes.Node]]:
    """An item's first line (a term and its first paragraph) and the blocks after it."""
    if not isinstance(item, nodes.Element):
        return item.astext(), []
    if isinstance(item, (nodes.definition_list_item, nodes.field, nodes.option_list_item)):
        term = _term(item)
        body = list(item.children[-1].children)
        first = _inline(body.pop(0)) if body and isinstance(body[0], nodes.paragraph) else ""
        # "``response``:" written as a term: the colon put between it and its text is one colon.
        head = f"**{term.rstrip(':').rstrip()}**: {first}" if first else f"**{term}**"
        return " ".join(head.split()), body
    body = list(item.children)
    first = _inline(body.pop(0)) if body and isinstance(body[0], nodes.paragraph) else ""
    return " ".join(first.split()), body


def _term(item: nodes.Element) -> str:
    """What a definition, field or option item defines: ``-o FILE, --output=FILE`` for options."""
    if isinstance(item, nodes.option_list_item):
        options = item.children[0].children  # the option group
        # An option argument's text starts with its delimiter ("=FILE", " FILE").
        return ", ".join(option.astext() for option in options)
    return " ".join(_inline(c, bold=False) for c in item.children[:-1]
                    if not isinstance(c, nodes.classifier)).strip()


def _table(node: nodes.Element) -> str:
    """A grid or simple table as a Markdown table (header row first when it has one)."""
    rows: list[list[str]] = []
    header_rows = 0
    for part in node.findall(lambda n: isinstance(n, (nodes.thead, nodes.tbody))):
        for row in part.findall(nodes.row):
            rows.append([_cell(entry) for entry in row.children])
            header_rows += isinstance(part, nodes.thead)
    if not rows:
        return ""
    width = max(len(r) for r in rows)
    if not header_rows:  # Markdown's first row is a header: a table without one gets an empty one
        rows.insert(0, [""] * width)
        header_rows = 1
    lines = [f"| {' | '.join(r + [''] * (width - len(r)))} |" for r in rows]
    lines.insert(header_rows, f"|{'---|' * width}")
    return "\n".join(lines)


def _cell(entry: nodes.Element) -> str:
    """A table cell on one line: its paragraphs, a list's items joined by "; "."""
    # An unknown role's error message sits in its cell, or in a list or note in it: never its text.
    for message in list(entry.findall(nodes.system_message)):
        message.parent.remove(message)
    parts = [_inline(c) if isinstance(c, nodes.paragraph)
             else "; ".join(i.astext() for i in c.children) if isinstance(c, _LISTS) else c.astext()
             for c in entry.children]
    return " ".join(" ".join(parts).replace("|", "\\|").split())
