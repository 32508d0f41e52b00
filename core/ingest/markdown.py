"""Markdown and MDX: front-matter-free text -> sections, with MDX/HTML syntax removed.

What is dropped on purpose, outside code fences only: MDX ``import``/``export``
lines, JSX and HTML tags (their inner text is kept), HTML and MDX comments,
Docusaurus ``:::tip`` and MkDocs ``/// tip`` admonition markers (their titles and
inner text are kept), attribute lists (``{ #anchor }`` after a heading, ``{ width="300" }`` after
an image), thematic breaks, sections kept out of the site's search (``{ data-search-exclude }``,
its own blocks), and the lines of MkDocs' ``{* file *}`` and
mdBook's ``{{#include file}}`` that include a file (it is not there to read; a code block of them
is kept, and answers leave it out with what introduces it: ``Block.is_unreadable``);
reference links (``[text][ref]``) are written inline and their definitions left out
(``core.ingest.reflinks``); character references, ``<code>``, comments and footnote marks read as
a browser shows them (``core.ingest.inline``). An HTML comment opening a line hides everything
up to its ``-->``, code fences included (CommonMark's HTML block).
"""

from __future__ import annotations

import re
import textwrap
from typing import NamedTuple

from core.ingest.attr_lists import (
    ATTRIBUTE_LINE,
    HEADING_ANCHOR,
    INLINE_ATTRIBUTES,
    SEARCH_EXCLUDED,
    THEMATIC_BREAK,
)
from core.ingest.components import (
    PART_MARK,
    TAB_MARK,
    callout_label,
    closing_text,
    field_ends,
    field_text,
    file_trees,
    for_readers,
    is_inline,
    opening_text,
    tabs_named,
)
from core.ingest.document import Section, SectionBuilder
from core.ingest.fences import fence_opening, split_fences
from core.ingest.inline import (
    ENTITY,
    code_element,
    decode_entities,
    drop_html_comments,
    footnote_labels,
    plain_text,
    without_footnote_marks,
)
from core.ingest.mdx import without_comments, without_exports
from core.ingest.reflinks import definitions, has_full_reference, inline_links
from core.ingest.spans import outside_code_spans
from core.ingest.tables import table_break

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*))?$")  # the text's trailing blanks are stripped
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_NEXTRA_ID = re.compile(r"^ {0,3}#{1,6}[ \t].*\[#[\w.:-]+\][ \t]*$", re.M)
#: rehype-pretty-code's language ending a code span (``search: false{:js}``): markup, not code.
_SPAN_LANGUAGE = re.compile(r"(`[^`\n]+?)\{:[\w+#.-]{1,20}\}(`)")
_MDX_COMMENT = re.compile(r"\{/\*.*?\*/\}", re.S)
_IMPORT = re.compile(
    r"^import\s+(?:[\w*\s,]*\{[^}]*\}[\w\s,]*from\s+|[\w*\s,]+from\s+)?['\"][^'\"\n]+['\"];?[ \t]*$", re.M
)
_EXPORT = re.compile(r"^export\s+(?:default\s+|const\s|let\s|var\s|function[\s*]|class\s|async\s|\{)")
_ADMONITION = re.compile(
    r"^[ \t]*(?::{3,}|/{3,})[ \t]*(?P<kind>[A-Za-z][\w-]*)?[ \t]*"  # ":::tip", "/// note"
    r"(?:\[(?P<bracket>[^\]]*)\]|\|?[ \t]*(?P<title>.*?))[ \t]*$"  # "[Title]", "| Title", " Title"
)
#: The kinds of note whose marker (``:::tip``, ``/// warning``) the site shows as a label.
_NOTE_KINDS = frozenset(
    "note tip info warning caution danger important success question failure bug example hint error".split())
_UNTITLED_NOTE = re.compile(
    rf"^[ \t]*(?::{{3,}}|/{{3,}})[ \t]*(?i:{'|'.join(sorted(_NOTE_KINDS))})[ \t]*$", re.M)
#: The first line of a GitHub alert (``> [!WARNING]``) or an Obsidian callout (``> [!tip]- Title``).
_ALERT = re.compile(r"^(?P<quote>[ \t]*>[ \t]?)\[!(?P<kind>[A-Za-z]+)\][+-]?(?:[ \t]+(?P<title>.*?))?[ \t]*$")
#: A line that includes another file ("{!> ../src/app.py!}", "{* ../src/app.py *}", '--8<-- "a.md"',
#: mdBook's "{{#include ../listings/main.rs}}" and "{{#rustdoc_include ...}}"): the site's build puts
#: the file there, so the line itself says nothing to a reader.
_MDBOOK = r"\{\{#(?:[a-z_]*include|playground)[ \t]"
_MDBOOK_INCLUDE = re.compile(_MDBOOK)
INCLUDE_LINE = re.compile(
    rf"^[ \t]*(?:\{{!.*!\}}|\{{\*.*\*\}}|-+8<-+[ \t]+([\"']).*\1|{_MDBOOK}[^}}]*\}}\}})[ \t]*$", re.M)
