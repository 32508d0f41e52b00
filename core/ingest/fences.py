"""Markdown's code blocks: fenced, indented by four columns, and what an HTML comment hides.

A fence opens with three or more backticks or tildes and closes with as many of the same
(an unclosed one runs to the page's end); an indented code block is CommonMark's, under a
paragraph, a heading or code, never under a list item, a tab or a tag, whose text it is; an HTML
comment opening a line hides everything up to its ``-->``, fences included (CommonMark's HTML
block). ``split_fences`` gives the rest of ``core.ingest.markdown`` prose and code apart.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
#: A line opening with an HTML comment that it does not close: the comment runs to its ``-->``.
_COMMENT_BLOCK = re.compile(r"^ {0,3}<!--")
#: A line indented by four columns: CommonMark's indented code, where a paragraph could not go on.
_INDENTED = re.compile(r"^(?: {4}| {0,3}\t)")
#: A top-level line after which (and a blank line) an indented block is code: no list item, quote,
#: tag, tab or admonition marker, definition or footnote, whose text goes on indented.
_TOP_LEVEL_TEXT = re.compile(
    r"^(?![-+*](?:[ \t]|$)|\d{1,9}[.)](?:[ \t]|$)|[ \t>|<{:]|\[\^|={3}[+!]*[ \t]+\"|!{3}|\?{3}|/{3})")


def fence_opening(line: str) -> str | None:
    """The fence (```` ``` ````, ``~~~``) that ``line`` opens a code block with, if it opens one."""
    opener = _FENCE_OPEN.match(line)
    return opener.group("fence") if opener else None


#: A tag written over lines (one attribute a line) runs over this many at most.
MAX_TAG_LINES = 20


def tag_over_lines(lines: list[str], start: int, *, ends: re.Pattern[str], opens: str) -> tuple[str, int]:
    """The tag opened on ``lines[start - 1]`` as one line, and the index of the line after it.

    Its end is looked for within ``MAX_TAG_LINES`` and before any blank line, fence or line
    holding ``opens`` (another tag's start): a tag is never written across them, and prose or code
    after one is no argument of the tag. A tag never closed so is its first line alone. Hugo's
    shortcodes and MDX's components are written so (one attribute a line).
    """
    for j in range(start, min(start + MAX_TAG_LINES, len(lines))):
        if not lines[j].strip() or fence_opening(lines[j]) or opens in lines[j]:
            break  # a blank line, a fence or another tag: this one was never closed
        if ends.search(lines[j]):
            return " ".join([lines[start - 1].rstrip(), *(row.strip() for row in lines[start:j + 1])]), j + 1
    return lines[start - 1], start


def tags_joined(lines: list[str], *, opens: re.Pattern[str], ends: re.Pattern[str], marker: str
                ) -> Iterator[tuple[str, bool]]:
    """Each line and whether it is code, a tag written over lines (``opens`` on a line, ``ends`` not)
    joined into one line outside code (``tag_over_lines``, ``marker`` starting another tag)."""
    fences = Fences()
    k = 0
    while k < len(lines):
        line = lines[k]
        k += 1
        if fences.code(line):
            yield line, True
            continue
        if opens.match(line) and not ends.search(line):
            line, k = tag_over_lines(lines, k, ends=ends, opens=marker)
        yield line, False


def closes_fence(line: str, fence: str) -> bool:
    """Whether ``line`` closes a block opened by ``fence``: the same character, at least as many."""
    return re.fullmatch(rf"[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*", line) is not None


class Fences:
    """Follows, line by line, whether a page's lines are inside a fenced code block."""

    def __init__(self) -> None:
        #: The fence of the code block being read; None in prose.
        self.fence: str | None = None

    def code(self, line: str) -> bool:
        """Whether ``line`` is code: inside a fence, or the line opening or closing one."""
        if self.fence is not None:
            self.fence = None if closes_fence(line, self.fence) else self.fence
            return True
        self.fence = fence_opening(line)
        return self.fence is not None


def _after_comment(lines: list[str], start: int, prose: list[str]) -> int:
    """Skip the HTML comment opening ``lines[start]``, fences in it included; return the next line.

    A line after it closes it (``split_fences`` checks); what follows its ``-->`` stays prose.
    """
    k = next(k for k in range(start + 1, len(lines)) if "-->" in lines[k])
    rest = lines[k][lines[k].find("-->") + 3:]
    if rest.strip():
        prose.append(rest)
    return k + 1


def _indented_code(lines: list[str], start: int) -> tuple[list[str], int]:
    """The indented code block opening ``lines[start]`` (not blank), fenced, and the line after it.

    It runs while lines are blank or indented by four columns; it never ends on a blank line.
    Its fence is longer than any run of backticks opening one of its lines (a page showing a
    fenced block as indented code).
    """
    end = start + 1
    for k in range(start + 1, len(lines)):
        if lines[k].strip():
            if not _INDENTED.match(lines[k]):
                break
            end = k + 1
    body = [_dedent_code(line).rstrip() for line in lines[start:end]]
    fence = backtick_fence(body)
    return [fence, *body, fence], end


def backtick_fence(body: list[str]) -> str:
    """A backtick fence for code ``body``: longer than any run of backticks opening one of its lines."""
    longest = max((len(m[1]) for line in body if (m := re.match(r"[ \t]*(`{3,})", line))), default=2)
    return "`" * max(3, longest + 1)


