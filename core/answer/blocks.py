"""Markdown passages as typed blocks: paragraphs, lists, code, tables and headings.

The extractive answerer quotes whole blocks (a lead-in with the list or command it
introduces) instead of loose sentences, so it needs to see a chunk's structure.
Pure functions over strings; no Markdown library is needed for the handful of
block kinds docs use.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from core.answer.code_notation import FENCE_RE, as_shown
from core.answer.fence_info import plain_fence
from core.ingest.fences import backtick_fence
from core.ingest.markdown import INCLUDE_LINE
from core.ingest.tables import DELIMITER_ROW_RE
from core.retrieval.terms import (
    LITERALS,
    carries_on,
    content_terms,
    introduces_next,
    names_entry,
    refers_back,
)

BlockKind = Literal["para", "list", "code", "table", "heading"]

_DIAGRAM_FENCE_RE = re.compile(
    r"\s*(?:`{3,}|~{3,})[ \t]*\{?\.?(?:mermaid|plantuml|puml|uml|graphviz|dot|d2)(?=[\s{}]|$)", re.IGNORECASE)
#: A label (``Block.is_label``) is at most this long: a heading, not a sentence.
LABEL_CHARS = 60
LABEL_WORDS = 8
#: Lines of code shown after the last line holding the asked words, when a long block is cut.
WINDOW_TAIL_LINES = 3
#: A tab's label over its code (MkDocs' ``=== "macOS and Linux"`` read as "macOS and Linux:") is this short.
TAB_LABEL_CHARS = 40
TAB_LABEL_WORDS = 4
_SENTENCE_ENDS = (".", ":", ";", ",", "!", "?", ")")
_FULL_STOPS = (".", "!", "?", ".)", '."', ".**")
#: Words Title Case leaves in lower case.
_MINOR_WORDS = frozenset("a an the and or nor but of to in on at for with by from as vs via per".split())
#: A label naming an option, a prop or a function (a reference entry's heading), one word of code.
_NAME_LABEL_RE = re.compile(r"^(?!.*://)[A-Za-z_$-](?:[\w$.:/-]{0,38}[\w$])?(?:\(\))?$")
#: A heading's last words in brackets, its name spelt out or shortened: "(CoM)", "(Cross-Origin
#: Resource Sharing)".
_NAME_GLOSS_RE = re.compile(r"(?<=\w)\s+\([A-Z][\w\s.-]{0,38}\)$")
#: A colon in a label follows a number and opens a title ("Day 1: Introduction"); "Default: None"
#: and "Default: 8080" are values, not labels.
_LABEL_COLON_RE = re.compile(r"(?<!\d):|:(?!\s*[A-Z])")
_HEADING_RE = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_LIST_RE = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+\S")
_TABLE_RE = re.compile(r"^\s*\|.*\|\s*$")
_QUOTE_RE = re.compile(r"^\s*>\s?")
#: ``***``, ``---`` or ``_ _ _`` alone on a line: a rule between parts, nothing to read.
_THEMATIC_BREAK_RE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_HARD_BREAK_RE = re.compile(r"(?<!\\)\\$")
_FRONT_MATTER_RE = re.compile(r"\A\s*---\s*\n.*?\n---\s*(?:\n|\Z)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Block:
    """One structural unit of a passage, its Markdown kept as written."""

    kind: BlockKind
    text: str

    @property
    def is_lead_in(self) -> bool:
        """A paragraph that introduces what follows ("Run the following command:")."""
        return self.kind == "para" and introduces_next(self.text)

    @property
    def continues(self) -> bool:
        """Prose that opens by pointing back ("This tool ..."): it needs what came before."""
        return self.kind == "para" and refers_back(self.text)

    @property
    def is_label(self) -> bool:
        """A heading's words as a line of text ("Expected Output"): how chunking labels a merged part.

        Title Case counts ("Day 1: Introduction to Gazebo", "Setup"), so does one name a reference
        entry is headed by ("href", "server.host") and a path of merged headings ("Installation
        methods > Cargo"): a short line of prose without a full stop ("See the proxy reference",
        "Default: 8080") is no label.
        """
        text = self.text
        if self.kind == "para" and " > " in text and "\n" not in text:
            # a path of headings chunking merged ("Installation methods > Cargo"): the path says so
            return all(Block("para", part).is_label or _is_heading_text(part) for part in text.split(" > "))
        if (self.kind == "para" and _NAME_LABEL_RE.match(text) and text.casefold() not in _MINOR_WORDS
                and text.casefold() not in LITERALS):
            return True  # a reference entry's name: "href", "server.host", "iconPlacement"
        if self.kind != "para" or len(text) > LABEL_CHARS:
            return False
        # "Center of Mass (CoM)": a heading may end by spelling out or shortening its name.
        text = _NAME_GLOSS_RE.sub("", text)
        if text.endswith(_SENTENCE_ENDS) or ". " in text or any(mark in text for mark in "`[*_"):
            return False
        words = [w for w in re.split(r"[\s>]+", text) if w]
        return 0 < len(words) <= LABEL_WORDS and all(
            not w[:1].islower() or w in _MINOR_WORDS for w in words) and _LABEL_COLON_RE.search(text) is None

    @property
    def names_entry(self) -> bool:
        """A line that is only a code name ("`--no-import`"): the entry under it is that name's."""
        return self.kind == "para" and names_entry(self.text)

    @property
    def heads_entry(self) -> bool:
        """A line naming what the blocks under it describe: a label ("href") or a code name."""
        return self.is_label or self.names_entry

    @property
    def code_title(self) -> str:
        """What a code block's fence titles it ("npm", "pyproject.toml"; "" for none or no code)."""
        return plain_fence(self.text.split("\n", 1)[0])[1] if self.kind == "code" else ""

    @property
    def is_bare_lead_in(self) -> bool:
        """A paragraph, or a list's one item, ending with a colon: a lead-in and nothing more."""
        one = self.kind == "para" or (self.kind == "list" and len(top_items(self, numbered=False)) == 1)
        return one and self.text.rstrip().endswith(":")

    @property
    def is_tab_label(self) -> bool:
        """A short line naming what the code under it is for ("pip:", "macOS and Linux:")."""
        return (self.kind == "para" and self.text.endswith(":") and len(self.text) <= TAB_LABEL_CHARS
                and len(self.text.split()) <= TAB_LABEL_WORDS)

    @property
    def is_unreadable(self) -> bool:
        """Code with nothing to read in a chat: a diagram's source, only includes of other files, or
        nothing at all once the lines its site hides or strikes out are gone."""
        if self.kind != "code":
            return False
        shown = as_shown(self.text.splitlines())[1:]
        body = [line for line in shown if line.strip() and not FENCE_RE.match(line)]
        return self.is_diagram or not body or all(INCLUDE_LINE.match(line) for line in body)

    @property
    def is_diagram(self) -> bool:
        """Code that draws a diagram (mermaid, PlantUML, Graphviz): its source answers nobody in a chat."""
        return self.kind == "code" and _DIAGRAM_FENCE_RE.match(self.text) is not None

    @property
    def carries_on(self) -> bool:
        """Prose going on with the block before ("For that, use ..."): the passage is not over."""
        return self.kind == "para" and carries_on(self.text)

    @property
    def is_body(self) -> bool:
        """A list, code block or table: what a lead-in introduces."""
        return self.kind in ("list", "code", "table")


