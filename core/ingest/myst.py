"""MyST Markdown (Sphinx docs written in Markdown) -> plain Markdown, before the Markdown reader.

MyST writes Sphinx's directives as fences (```` ```{note} ````, ``:::{warning}``) and its roles
as ``{func}`connect```. Read as plain Markdown, a note became a code block, a ``toctree`` a
code block of page names, and roles stayed as markup. Here they become what the Markdown
reader understands, with the same meaning as in ``.rst`` pages (``core.ingest.sphinx_markup``):

* code directives (``code-block``, ``code-cell``, ``doctest``) -> fenced code with their language;
* notes, version notes, tabs, cards, object descriptions -> their text, after a lead line
  ("Note:", "New in version 2.1:", the signature as code); nested directives are read too;
* ``toctree``, ``include``, images and autodoc -> nothing (no prose of the page);
* ``eval-rst`` -> its reStructuredText read as an ``.rst`` page is (``core.ingest.rst``);
* ``{role}`text``` -> the text it shows; ``(label)=`` targets, ``%`` comments and attributes
  (``[link](url){.external}``) -> nothing.

Pure functions over text; ordinary code fences are left exactly as written. Known limit: a
role whose text wraps onto the next line is left as written.
"""

from __future__ import annotations

import re

from core.ingest.document import fenced, with_lead
from core.ingest.fences import Fences, closes_fence
from core.ingest.rst import parse_rst
from core.ingest.sphinx_markup import (
    AUTODOC_DIRECTIVES,
    CODE_DIRECTIVES,
    CODE_ROLES,
    LITERAL_ROLES,
    OBJECT_DIRECTIVES,
    PROSE_DIRECTIVES,
    SKIPPED_DIRECTIVES,
    VERSION_DIRECTIVES,
    for_html,
    role_shown,
    version_note,
)

#: A directive's opening fence: ```` ```{name} ````, ``~~~{name}`` or ``:::{name}``.
_FENCE = r"(?P<fence>`{3,}|~{3,}|:{3,})\{(?P<name>[A-Za-z][\w:+-]*)\}"
_OPEN = re.compile(rf"^(?P<indent>[ \t]*){_FENCE}[ \t]*(?P<args>.*?)[ \t]*$")
_DIRECTIVE_FENCE = re.compile(rf"^[ \t]*{_FENCE}", re.M)
_TICKS = re.compile(r"(?<!`)`+(?!`)")
_ROLE_NAME = re.compile(r"\{(?P<name>[a-z][\w:+.-]*)\}$")
#: Attributes after a link or image: ``[text](url){.external}``, ``![img](a.png){w=500px}``.
_ATTRIBUTES = re.compile(r"(?<=[)\]])\{(?:[.#][\w-]+|\w+=[^{}\s]+)(?:[ \t]+(?:[.#][\w-]+|\w+=[^{}\s]+))*\}")
_TARGET = re.compile(r"^[ \t]*\([^()\s]+\)=[ \t]*$")
#: A target line over the heading it names, as MyST pages write them: a "(+)=" line in code is none.
_TARGET_LINE = re.compile(r"^[ \t]*\([^()\s]+\)=[ \t]*\n(?:[ \t]*\n)*#", re.MULTILINE)
_COMMENT = re.compile(r"^[ \t]*%")
_OPTION = re.compile(r"^[ \t]*:[\w-]+:")
#: Directives with no prose of the page, on top of Sphinx's own (``SKIPPED_DIRECTIVES``).
_SKIPPED = SKIPPED_DIRECTIVES | AUTODOC_DIRECTIVES | frozenset(
    "include image raw contents tableofcontents bibliography glue jupyter-kernel".split()
)
#: Code directives, and Quarto/R Markdown style cells (```` ```{python} ````), with their language.
_CODE = {**CODE_DIRECTIVES, "code-block": None, "code": None, "sourcecode": None, "code-cell": None,
         "math": "math", **{lang: lang for lang in "python r julia bash sh sql".split()}}
#: Directives titled by their argument (a rubric's text, a topic's title) rather than a label.
_TITLED = frozenset("rubric topic sidebar".split())
_ADMONITIONS = frozenset("note warning tip important caution attention danger error hint".split())
#: Directives nested deeper than this are read as plain text: the page must not exhaust the stack.
_MAX_DEPTH = 20
#: How far before a backtick a role's ``{name}`` may start.
_MAX_ROLE_NAME = 64


