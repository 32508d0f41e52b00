"""MyST Markdown (Sphinx docs written in Markdown) -> plain Markdown, before the Markdown reader.

MyST writes Sphinx's directives as fences (```` ```{note} ````, ``:::{warning}``) and its roles
as ``{func}`connect```. Read as plain Markdown, a note became a code block, a ``toctree`` a
code block of page names, and roles stayed as markup. Here they become what the Markdown
reader understands, with the same meaning as in ``.rst`` pages (``core.ingest.sphinx``):

* code directives (``code-block``, ``code-cell``, ``doctest``) -> fenced code with their language;
* notes, version notes, tabs, cards, object descriptions -> their text, after a lead line
  ("Note:", "New in version 2.1:", the signature as code); nested directives are read too;
* ``toctree``, ``include``, images, autodoc and ``eval-rst`` -> nothing (no prose of the page);
* ``{role}`text``` -> the text it shows; ``(label)=`` targets, ``%`` comments and attributes
  (``[link](url){.external}``) -> nothing.

Pure functions over text; ordinary code fences are left exactly as written.
"""

from __future__ import annotations

import re

from core.ingest.sphinx_markup import (
    CODE_DIRECTIVES,
    CODE_ROLES,
    OBJECT_DIRECTIVES,
    PROSE_DIRECTIVES,
    SKIPPED_DIRECTIVES,
    VERSION_DIRECTIVES,
    for_html,
    shown_text,
)

_OPEN = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,}|:{3,})\{(?P<name>[\w:.+-]+)\}[ \t]*(?P<args>.*?)[ \t]*$")
_CODE_FENCE = re.compile(r"^[ \t]*(?P<fence>`{3,}|~{3,})")
_TICKS = re.compile(r"(?<!`)`+(?!`)")
_ROLE_NAME = re.compile(r"\{(?P<name>[a-z][\w:+.-]*)\}$")
#: Attributes after a link or image: ``[text](url){.external}``, ``![img](a.png){w=500px}``.
_ATTRIBUTES = re.compile(r"(?<=[)\]])\{(?:[.#][\w-]+|\w+=[^{}\s]+)(?:[ \t]+(?:[.#][\w-]+|\w+=[^{}\s]+))*\}")
_DIRECTIVE_FENCE = re.compile(r"^[ \t]*(?:`{3,}|~{3,}|:{3,})\{[\w:.+-]+\}", re.M)
_TARGET = re.compile(r"^[ \t]*\([\w.:-]+\)=[ \t]*$")
_COMMENT = re.compile(r"^[ \t]*%")
_OPTION = re.compile(r"^[ \t]*:[\w-]+:")
#: Directives with no prose of the page, on top of Sphinx's own (``SKIPPED_DIRECTIVES``).
_SKIPPED = SKIPPED_DIRECTIVES | frozenset(
    "include image raw eval-rst contents tableofcontents bibliography glue jupyter-kernel".split()
)
_CODE = {**CODE_DIRECTIVES, "code-block": None, "code": None, "sourcecode": None, "code-cell": None,
         "math": "math"}
#: A line that starts a list, code, table or heading: a lead goes on the line before it.
_BLOCK_START = re.compile(r"^\s*(?:[-*+]\s|\d+[.)]\s|`{3,}|~{3,}|\||#)")
_ADMONITIONS = frozenset("note warning tip important caution attention danger error hint".split())


def looks_like_myst(text: str) -> bool:
    """Whether ``text`` uses MyST's directive fences or roles (plain Markdown never does)."""
    return _DIRECTIVE_FENCE.search(text) is not None or any(
        _roles(line) != line for line in text.split("\n") if "}`" in line)


def myst_to_markdown(text: str) -> str:
    """Rewrite MyST's directives, roles, targets and comments as plain Markdown."""
    lines = text.split("\n")
    out: list[str] = []
    fence = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if fence:  # inside an ordinary code fence: as written
            out.append(line)
            fence = "" if _closes(line, fence) else fence
        elif opener := _OPEN.match(line):
            body, i = _body(lines, i, opener["fence"])
            out.extend(["", *_directive(opener["name"], opener["args"], body), ""])
        elif code := _CODE_FENCE.match(line):
            fence = code["fence"]
            out.append(line)
        elif not (_TARGET.match(line) or _COMMENT.match(line)):
            out.append(_ATTRIBUTES.sub("", _roles(line)))
    return "\n".join(out)


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return len(stripped) >= len(fence) and set(stripped) == {fence[0]}