_TAG_START = re.compile(r"<(/?)([A-Za-z][\w.:-]*)")
_SPECIAL = re.compile(r"[`<]")
_BRACE = re.compile(r"[{}]")
_AUTOLINK = re.compile(r"(?i)(?:https?|mailto|ftp):")
_BLOCK_TAGS = frozenset(
    {"address", "article", "aside", "blockquote", "center", "dd", "details", "div", "dl", "dt",
     "figcaption", "figure", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "li", "ol", "p", "pre",
     "section", "summary", "table", "tbody", "td", "th", "thead", "tr", "ul"}
)
#: mdBook's caption over a listing names its file: "Filename: src/main.rs" titles it "src/main.rs".
_FILENAME_LABEL = re.compile(r"^\s*Filename:\s*")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
#: Material for MkDocs' icon shortcodes (``:material-help:``, ``:simple-github:{ .lg }``): a picture.
_ICON = re.compile(r":(?:material|fontawesome|octicons|simple)-[\w-]+:(?:\{[^{}\n]{0,80}\})?")
#: What starts a block in Markdown at a line's start: a heading, a quote, a list item.
_STARTS_BLOCK = re.compile(r"^[ \t]*(?:#|>|[-+*][ \t]|\d{1,9}[.)][ \t])")
#: A GitHub alert's first line anywhere in a page (``has_inline_markup``).
_ALERT_LINE = re.compile(r"^[ \t]*>[ \t]?\[![A-Za-z]+\]", re.M)


class MarkdownPage(NamedTuple):
    """What a Markdown page says of itself."""

    #: The text of its first ``# H1``, or None.
    h1: str | None
    sections: list[Section]
    #: The heading it opens with, before any text (``SectionBuilder.opening``), or None.
    opening: str | None = None
    #: Whether it holds an indented code block (read as prose before).
    indented_code: bool = False
    #: Whether ``opening`` heads the whole page (``SectionBuilder.heads_page``).
    heads_page: bool = False


def parse_markdown(text: str, *, indented_code: bool = True) -> MarkdownPage:
    """Parse Markdown/MDX (front matter already removed) into sections.

    Args:
        text: The page.
        indented_code: Whether a block indented by four columns can be code (MDX has none: its
            indentation is JSX's).
    """
    builder = SectionBuilder()
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not indented_code:  # MDX's own syntax; in Markdown it is text, or code indented by four
        text = file_trees(tabs_named(for_readers(without_exports(without_comments(text)))))
    runs, indented = split_fences(text, indented_code)
    runs = _includes_dropped(runs)
    all_prose = "\n".join("\n".join(lines) for is_code, lines in runs if not is_code)
    defined, notes = definitions(all_prose), footnote_labels(all_prose)
    tab: str | None = None
    for k, (is_code, lines) in enumerate(runs):
        if is_code:
            builder.block("\n".join([titled_fence(lines[0], tab), *lines[1:]]))
            tab = None
            continue
        prose = clean_prose(without_footnote_marks(inline_links("\n".join(lines), defined), notes))
        prose_lines = prose.rstrip().split("\n")
        if prose_lines[-1].startswith(TAB_MARK) and k + 1 < len(runs) and "title=" not in runs[k + 1][1][0]:
            # A tab's label (or mdBook's file name) over its code: the code's title.
            tab = _FILENAME_LABEL.sub("", plain_text(prose_lines.pop()[1:]))
        for line in prose_lines:
            _read_line(builder, line.removeprefix(TAB_MARK))
    sections = [Section(section.headings, [_decoded(_unindented(block)) for block in section.blocks])
                for section in builder.finish()]
    return MarkdownPage(builder.first_h1, sections, builder.opening, indented, builder.heads_page)