def _flush(kind: BlockKind | None, lines: list[str], out: list[Block]) -> None:
    if kind is not None and lines and any(line.strip() for line in lines):
        text = "\n".join(lines).strip("\n")
        if kind == "para":
            # A backslash ending a line is a hard line break (CommonMark), not a character.
            text = " ".join(_HARD_BREAK_RE.sub("", line.strip()) for line in lines if line.strip())
        elif kind == "list":
            text = _unwrapped_items(lines)
        out.append(Block(kind, text))
    lines.clear()


def _unwrapped_items(lines: list[str]) -> str:
    """A list's lines with each item's wrapped lines joined: chat shows a source's line breaks."""
    items: list[str] = []
    for line in lines:
        if not line.strip():
            continue
        if items and not _LIST_RE.match(line):
            items[-1] = f"{items[-1].rstrip()} {line.strip()}"
        else:
            items.append(line.rstrip())
    return "\n".join(items)


def _bare_table_rows(lines: list[str]) -> set[int]:
    """The lines of tables written without outer pipes (GFM): ``a | b`` over ``-- | --``, then rows."""
    rows: set[int] = set()
    for k in range(1, len(lines)):
        if k - 1 in rows or not DELIMITER_ROW_RE.match(lines[k]) or "|" not in lines[k - 1]:
            continue
        end = k + 1
        while end < len(lines) and "|" in lines[end] and lines[end].strip():
            end += 1
        rows.update(range(k - 1, end))
    return rows


