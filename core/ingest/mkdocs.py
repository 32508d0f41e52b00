"""MkDocs' Markdown extensions (admonitions, content tabs, snippets) -> plain Markdown.

Python-Markdown, which MkDocs (and Material for MkDocs) renders with, writes a note as a
marker line (``!!! note "Title"``, collapsible ``??? tip`` or ``???+ tip``) and a content tab
as ``=== "macOS and Linux"``, each followed by its content indented four spaces. Read as plain
Markdown, the marker stayed a paragraph of its own (an answer opened with "!!! tip") and a
tab's name, often what its command is for, was a stray line. Here the content is dedented
and led by the label a reader sees ("Note:", "Title:", "macOS and Linux:"), as MyST's notes
are (``core.ingest.myst``); nested blocks are read too.

A code annotation's marker (``# (1)!``) is left out of the code.
Lines that include another file (``--8<-- "file.md"``, ``{* file *}``, ``{! file !}``) are dropped
from notes and tabs (the included file is not there to read); on the page ``parse_markdown``
drops them too, ending the sentence that introduced one with a full stop. mkdocstrings'
``::: httpx.Client`` and its indented options read as the object's name and the members they
list (the site renders their docstrings there, from code ingest does not read).
Pure functions over text; code fences are left as written, but for the indentation a note's
or a tab's content loses (tabs count four columns, as in Python-Markdown).
"""

from __future__ import annotations

import re

from core.ingest.document import with_lead
from core.ingest.fences import Fences
from core.ingest.markdown import INCLUDE_LINE

#: ``!!! note``, ``??? tip "Title"``, ``???+ warning``, ``!!! note ""``; ``=== "Tab"`` (``===+``,
#: ``===!`` and ``===+!`` too). As Python-Markdown reads them: the space after the marker is
#: optional and a title runs to the line's last quote.
_OPEN = re.compile(
    r"^(?P<indent>[ \t]*)(?:(?:!!!|\?\?\?\+?)[ \t]?(?P<kind>[\w-]+)(?:[ \t]+[\w-]+)*"
    r"(?:[ \t]+\"(?P<title>.*)\")?"
    r"|===\+?!?[ \t]+\"(?P<tab>.*)\")[ \t]*$"
)
#: pymdownx's block of snippet file names between bare markers (one file: ``INCLUDE_LINE``).
_SNIPPET_BLOCK = re.compile(r"^[ \t]*-+8<-+[ \t]*$")
#: mkdocstrings' ``::: package.module.Object`` (a dotted path: Docusaurus' ``:::note`` is a note).
_AUTODOC = re.compile(r"^[ \t]*:::[ \t]+(?P<path>[A-Za-z_]\w*(?:\.\w+)+)[ \t]*$")
#: The members its options list: ``:members: get post`` or YAML's ``members:`` then ``- get`` lines.
_MEMBERS = re.compile(r"^[ \t]*:?members:?[ \t]*(?P<inline>.*)$")
_MEMBER_ITEM = re.compile(r"^[ \t]*-[ \t]+(?P<name>\w+)[ \t]*$")
_SIGNS = re.compile(
    r"^[ \t]*(?:(?:!!!|\?\?\?\+?)[ \t]?[\w-]+|===\+?!?[ \t]+\"|-+8<-+|:::[ \t]+\w+\.\w)"
    r"|(?:#|//)[ \t]*\(\d+\)![ \t]*$", re.M)
#: Material's code annotation marker ending a line of code (``x = 1  # (1)!``): the site shows a
#: button there, and the note it opens is the numbered list after the code.
_ANNOTATION = re.compile(r"(?<![ \t])[ \t]*(?:#|//)[ \t]*\(\d+\)!?[ \t]*$")
#: The width of the indentation that holds a block's content.
_STEP = 4
#: Blocks nested deeper than this are read as plain text: the page must not exhaust the stack.
_MAX_DEPTH = 20


def looks_like_mkdocs(text: str) -> bool:
    """Whether ``text`` uses an admonition, a content tab or a snippet include."""
    return _SIGNS.search(text) is not None