def looks_like_myst(text: str) -> bool:
    """Whether ``text`` uses MyST's directive fences, roles, link attributes or targets (Markdown never does).

    A page whose only MyST is its ``(label)=`` target lines showed them in answers.
    """
    return (_DIRECTIVE_FENCE.search(text) is not None or _ATTRIBUTES.search(text) is not None
            or _TARGET_LINE.search(text) is not None
            or any(_roles(line) != line for line in text.split("\n") if "}`" in line))


def myst_to_markdown(text: str, *, depth: int = 0) -> str:
    """Rewrite MyST's directives, roles, targets, comments and attributes as plain Markdown."""
    lines = text.split("\n")
    out: list[str] = []
    fences = Fences()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        # A directive's fence is checked first: outside code, ```{note} opens a note, not code.
        if fences.fence is None and depth < _MAX_DEPTH and (opener := _OPEN.match(line)):
            body, i = _body(lines, i, opener["fence"], len(opener["indent"]))
            out.extend(["", *_directive(opener["name"], opener["args"], body, depth), ""])
        elif fences.code(line):  # an ordinary code fence: as written
            out.append(line)
        elif not (_TARGET.match(line) or _COMMENT.match(line)):
            out.append(_ATTRIBUTES.sub("", _roles(line)))
    return "\n".join(out)


def _body(lines: list[str], start: int, fence: str, indent: int) -> tuple[list[str], int]:
    """The directive's lines up to its closing fence (a longer fence encloses shorter ones).

    Returns the lines, without the opener's indentation, and where reading goes on.
    """
    end = start
    while end < len(lines) and not closes_fence(lines[end], fence):
        end += 1
    body = [x[min(indent, len(x) - len(x.lstrip(" \t"))):] for x in lines[start:end]]
    return body, end + 1


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


def _directive(name: str, args: str, body: list[str], depth: int) -> list[str]:
    """A directive as Markdown lines: fenced code, prose after its lead line, or nothing."""
    kind = name.split(":")[-1]  # "py:function" is a function
    body = _options_dropped(body)
    if name in _SKIPPED or kind in _SKIPPED or (kind == "only" and not for_html(args)):
        return []
    if kind == "eval-rst":  # reStructuredText inside MyST: read as an .rst page is
        return _rst_lines(body)
    if kind in _CODE:
        named = _CODE[kind]
        language = named if named is not None else (args.split() or [""])[0]
        return fenced("\n".join(body).strip("\n"), language).split("\n")
    text = myst_to_markdown("\n".join(body), depth=depth + 1).strip("\n")
    lead = _lead(kind, args)
    if not text and kind in VERSION_DIRECTIVES:
        return [lead.removesuffix(":") + "."]  # "New in version 2.1.", nothing more to say
    return with_lead(lead, text.split("\n") if text else [])


def _rst_lines(body: list[str]) -> list[str]:
    """The blocks of reStructuredText as Markdown lines (the page's own headings frame them)."""
    _, sections = parse_rst("\n".join(body))
    return [line for section in sections for block in section.blocks for line in (*block.split("\n"), "")]


def _lead(kind: str, args: str) -> str:
    """What a directive puts before its content: "Note:", "New in version 2.1:", a signature."""
    if kind in VERSION_DIRECTIVES:
        words, note = version_note(kind, args)
        return f"{words}: {note}" if note else f"{words}:"  # the note may be the content
    if kind in _ADMONITIONS:
        return f"{kind.capitalize()}: {args}".rstrip()
    if kind == "admonition" or PROSE_DIRECTIVES.get(kind, "") is None:
        return f"{args}:" if args else ""  # a generic note's title, a tab's or card's name
    if kind in PROSE_DIRECTIVES:
        title = PROSE_DIRECTIVES[kind]
        return f"{title}: {args}".rstrip() if title else ""
    if kind in OBJECT_DIRECTIVES and args:
        return f"`{args}`"
    return args if kind in _TITLED else ""


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
        role = None
        if line[ticks.start() - 1:ticks.start()] == "}":  # only then can a role name end here
            role = _ROLE_NAME.search(line, max(copied, ticks.start() - _MAX_ROLE_NAME), ticks.start())
        if role is not None:
            out += [line[copied:role.start()], _shown(role["name"], line[ticks.end():close.start()])]
            copied = close.end()
        start = close.end()
    return "".join(out) + line[copied:]


def _shown(name: str, text: str) -> str:
    """What ``{name}`text``` shows: code roles as code, the rest as the text they read."""
    kind = name.split(":")[-1]  # "py:func" names code too
    shown = text if kind in LITERAL_ROLES else role_shown(name, text)
    return f"`{shown}`" if kind in CODE_ROLES | LITERAL_ROLES else shown
