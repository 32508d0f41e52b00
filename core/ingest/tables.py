"""Markdown tables as chunking cuts them: header, rows, and the padding that aligns them in the source."""

from __future__ import annotations

import re

#: A table's delimiter row, outer pipes optional: ``|---|:--:|`` or ``-- | --``. Possessive, so a
#: line of spaces costs one pass.
DELIMITER_ROW_RE = re.compile(r"^\s*+\|?\s*+:?-++:?\s*+(?:\|\s*+:?-++:?\s*+)++\|?\s*+$")
#: The spaces that align a cell's pipe in the source ("| `true`      | No       |"), and a
#: delimiter cell's dashes beyond three. Possessive, and after a non-space: a run of 20,000
#: spaces took 3.6 s when every one of its spaces started a new try. A line's indentation stays.
_PADDING_RE = re.compile(r"(?<=\S) {2,}+(?=\|)|(?<=\|) {2,}+")
_LONG_DASHES_RE = re.compile(r"-{4,}")


def compact_table(block: str) -> str:
    """A table's rows with the padding that aligns them shrunk to one space, else ``block`` as it is.

    Docs align their tables for the source's readers: a delimiter row of 775 dashes and a
    header padded to match made one of Traefik's tables too wide to cut between rows under its
    header, so it was cut as prose, mid-row. Only a block the table opens is read (the Markdown
    parser makes a table under a line of text a block of its own).
    """
    if table_head(block) is None:
        return block
    lines = block.split("\n")
    lines[1] = _LONG_DASHES_RE.sub("---", lines[1])
    return "\n".join(_PADDING_RE.sub(" ", line) for line in lines)


def table_break(lines: list[str], line: str) -> int | None:
    """How many of a paragraph's ``lines`` stay in it when ``line`` comes next; None: all, and ``line`` too.

    GFM lets a table interrupt a paragraph ("Options:" on the line above its header: all but
    the header stay) and ends it at a line holding no cell (the next list item: all stay, the
    line opens another block). Read as one block with its lead-in, a table was neither compacted
    nor cut between its rows under its header.
    """
    if DELIMITER_ROW_RE.match(line) and len(lines) > 1 and "|" in lines[-1] and "|" not in lines[-2]:
        return len(lines) - 1
    if len(lines) > 1 and "|" in lines[0] and DELIMITER_ROW_RE.match(lines[1]) and "|" not in line:
        return len(lines)
    return None


def table_pieces(block: str, limit: int) -> list[str] | None:
    """A long table cut between rows, each piece under the table's header; None for no table.

    Rows without their header read as a row of unnamed values, in a chunk and in an answer.
    """
    head = table_head(block)
    if head is None:
        return None
    header, rows = head
    if not rows or max(len(row) for row in rows) + len(header) + 1 > limit:
        return None  # a row too long to go under the header: cut as prose
    pieces: list[str] = []
    current: list[str] = []
    size = len(header)
    for row in rows:
        if current and size + len(row) + 1 > limit:
            pieces.append("\n".join([header, *current]))
            current, size = [], len(header)
        current.append(row)
        size += len(row) + 1
    pieces.append("\n".join([header, *current]))
    return pieces


def table_head(block: str) -> tuple[str, list[str]] | None:
    """A table's header and delimiter rows (``| a | b |`` over ``|---|---|``) and its rows, or None."""
    lines = block.split("\n", 2)
    if len(lines) < 2 or "|" not in lines[0] or not DELIMITER_ROW_RE.match(lines[1]):
        return None
    return "\n".join(lines[:2]), lines[2].split("\n") if len(lines) > 2 else []
