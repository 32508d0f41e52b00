"""reStructuredText (``.rst``, Sphinx docs) -> sections, read with docutils.

Section titles form the heading path, literal blocks and ``code-block`` become fenced
code (language kept), lists, tables, definitions and admonitions keep their shape, and
Sphinx's roles (``:func:`connect```, ``:ref:`the guide <guide>```) read as the text they
show. Read as plain text, a Sphinx page had no headings for ranking to use and no code
blocks for an answer to quote whole.

Nothing outside the file is read: ``include``, ``literalinclude`` and ``raw`` are off.
Sphinx directives docutils does not know are registered here: those that hold prose
(``versionadded``, ``seealso``, ``function``, tabs) keep it, the rest (``toctree``,
``autofunction``) are left out, and anything else unknown is dropped, never quoted raw.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from typing import Any

from docutils import nodes
from docutils.core import publish_doctree
from docutils.parsers.rst import Directive, directives, roles
from docutils.parsers.rst.directives.body import CodeBlock

from core.ingest.document import Section, SectionBuilder
from core.ingest.text import parse_plain_text

_SETTINGS = {
    "report_level": 5,  # nothing printed: an unknown directive is dropped, not reported
    "halt_level": 5,  # never stop on a markup error; the rest of the page still counts
    "file_insertion_enabled": False,  # ``.. include:: /etc/passwd`` must not read the file
    "raw_enabled": False,
    "syntax_highlight": "none",
    "input_encoding": "unicode",
}
#: Sphinx roles that name code (shown as ``code``); other unknown roles show their text.
_CODE_ROLES = frozenset(
    "func meth class mod attr data const exc obj envvar option command program file samp kbd "
    "makevar type member macro var struct enum enumerator function expr".split()
)
_TEXT_ROLES = frozenset(
    "ref doc term abbr any numref download guilabel menuselection dfn keyword token".split()
)
_DOMAINS = ("py", "c", "cpp", "js", "std", "rst")
#: Sphinx's version notes: the words put before the version and the note that follows it.
_VERSION_DIRECTIVES = {
    "versionadded": "New in version",
    "versionchanged": "Changed in version",
    "versionremoved": "Removed in version",
    "deprecated": "Deprecated since version",
}
#: Sphinx directives whose content is prose, read as a titled note; None titles it with the
#: directive's argument (a tab's name), "" leaves it untitled.
_PROSE_DIRECTIVES: dict[str, str | None] = {
    "seealso": "See also", "todo": "To do", "glossary": "", "only": "", "hlist": "", "tabs": "",
    "tab-set": "", "tab": None, "group-tab": None, "tab-item": None, "dropdown": None, "card": None,
}
#: Object descriptions: the signature is quoted as code before its description.
_OBJECT_DIRECTIVES = frozenset(
    "function class method attribute data exception decorator describe object option envvar "
    "confval module staticmethod classmethod property".split()
)
#: Sphinx directives that hold no prose of the page (generated or navigation).
_SKIPPED_DIRECTIVES = frozenset(
    "toctree literalinclude index highlight currentmodule autosummary automodule autoclass "
    "autofunction automethod autoattribute autodata autoexception autoproperty tabularcolumns "
    "sectionauthor moduleauthor codeauthor spelling:word-list graphviz digraph plot mermaid "
    "jupyter-execute ipython".split()
)
_ROLE_RE = re.compile(r"^:(?P<name>[\w:+.-]+):`(?P<text>.*)`$", re.DOTALL)
_TARGET_RE = re.compile(r"^(?P<title>.*?)\s*<[^<>]+>$", re.DOTALL)


class _AnyOptions(dict[str, Callable[[str], Any]]):
    """Accepts every option name: Sphinx and its extensions add options docutils does not know."""

    def __missing__(self, key: str) -> Callable[[str], Any]:
        return directives.unchanged


class _SphinxCodeBlock(CodeBlock):
    """``code-block`` with Sphinx's options (``:caption:``, ``:linenos:``) accepted."""

    option_spec = _AnyOptions(CodeBlock.option_spec)


class _Skipped(Directive):
    has_content = True
    optional_arguments = 1
    final_argument_whitespace = True
    option_spec = _AnyOptions(name=directives.unchanged)

    def run(self) -> list[nodes.Node]:
        return []