def _includes_dropped(runs: list[tuple[bool, list[str]]]) -> list[tuple[bool, list[str]]]:
    """``runs`` without the lines of prose that include another file, their lead-ins ending in a full stop.

    The included file is not there to read. "by setting their default to `None`:" then
    introduced whatever came next, and answers quoted it as the missing example; ended with a
    full stop it says what it says. (A block standing for the include, in its place, moved chunk
    boundaries enough to lose fastapi-chat two answers; BENCHMARKS.md, seventeenth pass.)
    """
    out: list[tuple[bool, list[str]]] = []
    for is_code, lines in runs:
        if is_code or not any(INCLUDE_LINE.match(line) for line in lines):
            out.append((is_code, lines))
            continue
        kept: list[str] = []
        for line in lines:
            if not INCLUDE_LINE.match(line):
                kept.append(line)
                continue
            last = next((k for k in range(len(kept) - 1, -1, -1) if kept[k].strip()), None)
            if last is not None and kept[last].rstrip().endswith(":"):
                kept[last] = kept[last].rstrip()[:-1] + "."
        out.append((is_code, kept))
    return out


def _read_line(builder: SectionBuilder, line: str) -> None:
    """One line of cleaned prose: a heading, a setext underline, a paragraph's line or its end."""
    if line.startswith(PART_MARK):
        if title := plain_text(line[1:].strip()):
            builder.part(title)
        else:
            builder.end_part()
        return
    heading = _ATX.match(line)
    if heading:
        raw = (heading.group(2) or "").rstrip()
        builder.heading(len(heading.group(1)), plain_text(_heading_text(raw)))
        if SEARCH_EXCLUDED.search(raw):
            builder.leave_out()
        return
    setext = _SETEXT.match(line)
    if setext and len(builder.paragraph) == 1 and builder.paragraph[0].strip():
        title = builder.paragraph.pop()
        builder.heading(1 if setext.group(1)[0] == "=" else 2, plain_text(_heading_text(title)))
        return
    if THEMATIC_BREAK.match(line):  # after a paragraph too ("text" over "***"); "---" there is setext
        builder.end_paragraph()
        return
    if line.strip():
        if (kept := table_break(builder.paragraph, line)) is not None:
            rest = builder.paragraph[kept:]  # a table's header under a line of text opens a block
            builder.paragraph = builder.paragraph[:kept]
            builder.end_paragraph()
            builder.paragraph.extend(rest)
        builder.paragraph.append(line.rstrip())
    else:
        builder.end_paragraph()


def _unindented(block: str) -> str:
    """A prose block without the indentation all its lines share.

    A list item's paragraph or sub-list after its code (``1. Create it:`` then the fenced command,
    then ``    - `name` is ...``) is a block of its own, whose indentation now says nothing: kept,
    chat showed the list as code.
    """
    if is_code_block(block) or not block.startswith((" ", "\t")):
        return block
    return textwrap.dedent(block)


def _decoded(block: str) -> str:
    """A prose block with its character references read, after its shape was (``&#35;`` is no heading).

    A line that a decoded character would start as a heading, a quote or a list item is escaped.
    """
    if "&" not in block or is_code_block(block):
        return block  # a code block is shown as written
    lines = []
    for line in block.split("\n"):
        decoded = decode_entities(line)
        if _STARTS_BLOCK.match(decoded) and not _STARTS_BLOCK.match(line):
            indent = len(decoded) - len(decoded.lstrip())
            decoded = f"{decoded[:indent]}\\{decoded[indent:]}"
        lines.append(decoded)
    return "\n".join(lines)


def is_code_block(block: str) -> bool:
    """Whether a section's block is a fenced code block (``SectionBuilder.block``), not prose."""
    return fence_opening(block.split("\n", 1)[0]) is not None


def titled_fence(fence: str, title: str | None) -> str:
    """A code block's opening fence with ``title="..."`` (shown above the code), unless it has one."""
    if not title or "title=" in fence:
        return fence
    shown = title.replace('"', "'")
    return f'{fence} title="{shown}"'


def has_reference_links(text: str) -> bool:
    """Whether ``text`` defines reference links (``[ref]: https://...``) or makes one (``[a][b]``)."""
    return bool(definitions(text)) or has_full_reference(text)


def has_include_lines(text: str) -> bool:
    """Whether ``text`` includes another file (``{* ../src/app.py *}``, ``{{#include ../listings/a.rs}}``)."""
    return (_MDBOOK_INCLUDE.search(text) is not None or "{*" in text or "{!" in text or "8<" in text) and (
        INCLUDE_LINE.search(text) is not None)