def mkdocs_to_markdown(text: str, *, depth: int = 0) -> str:
    """Rewrite admonitions and tabs as labelled prose; drop lines that include another file from them."""
    lines = text.split("\n")
    out: list[str] = []
    fences = Fences()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if fences.code(line):  # code: as written, but for annotation markers
            bare = _ANNOTATION.sub("", line) if line.rstrip().endswith((")", ")!")) else line
            if bare.strip() or not line.strip():
                out.append(bare)
        elif depth < _MAX_DEPTH and (opener := _OPEN.match(line)):
            block, i = _block(opener, lines, i, depth)
            out.extend(block or [line])  # no content: a line of text
        elif autodoc := _AUTODOC.match(line):
            options, i = _body(lines, i, _width(_leading(line)))
            out.extend(["", _object_line(autodoc["path"], options), ""])
        elif _SNIPPET_BLOCK.match(line) and (end := _snippet_end(lines, i)) is not None:
            i = end + 1  # a block of file names, up to its closing marker
        elif not INCLUDE_LINE.match(line) or depth == 0:
            # In a note or a tab an include is dropped: a note holding only one is empty. On the
            # page, ``parse_markdown`` drops it and ends the sentence introducing it.
            out.append(line)
    if fences.fence is not None and depth > 0:
        out.append(fences.fence)  # a note's code ends with the note, as Python-Markdown reads it
    return "\n".join(out)


def _block(opener: re.Match[str], lines: list[str], start: int, depth: int) -> tuple[list[str], int]:
    """A note's or tab's content after its label, at the marker's indentation, and where reading goes on.

    The lines are [] when the marker has neither content nor a title.
    """
    indent = _width(opener["indent"])
    body, end = _body(lines, start, indent)
    content = mkdocs_to_markdown("\n".join(body), depth=depth + 1).strip("\n")
    lead = _lead(opener)
    if not content:  # a title with nothing under it is still a line worth keeping
        titled = bool(opener["title"] or opener["tab"])
        return (["", " " * indent + lead.removesuffix(":"), ""] if titled else []), end
    led = with_lead(lead, content.split("\n"))
    return ["", *(" " * indent + x if x.strip() else "" for x in led), ""], end


def _object_line(path: str, options: list[str]) -> str:
    """mkdocstrings' object as a reader finds it on the site: its name and the members shown."""
    members: list[str] = []
    listing = False
    for option in options:
        if (named := _MEMBERS.match(option)) is not None:
            members += re.findall(r"\w+", named["inline"])
            listing = True
        elif listing and (item := _MEMBER_ITEM.match(option)) is not None:
            members.append(item["name"])
        else:
            listing = False
    shown = ", ".join(f"`{m}`" for m in members if m not in ("true", "false"))
    return f"`{path}`: {shown}" if shown else f"`{path}`"


def _snippet_end(lines: list[str], start: int) -> int | None:
    """The closing marker of a snippet block opened before ``start``, if one follows."""
    return next((k for k in range(start, len(lines)) if _SNIPPET_BLOCK.match(lines[k])), None)


def _width(whitespace: str) -> int:
    return len(whitespace.expandtabs(_STEP))


def _body(lines: list[str], start: int, indent: int) -> tuple[list[str], int]:
    """The lines indented under a marker at ``indent``, dedented one step; where reading goes on."""
    end = start
    while end < len(lines) and (not lines[end].strip() or _width(_leading(lines[end])) >= indent + _STEP):
        end += 1
    while end > start and not lines[end - 1].strip():
        end -= 1  # blank lines after the content belong to what follows
    cut = indent + _STEP
    return [_dedent(x, cut) for x in lines[start:end]], end


def _leading(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _dedent(line: str, columns: int) -> str:
    lead = _leading(line).expandtabs(_STEP)
    return lead[columns:] + line.lstrip(" \t")


def _lead(opener: re.Match[str]) -> str:
    """The label a reader sees: a title, else the note's kind ("Tip:"); a tab's name."""
    title = opener["tab"] if opener["tab"] is not None else opener["title"]
    if title is not None:
        title = title.strip().removesuffix(":")  # "Step 1:" is not labelled "Step 1::"
        return f"{title}:" if title else ""  # ``!!! note ""`` shows no title
    return f"{opener['kind'].replace('-', ' ').capitalize()}:" if opener["kind"] else ""