def _line_kind(line: str, current: BlockKind | None, previous: str) -> BlockKind:
    if _TABLE_RE.match(line):
        return "table"
    if _LIST_RE.match(line):
        return "list"
    if current == "list" and (line.startswith((" ", "\t")) or not previous.rstrip().endswith(_FULL_STOPS)):
        # The item above goes on: indented, or wrapped mid-sentence without indentation (CommonMark's
        # "lazy" line). A sentence starting after a full stop is read as the paragraph it looks like.
        return "list"
    return "para"


@lru_cache(maxsize=4096)
def parse_blocks(markdown: str) -> tuple[Block, ...]:
    """Split a passage into blocks, in order.

    A fence left open at the end (a chunk cut inside code) still yields a code
    block, closed; quote markers (``> ``) are dropped so notes read as prose.

    Args:
        markdown: a chunk's content.

    Returns:
        The blocks; empty ones are left out.
    """
    # Comments were left out when the page was read (``core.ingest.markdown``): what looks like one
    # here is shown by the page ("Use &lt;!-- x --&gt; to comment", a code block's own).
    text = _FRONT_MATTER_RE.sub("", markdown, count=1)
    out: list[Block] = []
    lines: list[str] = []
    kind: BlockKind | None = None
    fence: str | None = None
    lines_in = text.splitlines()
    tables = _bare_table_rows(lines_in)
    was_quoted = False
    for k, raw in enumerate(lines_in):
        if fence is not None and was_quoted and not _QUOTE_RE.match(raw):
            # A note's code ends with the note (CommonMark), closed or not.
            lines.append(fence)
            _flush("code", lines, out)
            kind, fence = None, None
        if fence is not None:
            # Code in a note ("> ```ts") is written with the note's marker on every line.
            code_line = _QUOTE_RE.sub("", raw, count=1) if was_quoted else raw
            lines.append(code_line)
            if code_line.strip().startswith(fence):
                _flush("code", lines, out)
                kind, fence = None, None
            continue
        line = _QUOTE_RE.sub("", raw, count=1)
        opener = FENCE_RE.match(line)
        if opener:
            _flush(kind, lines, out)
            kind, fence, was_quoted = "code", opener.group(1), line != raw
            lines.append(line.strip())
            continue
        if (line != raw) != was_quoted:  # a quote starts or ends: a block of its own
            _flush(kind, lines, out)
            kind, was_quoted = None, line != raw
        heading = _HEADING_RE.match(line)
        if heading:
            _flush(kind, lines, out)
            out.append(Block("heading", heading.group(1)))
            kind = None
            continue
        if not line.strip() or _THEMATIC_BREAK_RE.match(line):
            _flush(kind, lines, out)
            kind = None
            continue
        line_kind = "table" if k in tables else _line_kind(line, kind, lines[-1] if lines else "")
        if line_kind != kind:
            _flush(kind, lines, out)
            kind = line_kind
        lines.append(line)
    if fence is not None:
        lines.append(fence)
        _flush("code", lines, out)
    else:
        _flush(kind, lines, out)
    return tuple(out)