def has_inline_markup(text: str) -> bool:
    """Whether ``text`` holds markup read as the site shows it since parser ``markup-1`` (or -2).

    Character references (``&mdash;``), ``<code>`` elements, comments, GitHub alerts
    (``> [!NOTE]``), footnotes and Docusaurus tabs were read as written before; so were link
    definitions with the URL on the next line, Nextra's heading ids (``[#id]``) and code spans'
    languages (``{:js}``).
    """
    return (any(sign in text for sign in ("<code>", "<!--", "[^", "<TabItem"))
            or ("{:" in text and _SPAN_LANGUAGE.search(text) is not None)
            or ("[#" in text and _NEXTRA_ID.search(text) is not None)
            or _ALERT_LINE.search(text) is not None or ("&" in text and ENTITY.search(text) is not None))


def has_filename_captions(text: str) -> bool:
    """Whether ``text`` captions a listing with its file (mdBook's ``<span class="filename">``)."""
    return 'class="filename"' in text


def has_untitled_notes(text: str) -> bool:
    """Whether ``text`` holds a note without a title (``:::tip``), read without its kind before."""
    return (":::" in text or "///" in text) and _UNTITLED_NOTE.search(text) is not None


def has_icons(text: str) -> bool:
    """Whether ``text`` shows Material for MkDocs' icons (``:material-help:``), read as text before."""
    return _ICON.search(text) is not None


def clean_prose(text: str) -> str:
    """Remove MDX/HTML syntax from Markdown prose (never call it on code blocks).

    Keeps the text inside tags, admonitions and ``<details>``; drops comments,
    ``import``/``export`` statements, tags, admonition fences, attribute lines (``{#label}``,
    ``{.class}``) and lines that include another file (``INCLUDE_LINE``).
    """
    text = drop_html_comments(text)
    text = _MDX_COMMENT.sub("", text)
    text = _SPAN_LANGUAGE.sub(r"\1\2", text) if "{:" in text else text
    text = outside_code_spans(text, lambda prose: _ICON.sub("", prose)) if ":" in text else text
    text = _IMPORT.sub("", text)
    text = INCLUDE_LINE.sub("", text)
    text = ATTRIBUTE_LINE.sub("", text)
    text = outside_code_spans(text, lambda prose: INLINE_ATTRIBUTES.sub("", prose)) if "{" in text else text
    text = _drop_exports(text)
    text = _strip_tags(text)
    lines: list[str] = []
    label: str | None = None  # an untitled note's kind, for its first line: "Tip: Update it."
    quoted: tuple[str, str] | None = None  # an untitled alert's quote and kind, for its first line
    for line in text.split("\n"):
        if quoted is not None:
            prefix, kind = quoted
            said = line[len(prefix.rstrip()):].strip() if line.startswith(prefix.rstrip()) else ""
            if line.startswith(prefix.rstrip()) and not said:
                continue  # the kind and the alert's first paragraph are one
            quoted = None
            if said and not _STARTS_BLOCK.match(said) and not fence_opening(said) and said[0] != "|":
                lines.append(f"{prefix}{kind} {said}")
                continue
            lines.append(f"{prefix}{kind}")
        if label is not None and line.strip() and not _ADMONITION.match(line):
            starts_block = _STARTS_BLOCK.match(line) or line.startswith(TAB_MARK)
            lines.extend([label, "", line] if starts_block else [f"{label} {line.lstrip()}"])
            label = None
            continue
        if label is not None and not line.strip():
            continue  # the label and the note's first paragraph are one
        alert = _ALERT.match(line)
        if alert:
            # GitHub's "> [!NOTE]" (and Obsidian's "> [!tip] Title"): the site shows a label, not the marker.
            title = (alert["title"] or "").strip()
            if title:
                lines.extend([f"{alert['quote']}{title}", alert["quote"].rstrip()])
            else:
                quoted = (alert["quote"], f"{alert['kind'].capitalize()}:")
            continue
        admonition = _ADMONITION.match(line)
        if admonition:
            title = (admonition.group("bracket") or admonition.group("title") or "").strip()
            # The title is a paragraph of its own; the marker line itself carries no text. An
            # untitled note shows its kind, as the site does ("TIP"), and MkDocs' notes read.
            kind = (admonition.group("kind") or "").lower()
            label = f"{kind.capitalize()}:" if not title and kind in _NOTE_KINDS else None
            lines.extend(["", title, ""] if title else [""])
            continue
        lines.append(line)
    if quoted is not None:  # the alert ends the text
        lines.append("".join(quoted))
    return "\n".join(lines)


def _drop_exports(text: str) -> str:
    if "export" not in text:
        return text
    out: list[str] = []
    depth = 0
    skipping = False
    for line in text.split("\n"):
        if not skipping and _EXPORT.match(line):
            skipping, depth = True, 0
        if skipping:
            depth += line.count("{") + line.count("(") + line.count("[")
            depth -= line.count("}") + line.count(")") + line.count("]")
            if depth <= 0:
                skipping = False
            continue
        out.append(line)
    return "\n".join(out)