class _Prose(Directive):
    """A directive whose content is read as RST, after a lead line made from its argument."""

    has_content = True
    optional_arguments = 1
    final_argument_whitespace = True
    option_spec = _AnyOptions(name=directives.unchanged)

    def run(self) -> list[nodes.Node]:
        box = self._box(" ".join(self.arguments).strip())
        self.state.nested_parse(self.content, self.content_offset, box)
        return [box]

    def _box(self, argument: str) -> nodes.Element:
        """The node the content goes in, holding the lead its directive puts first."""
        if self.name in _VERSION_DIRECTIVES:
            # Sphinx reads the words after the version (same line or next) as the note itself.
            version, _, note = argument.replace("\n", " ").partition(" ")
            words = f"{_VERSION_DIRECTIVES[self.name]} {version}"
            lead = nodes.paragraph("", f"{words}: " if note else f"{words}.")
            if note:
                lead += self.state.inline_text(note, self.lineno)[0]
            return nodes.container("", lead)
        if self.name in _PROSE_DIRECTIVES:
            title = _PROSE_DIRECTIVES[self.name]
            title = argument if title is None else title
            return nodes.admonition("", nodes.title("", title)) if title else nodes.container()
        if argument:  # an object description: its signature, quoted as code, then what it does
            return nodes.container("", nodes.paragraph("", "", nodes.literal(text=argument)))
        return nodes.container()


def shown_text(role_text: str) -> str:
    """What a role shows: ``title <target>`` -> title, ``~a.b.c`` -> c, ``!x`` -> x."""
    if (match := _TARGET_RE.match(role_text)) and match["title"]:
        return match["title"]
    text = role_text.lstrip("!")
    if text.startswith("~"):
        text = text[1:].rsplit(".", 1)[-1]
    return text


def _role(*, code: bool) -> Callable[..., tuple[list[nodes.Node], list[nodes.Node]]]:
    def role(name: str, rawtext: str, text: str, lineno: int, inliner: Any,
             options: Any = None, content: Any = None) -> tuple[list[nodes.Node], list[nodes.Node]]:
        shown = shown_text(nodes.unescape(text))
        return [nodes.literal(rawtext, shown) if code else nodes.Text(shown)], []

    return role


def _register() -> None:
    """Teach docutils the Sphinx names (its registries are global; done once, on import)."""
    for names, code in ((_CODE_ROLES, True), (_TEXT_ROLES, False)):
        for name in names:
            for full in (name, *(f"{domain}:{name}" for domain in _DOMAINS)):
                roles.register_local_role(full, _role(code=code))
    for name in ("code-block", "sourcecode"):
        directives.register_directive(name, _SphinxCodeBlock)
    for name in _SKIPPED_DIRECTIVES:
        directives.register_directive(name, _Skipped)
    for name in (*_VERSION_DIRECTIVES, *_PROSE_DIRECTIVES, *_OBJECT_DIRECTIVES):
        directives.register_directive(name, _Prose)
    for name in _OBJECT_DIRECTIVES:
        for domain in _DOMAINS:
            directives.register_directive(f"{domain}:{name}", _Prose)


_register()


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
        for child in node.children:
            self.visit(child, level=level)

    def visit(self, node: nodes.Node, *, level: int) -> None:
        if isinstance(node, nodes.section):
            self.builder.heading(level, _inline(node[0]) if node.children else "")
            self.children(node, level=level + 1)
        elif isinstance(node, nodes.subtitle):
            self.builder.heading(level, _inline(node))
        elif isinstance(node, (nodes.Invisible, nodes.title, nodes.system_message, nodes.raw,
                               nodes.image, nodes.docinfo, nodes.footnote, nodes.citation)):
            return
        elif isinstance(node, (nodes.paragraph, nodes.rubric, nodes.line_block)):
            self.builder.block(_inline(node) if not isinstance(node, nodes.line_block) else node.astext())
        elif isinstance(node, (nodes.literal_block, nodes.doctest_block)):
            self.builder.block(_fenced(node))
        elif isinstance(node, (nodes.bullet_list, nodes.enumerated_list, nodes.definition_list,
                               nodes.field_list, nodes.option_list)):
            self.builder.block("\n".join(_list_lines(node)))
        elif isinstance(node, nodes.table):
            self.builder.block(_table(node))
        elif isinstance(node, nodes.Admonition):
            self._admonition(node, level=level)
        elif isinstance(node, nodes.Element):
            self.children(node, level=level)  # block quotes, containers, topics, compound

    def _admonition(self, node: nodes.Element, *, level: int) -> None:
        label = node.tagname.capitalize() if node.tagname != "admonition" else ""
        body = [child for child in node.children if not isinstance(child, nodes.title)]
        title = next((_inline(child) for child in node.children if isinstance(child, nodes.title)), label)
        if body and isinstance(body[0], nodes.paragraph) and title:
            self.builder.block(f"{title}: {_inline(body[0])}")
            body = body[1:]
        elif title:
            self.builder.block(f"{title}:")
        for child in body:
            self.visit(child, level=level)