def _body(lines: list[str], start: int, fence: str) -> tuple[list[str], int]:
    """The lines up to the fence closing the directive (a longer fence encloses shorter ones)."""
    end = start
    while end < len(lines) and not _closes(lines[end], fence):
        end += 1
    body = lines[start:end]
    indent = min((len(x) - len(x.lstrip()) for x in body if x.strip()), default=0)
    return [x[indent:] for x in body], end + 1


def _options_dropped(body: list[str]) -> list[str]:
    """The body without its leading ``:key: value`` options or ``---`` YAML block."""
    start = 0
    if body and body[0].strip() == "---":
        start = next((k for k in range(1, len(body)) if body[k].strip() == "---"), -1) + 1
    while start < len(body) and _OPTION.match(body[start]):
        start += 1
    while start < len(body) and not body[start].strip():
        start += 1  # the blank line between the options and the content
    return body[start:]


def _directive(name: str, args: str, body: list[str]) -> list[str]:
    """A directive as Markdown lines: fenced code, prose after its lead line, or nothing."""
    kind = name.split(":")[-1]  # "py:function" is a function
    body = _options_dropped(body)
    if kind in _SKIPPED or (kind == "only" and not for_html(args)):
        return []
    if kind in _CODE:
        language = _CODE[kind] if _CODE[kind] is not None else (args.split() or [""])[0]
        return [f"```{language}", *body, "```"]
    text = myst_to_markdown("\n".join(body)).strip("\n").split("\n")
    return _with_lead(_lead(kind, args), text)


def _lead(kind: str, args: str) -> str:
    """What a directive puts before its content: "Note:", "New in version 2.1:", a signature."""
    if kind in VERSION_DIRECTIVES:
        version, _, note = args.partition(" ")
        return f"{VERSION_DIRECTIVES[kind]} {version}: {note}".rstrip()
    if kind in _ADMONITIONS:
        return f"{kind.capitalize()}: {args}".rstrip()
    if kind == "admonition" or PROSE_DIRECTIVES.get(kind, "") is None:
        return f"{args}:" if args else ""  # a generic note's title, a tab's or card's name
    if kind in PROSE_DIRECTIVES:
        title = PROSE_DIRECTIVES[kind]
        return f"{title}: {args}".rstrip() if title else ""
    if kind in OBJECT_DIRECTIVES and args:
        return f"`{args}`"
    return ""


def _with_lead(lead: str, text: list[str]) -> list[str]:
    """``lead`` before the first paragraph of ``text`` (its own line before a list or code)."""
    if not lead:
        return text
    first = text[0] if text else ""
    if first.strip() and lead.endswith(":") and not _BLOCK_START.match(first):
        return [f"{lead} {first.lstrip()}", *text[1:]]
    return [lead, "", *text] if any(x.strip() for x in text) else [lead]


def _roles(line: str) -> str:
    """``line`` with each ``{role}`text``` replaced by what it shows; code spans left alone.

    Read left to right, span by span, so ``/items/{item_id}`` inside a code span is no role.
    """
    out: list[str] = []
    copied = start = 0
    while (ticks := _TICKS.search(line, start)) is not None:
        close = re.compile(rf"(?<!`){ticks.group()}(?!`)").search(line, ticks.end())
        if close is None:
            break
        role = _ROLE_NAME.search(line, copied, ticks.start())
        if role is not None:
            shown = shown_text(line[ticks.end():close.start()])
            code = role["name"].split(":")[-1] in CODE_ROLES  # "py:func" names code too
            out += [line[copied:role.start()], f"`{shown}`" if code else shown]
            copied = close.end()
        start = close.end()
    return "".join(out) + line[copied:]