def _is_table_row(line: str) -> bool:
    return line.lstrip().startswith("|")


def has_unclosed_span_in_table_row(text: str) -> bool:
    """Whether a table's row opens a code span it does not close (an odd count of backticks).

    Such a span once ran on into the rows below, whose tags were then read as its code.
    """
    return "`" in text and any(_is_table_row(line) and line.count("`") % 2 for line in text.split("\n"))


def _in_table_row(text: str, i: int) -> bool:
    """Whether ``text[i]`` is on a table's row: a code span opened there ends on that row, or is no span."""
    return _is_table_row(text[text.rfind("\n", 0, i) + 1:i])


def _strip_tags(text: str) -> str:
    """Remove HTML/JSX tags but keep the text between them and inline code spans."""
    if "<" not in text:
        return text
    out: list[str] = []
    pos = 0
    n = len(text)
    braces = _brace_pairs(text)
    while True:
        match = _SPECIAL.search(text, pos)
        if match is None:
            out.append(text[pos:])
            break
        i = match.start()
        out.append(text[pos:i])
        if text[i] == "`":
            j = i
            while j < n and text[j] == "`":
                j += 1
            end = text.find(text[i:j], j)
            if end == -1 or "\n\n" in text[j:end] or ("\n" in text[j:end] and _in_table_row(text, i)):
                out.append(text[i:j])
                pos = j
            else:
                out.append(text[i : end + j - i])
                pos = end + j - i
            continue
        tag = _TAG_START.match(text, i)
        end = _tag_end(text, tag.end(), braces) if tag else -1
        if tag is None or end == -1:
            out.append("<")
            pos = i + 1
            continue
        name = tag.group(2)
        inner = text[tag.end() : end - 1]
        if name.lower() == "code" and not tag.group(1):
            span = code_element(text, i, end)
            if span is not None:
                out.append(span[0])
                pos = span[1]
                continue
        if _AUTOLINK.match(text, i + 1):
            out.append(text[i + 1 : end - 1])  # an autolink <https://...>: keep the address
        elif name.lower() == "br":
            out.append(" ")
        elif not tag.group(1) and (lead := field_text(name, inner) or callout_label(name, inner)):
            after, end = field_ends(text, end, attributes=inner)  # its text runs on from its lead
            out.append(f"\n\n{lead}{after}")
        elif (shown := closing_text(name) if tag.group(1) else opening_text(name, inner)) is not None:
            out.append(shown)
        elif name.lower() in _BLOCK_TAGS or (name[0].isupper() and not is_inline(text, i, end)):
            out.append("\n")
        pos = end
    return "".join(out)


def _tag_end(text: str, start: int, braces: dict[int, int]) -> int:
    """Index just past the ``>`` closing a tag whose name ends at ``start``, or -1.

    ``braces`` pairs each ``{`` with its ``}`` (``_brace_pairs``): a JSX expression is skipped whole,
    so each scan reads only the tag's own characters, never a whole run of unclosed braces again.
    """
    if start < len(text) and text[start] not in " \t\n/>":
        return -1
    i = start
    limit = min(len(text), start + 5000)
    while i < limit:
        ch = text[i]
        if ch in "\"'":
            close = text.find(ch, i + 1, limit)
            if close == -1:
                return -1
            i = close + 1
            continue
        if ch == "{":
            if i not in braces:
                return -1  # an unclosed "{": no tag
            i = braces[i] + 1
            continue
        if ch == ">":
            return i + 1
        if ch in "<}" or text.startswith("\n\n", i):
            return -1  # "a <b and c": not a tag after all
        i += 1
    return -1


def _brace_pairs(text: str) -> dict[int, int]:
    """The index of the ``}`` closing each ``{`` of ``text`` that is closed."""
    pairs: dict[int, int] = {}
    opened: list[int] = []
    for match in _BRACE.finditer(text):
        if match.group() == "{":
            opened.append(match.start())
        elif opened:
            pairs[opened.pop()] = match.start()
    return pairs


def _heading_text(raw: str) -> str:
    raw = HEADING_ANCHOR.sub("", raw)
    raw = re.sub(r"(?<![ \t])[ \t]++#+$", "", raw.rstrip())  # closing hashes: "## Title ##"
    raw = _LINK.sub(r"\1", raw)
    raw = raw.replace("**", "").replace("__", "").replace("`", "")
    return " ".join(raw.split())
