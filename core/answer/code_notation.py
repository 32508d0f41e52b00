"""What a docs site shows of a code block whose fence or lines carry notation for its highlighter.

Twoslash's hidden preamble and compiler notes, Shiki's ``// [!code --]``, Docusaurus' magic
comments and Expressive Code's ``del={2,5-7}`` mark lines a reader never sees, or sees struck
out; quoted as written they would read as code to type. Pure functions over a block's lines,
its opening fence first.
"""

from __future__ import annotations

import re

#: A line opening or closing a fence.
FENCE_RE = re.compile(r"^\s*(`{3,}|~{3,})")


def as_shown(lines: list[str]) -> list[str]:
    """A code block's lines (its fence first) as the site shows them, changes applied."""
    if not lines:
        return lines
    if "del=" in lines[0]:  # first: its line numbers count the lines as written
        lines = [lines[0], *_without_deleted(lines[0], lines[1:])]
    text = "\n".join(lines)
    if _TWOSLASH_RE.search(lines[0]):
        lines = [lines[0], *_shown_by_twoslash(lines[1:])]
    if "[!code" in text:
        lines = [lines[0], *_without_notation(lines[1:])]
    if "highlight-" in text and not _MARKDOWN_FENCE_RE.match(lines[0]):
        # Docusaurus' magic comments mark lines the site highlights (a Markdown example shows them)
        lines = [line for line in lines if len(line) > _MAGIC_CHARS or not _MAGIC_COMMENT_RE.match(line)]
    return lines


#: Twoslash (Shiki, VitePress) compiles a snippet with a preamble the page hides: ``// ---cut---``
#: ends it, ``---cut-after---`` starts a hidden tail, ``---cut-start---`` to ``---cut-end---`` is
#: hidden, and ``// ^?`` or ``// @errors: 2304`` lines are notes to the compiler (TypeScript's own
#: ``// @ts-expect-error`` is shown).
_TWOSLASH_RE = re.compile(r"\btwoslash\b")
_CUT_RE = re.compile(r"^\s*//\s*---cut(?P<kind>|-before|-after|-start|-end)---\s*$")
_TWOSLASH_NOTE_RE = re.compile(r"^\s*//\s*(?:\^[?|]|@(?!ts-)\w+).*$")


#: Shiki's notation ending a line of code (VitePress): ``// [!code ++]`` marks a line added,
#: ``[!code --]`` one removed, ``[!code highlight]``, ``focus``, ``error``, ``word:x`` a look.
_NOTATION_RE = re.compile(
    r"(?<![ \t])[ \t]*(?://|#|--|<!--|/\*)[ \t]*\[!code (?P<kind>[^\]\n]{1,60})\][ \t]*(?:-->|\*/)?[ \t]*$")


#: A fence of Markdown: its magic comments are the example, not markup.
_MARKDOWN_FENCE_RE = re.compile(r"\s*(?:`{3,}|~{3,})\s*(?:md|markdown|mdx)\b", re.IGNORECASE)
#: A magic comment is short; longer lines are not matched at all (the pattern is not linear on them).
_MAGIC_CHARS = 80
#: A line holding only a Docusaurus magic comment: ``// highlight-next-line``, ``{/* highlight-start */}``.
_MAGIC_COMMENT_RE = re.compile(
    r"\s*(?://|#|--|;|/\*|\{/\*|<!--)\s*highlight-(?:next-line|start|end)\s*(?:\*/\}?|-->)?\s*$")


def _without_notation(lines: list[str]) -> list[str]:
    """Code as it reads once changed: a removed line goes, every marker with it."""
    out: list[str] = []
    for line in lines:
        note = _NOTATION_RE.search(line) if "[!code" in line else None
        if note is None:
            out.append(line)
        elif not note["kind"].strip().startswith("--"):
            out.append(line[:note.start()])
    return out


def _shown_by_twoslash(lines: list[str]) -> list[str]:
    """The lines of a twoslash snippet the page shows (its closing fence included)."""
    cuts = [(i, match["kind"]) for i, line in enumerate(lines) if (match := _CUT_RE.match(line))]
    before = [i for i, kind in cuts if kind in ("", "-before")]
    after = [i for i, kind in cuts if kind == "-after"]
    fence = lines[-1:] if lines and FENCE_RE.match(lines[-1]) else []  # the closing fence stays
    end = after[0] if after else len(lines) - len(fence)
    shown, hidden = [], False
    for i, line in enumerate(lines[:end]):
        cut = _CUT_RE.match(line)
        if cut is not None:
            hidden = cut["kind"] == "-start"
        elif not hidden and (not before or i > before[-1]) and not _TWOSLASH_NOTE_RE.match(line):
            shown.append(line)
    return [*shown, *fence]


#: Expressive Code's (Starlight's) markers in a fence's info: ``del={3}`` or ``del={2,5-7}`` strike
#: lines of the snippet out (counted from 1), ``del="/my-repo"`` a text; ``ins={4}`` marks lines added.
#: Read as the info's attributes in order, so ``title="del={2}"`` is a title, not a marker.
_ATTRIBUTE_RE = re.compile(
    r"""(?<![\w-])([\w-]++)=("[^"\n]*"|'[^'\n]*'|\{[^{}\n]*\}|/[^/\n]*/|[^\s"'{}/]+)""")
_LINE_RANGE_RE = re.compile(r"(?<!\d)(\d{1,9})(?:\s*-\s*(\d{1,9}))?(?!\d)")
#: A range's label (``del={"1":7-8}``, ``del={"Step 2":3}``) names it; its digits are no lines.
_RANGE_LABEL_RE = re.compile(r'"[^"\n]*"\s*:')
#: Ranges read of one marker: a page's long list costs no more than this.
_MAX_RANGES = 100


def _without_deleted(fence: str, lines: list[str]) -> list[str]:
    """The snippet once changed: what its fence's ``del=`` strikes out goes (fence lines stay).

    A line left empty by the text struck from it goes too; a regular expression (``del=/x/``) is
    not read.
    """
    gone: set[int] = set()
    struck: list[str] = []
    for name, value in _ATTRIBUTE_RE.findall(fence):
        if name != "del":
            continue
        if value.startswith("{"):
            for start, end in _LINE_RANGE_RE.findall(_RANGE_LABEL_RE.sub(" ", value))[:_MAX_RANGES]:
                # Within the snippet: a page's "del={1-999999999}" must not cost a set that large.
                gone.update(range(int(start), min(int(end or start), len(lines)) + 1))
        elif value[:1] in "\"'" and value[1:-1].strip():
            struck.append(value[1:-1])
    kept = []
    for n, line in enumerate(lines, start=1):
        if FENCE_RE.match(line):
            kept.append(line)
        elif n not in gone:
            changed = line
            for text in struck:
                changed = changed.replace(text, "")
            if changed.strip() or not line.strip():
                kept.append(changed)
    return kept