def _inline(node: nodes.Node) -> str:
    """A text element's content as Markdown: code in backticks, emphasis kept, links as links."""
    if isinstance(node, nodes.Text):
        return str(node)
    if isinstance(node, nodes.literal):
        return f"`{node.astext()}`"
    if isinstance(node, (nodes.footnote_reference, nodes.citation_reference, nodes.system_message,
                         nodes.image, nodes.raw)):
        return ""
    if isinstance(node, nodes.problematic):  # an unknown role: show its text, not its markup
        match = _ROLE_RE.match(node.astext())
        return shown_text(match["text"]) if match else node.astext()
    inner = "".join(_inline(child) for child in node.children) if isinstance(node, nodes.Element) else ""
    if isinstance(node, nodes.strong):
        return f"**{inner}**"
    if isinstance(node, (nodes.emphasis, nodes.title_reference)):
        return f"*{inner}*"
    uri = node.get("refuri", "") if isinstance(node, nodes.reference) else ""
    if uri.startswith(("http://", "https://")) and uri != inner:
        return f"[{inner}]({uri})"
    return inner


def _fenced(node: nodes.Element) -> str:
    classes = [c for c in node.get("classes", []) if c != "code"]
    language = "pycon" if isinstance(node, nodes.doctest_block) else (classes[0] if classes else "")
    code = node.astext().rstrip("\n")
    fence = "````" if "```" in code else "```"
    return f"{fence}{language}\n{code}\n{fence}"


def _list_lines(node: nodes.Element, indent: str = "") -> list[str]:
    """A list (bullet, numbered, definitions, fields, options) as Markdown list lines."""
    lines: list[str] = []
    for number, item in enumerate(node.children, start=node.get("start", 1)):
        marker = f"{number}. " if isinstance(node, nodes.enumerated_list) else "- "
        head, rest = _item_parts(item)
        lines.append(f"{indent}{marker}{head}".rstrip())
        for child in rest:
            if isinstance(child, (nodes.bullet_list, nodes.enumerated_list, nodes.definition_list,
                                  nodes.field_list, nodes.option_list)):
                lines.extend(_list_lines(child, indent + "  "))
            elif isinstance(child, (nodes.literal_block, nodes.doctest_block)):
                lines.extend(f"{indent}  {line}" if line else "" for line in _fenced(child).split("\n"))
            elif text := _inline(child) if isinstance(child, nodes.paragraph) else child.astext():
                lines.append(f"{indent}  {' '.join(text.split())}")
    return lines


def _item_parts(item: nodes.Node) -> tuple[str, list[nodes.Node]]:
    """An item's first line (a term and its first paragraph) and the blocks after it."""
    if not isinstance(item, nodes.Element):
        return str(item), []
    if isinstance(item, (nodes.definition_list_item, nodes.field, nodes.option_list_item)):
        term = " ".join(_inline(c) for c in item.children[:-1] if not isinstance(c, nodes.classifier))
        body = list(item.children[-1].children)
        first = _inline(body.pop(0)) if body and isinstance(body[0], nodes.paragraph) else ""
        head = f"**{term.strip()}**: {first}" if first else f"**{term.strip()}**"
        return " ".join(head.split()), body
    body = list(item.children)
    first = _inline(body.pop(0)) if body and isinstance(body[0], nodes.paragraph) else ""
    return " ".join(first.split()), body


def _table(node: nodes.Element) -> str:
    """A grid or simple table as a Markdown table (header row first when it has one)."""
    rows: list[list[str]] = []
    header_rows = 0
    for part in node.findall(lambda n: isinstance(n, (nodes.thead, nodes.tbody))):
        for row in part.findall(nodes.row):
            cells = [" ".join(_inline(p) for p in entry.children) for entry in row.children]
            rows.append([" ".join(cell.replace("|", "\\|").split()) for cell in cells])
            header_rows += isinstance(part, nodes.thead)
    if not rows:
        return ""
    width = max(len(r) for r in rows)
    lines = [f"| {' | '.join(r + [''] * (width - len(r)))} |" for r in rows]
    lines.insert(max(header_rows, 1), f"|{'---|' * width}")
    return "\n".join(lines)