def _dedent_code(line: str) -> str:
    """``line`` without the four columns of indentation that make it code (tabs inside it stay)."""
    spaces = len(line) - len(line.lstrip(" "))
    if spaces >= 4:
        return line[4:]
    return line[spaces + 1:] if line[spaces:spaces + 1] == "\t" else line.lstrip(" ")


def _fenced_code(lines: list[str], start: int, opener: re.Match[str]) -> tuple[list[str], int]:
    """The fenced code block ``opener`` opens at ``lines[start]``, closed, and the line after it."""
    indent = len(opener.group("indent"))
    fence = opener.group("fence")
    code = [fence + opener.group("info").rstrip()]
    i = start + 1
    while i < len(lines) and not closes_fence(lines[i], fence):
        line = lines[i]
        # Drop the opener's indentation (fences inside list items) but no more.
        strip = min(indent, len(line) - len(line.lstrip(" \t")))
        code.append(line[strip:].rstrip())
        i += 1
    while len(code) > 1 and not code[-1].strip():
        code.pop()  # trailing blank lines (often an unclosed fence's end of file)
    code.append(fence)  # an unclosed fence is closed so fences always pair up
    return code, i + 1


def split_fences(text: str, indented_code: bool) -> tuple[list[tuple[bool, list[str]]], bool]:
    """Split text into (is_code, lines) runs, and say whether one is an indented code block.

    Code runs include their fences; an indented code block gets fences.
    """
    runs: list[tuple[bool, list[str]]] = []
    prose: list[str] = []
    lines = text.split("\n")
    # A comment opening after the last "-->" is never closed: it hides nothing.
    last_close = max((k for k, line in enumerate(lines) if "-->" in line), default=-1)
    i = 0
    # Whether an indented block here would be code: after a blank line, under a top-level paragraph,
    # heading or code block (under a list item, a tab or a tag it is the item's text).
    may_indent, after_blank, found = indented_code, True, False
    while i < len(lines):
        if i < last_close and _COMMENT_BLOCK.match(lines[i]) and "-->" not in lines[i]:
            i = _after_comment(lines, i, prose)
            continue
        opener = _FENCE_OPEN.match(lines[i])
        if opener is None:
            line = lines[i]
            if may_indent and after_blank and line.strip() and _INDENTED.match(line):
                if prose:
                    runs.append((False, prose))
                    prose = []
                code, i = _indented_code(lines, i)
                runs.append((True, code))
                found = True
                continue
            if line.strip() and not _INDENTED.match(line):
                # A line right after a list item's goes on with the item (a lazy continuation).
                top = _TOP_LEVEL_TEXT.match(line) is not None
                may_indent = indented_code and top and (may_indent or after_blank)
            after_blank = not line.strip()
            prose.append(line)
            i += 1
            continue
        if prose:
            runs.append((False, prose))
            prose = []
        code, i = _fenced_code(lines, i, opener)
        runs.append((True, code))
        may_indent, after_blank = indented_code and not opener.group("indent"), False
    if prose:
        runs.append((False, prose))
    return runs, found