def list_items(block: Block) -> list[Block]:
    """A list block's items, each with its indented continuation lines (one list block each)."""
    items: list[list[str]] = []
    for line in block.text.splitlines():
        if (_LIST_RE.match(line) and not line.startswith((" ", "\t"))) or not items:
            items.append([line])
        else:
            items[-1].append(line)
    return [Block("list", "\n".join(lines)) for lines in items]


#: A list item as written at the start of its line: "2. Add the module ...", "3) Restart", "- Note".
_ITEM = re.compile(r"^([ \t]*)(?:[-*+\u2022]|(\d{1,3})[.)])[ \t]", re.MULTILINE)


def top_items(block: Block, *, numbered: bool = True) -> list[int]:
    """The numbers of a list block's top-level numbered items; sub-steps indented under them are none.

    With ``numbered=False``, every top-level item counts, a bullet as 0.
    """
    if block.kind != "list":
        return []
    items = [(len(m.group(1).expandtabs()), int(m.group(2) or 0), m.group(2) is not None)
             for m in _ITEM.finditer(block.text)]
    top = min((indent for indent, _, _ in items), default=0)
    return [n for indent, n, is_number in items if indent == top and (is_number or not numbered)]


def _header_lines(lines: list[str]) -> int:
    """How many lines a table's header takes, its delimiter row included (0: none in the first three)."""
    return next((k + 1 for k, line in enumerate(lines[:3]) if DELIMITER_ROW_RE.match(line)), 0)


def table_rows(block: Block) -> list[Block]:
    """A table's rows, each under the table's header (one table block each); the table when it has none."""
    lines = block.text.splitlines()
    header = _header_lines(lines)
    if not header or len(lines) - header < 2:
        return [block]
    return [Block("table", "\n".join([*lines[:header], row])) for row in lines[header:] if row.strip()]


def table_header_lines(block: Block) -> int:
    """How many lines a table block's header takes (0: none)."""
    return _header_lines(block.text.splitlines())


def _is_heading_text(text: str) -> bool:
    """Whether ``text`` reads as a heading in sentence case ("Installation methods"), not a sentence."""
    words = text.split()
    return (0 < len(words) <= LABEL_WORDS and len(text) <= LABEL_CHARS and text[:1].isupper()
            and not text.endswith(_SENTENCE_ENDS) and not any(mark in text for mark in "`[*_"))


def render_block(block: Block, *, max_code_lines: int = 15, focus: frozenset[str] = frozenset()) -> str:
    """A block as it is quoted: code capped at ``max_code_lines`` lines and fenced again.

    A fence keeps only its language; a ``title="pyproject.toml"`` it gives is shown above it.

    Args:
        block: the block.
        max_code_lines: most lines of a code block quoted.
        focus: search terms asked about; a long code block is quoted from the window of
            lines that holds most of them (the setting asked about may sit on line 40),
            with ``...`` where lines were left out.
    """
    lines = block.text.splitlines()
    if block.kind != "code" or not lines:
        return block.text
    lines = as_shown(lines)
    lines[0], title = plain_fence(lines[0])
    lines = _backtick_fenced(lines)
    label = [f"{title}:"] if title else []  # the file the snippet belongs in, as the docs' title bar says
    if len(lines) <= max_code_lines + 2:
        return "\n".join([*label, *lines])
    fence = FENCE_RE.match(lines[0])
    closing = fence.group(1) if fence else "```"
    body = lines[1:-1] if fence and lines[-1].strip().startswith(closing) else lines[1:]
    start = _best_window(body, max_code_lines, focus)
    window = body[start:start + max_code_lines]
    asked = [k for k, line in enumerate(window) if focus.intersection(content_terms(line))]
    window = _closed(window, keep=asked[-1] if asked else 0)
    before = ["..."] if start else []
    after = ["..."] if start + len(window) < len(body) else []
    return "\n".join([*label, lines[0], *before, *window, *after, closing])


def _backtick_fenced(lines: list[str]) -> list[str]:
    """A ``~~~`` fence written with backticks, which every chat shows as code; others as they are.

    The backtick fence is longer than any run of backticks opening a line inside (a tilde fence
    showing a backtick fence).
    """
    fence = FENCE_RE.match(lines[0])
    if fence is None or not fence.group(1).startswith("~"):
        return lines
    ticks = backtick_fence(lines[1:])
    indent = lines[0][: len(lines[0]) - len(lines[0].lstrip())]
    opening = f"{indent}{ticks}{lines[0].lstrip()[len(fence.group(1).strip()):]}"
    if len(lines) > 1 and lines[-1].strip().startswith(fence.group(1).strip()):
        return [opening, *lines[1:-1], f"{indent}{ticks}"]
    return [opening, *lines[1:]]


def rarity(total: int, holding: int) -> float:
    """Weight of a term held by ``holding`` of ``total`` blocks or lines: rarer weighs more."""
    return math.log(1.0 + total / holding)


def _best_window(lines: list[str], size: int, focus: frozenset[str]) -> int:
    """Start of the ``size``-line window holding most ``focus`` terms; the first such, else 0.

    A term on many of the block's lines ("launch" in a launch file) counts less than one on
    a few (the setting asked about): each is weighted by its rarity among the lines.
    """
    if not focus:
        return 0
    held = [focus.intersection(content_terms(line)) for line in lines]
    df = {t: sum(t in h for h in held) for t in focus}
    weight = {t: rarity(len(lines), d) for t, d in df.items() if d}
    hits = [sum(weight[t] for t in h) for h in held]
    best, best_start = sum(hits[:size]), 0
    running = best
    for start in range(1, len(lines) - size + 1):
        running += hits[start + size - 1] - hits[start - 1]
        if running > best + 1e-9:
            best, best_start = running, start
    held_at = [k for k in range(best_start, best_start + size) if k < len(lines) and hits[k]]
    if not held_at:
        return best_start
    return _earliest_start(lines, held_at[0], held_at[-1], size)


def _closed(window: list[str], *, keep: int) -> list[str]:
    """``window`` ending where its brackets are closed, if that keeps most of it and line ``keep``.

    Cut at a fixed count, code stopped inside a call ("yield dict(", then "..."); it ends
    instead after the last line that closes every bracket opened since its first line (and
    before the comments introducing what it leaves out), never before the line asked about.
    """
    depth, last_closed = 0, -1
    for k, line in enumerate(window):
        if len(line) <= _BRACKET_LINE_CHARS:  # a longer line (minified, data) is read as balanced
            code = _COMMENT_RE.sub("", _STRING_RE.sub("", line))
            depth = max(0, depth + sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}"))
        if depth == 0:
            last_closed = k
    if last_closed < max(keep, len(window) // 2):
        return window
    end = last_closed + 1
    while end > 1 and not _COMMENT_RE.sub("", window[end - 1]).strip():
        end -= 1  # a comment or a blank line introduces the statement left out
    return window[:end]


def _earliest_start(lines: list[str], first: int, last: int, size: int) -> int:
    """The window's start that still shows ``first`` to ``last`` and a few lines after, read from
    as early as possible: code reads top down, so its imports and the ``class`` or ``def`` the
    lines belong to are worth more than what follows; and a start at a statement, not mid-call.
    """
    start = min(first, max(0, last + WINDOW_TAIL_LINES - size + 1))
    # "    name: str" is shown under its "class Model:", if the window reaches it.
    lowest = max(0, last - size + 1)
    for above in range(first - 1, lowest - 1, -1):
        if _indent(lines[above]) < _indent(lines[first]):
            return min(start, above)
    return start


#: A line of code longer than this is not read for brackets (quoted strings are not linear to skip).
_BRACKET_LINE_CHARS = 400
#: A quoted string on one line: brackets inside it are text.
_STRING_RE = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'")
#: A comment to the end of the line (``# ...``, ``// ...``) after a space or at its start.
_COMMENT_RE = re.compile(r"(?:^|\s)(?:#|//).*$")


def _indent(line: str) -> int:
    """A line's indentation; a blank line's is endless (it belongs to no statement)."""
    return len(line) - len(line.lstrip()) if line.strip() else 1 << 30
