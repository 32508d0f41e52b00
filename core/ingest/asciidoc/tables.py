"""AsciiDoc's tables (``|===``, and ``,===`` for CSV) -> Markdown tables.

Cells are written one or several a line (``|a |b``), with a specifier before their separator
that spans columns (``2+|``), rows (``.2+|``), repeats (``3*|``) or sets their style (``a|``,
``h|``). The column count comes from ``cols`` (``cols="1,2,3"``, ``cols="3*"``), else from the
first line. The first row is the header when the table says so (``%header``, ``options="header"``)
or, as Asciidoctor reads it, when the first line holds it and a blank line follows.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable

__all__ = ["markdown_table"]

#: A cell's specifier, right before its separator on the same line, at the line's start or after a
#: blank: repeat, span, alignments, style (``2+|``, ``.3+^|``, ``a|``). ``|11+`` ending a line is a
#: cell's text ("Java 11+"), not the next cell's span.
_SPEC = re.compile(
    r"(?:\A|(?<=\s))(?P<spec>(?:\d{1,4}\*)?(?:\d{0,4}(?:\.\d{1,4})?\+)?[<^>]?(?:\.[<^>])?[adehlmsv]?)\Z")
_SPAN = re.compile(r"(?:(?P<repeat>\d{1,4})\*)?(?:(?P<cols>\d{1,4})?(?:\.(?P<rows>\d{1,4}))?\+)?")
#: A specifier is short: it is looked for in a piece's last characters only.
_SPEC_WINDOW = 24
#: No table is wider: a ``cols`` or a span asking for more is read as this many.
_MAX_COLUMNS = 100
_MAX_ROWS_SPANNED = 1000


def markdown_table(lines: list[str], *, options: str, cols: str, separator: str,
                   cell: Callable[[str, str], str]) -> list[str]:
    """The table whose body is ``lines`` as Markdown lines.

    Args:
        lines: between the delimiters.
        options: the table's options (``header``, ``noheader``, ``autowidth``).
        cols: its ``cols`` attribute ("" when not given).
        separator: ``|`` (or ``!`` in a nested table); ``,`` reads the body as CSV.
        cell: reads a cell's text (AsciiDoc) in its style (``a``: blocks, ``l``: literal, ``h``,
            "" ...; its own or its column's) as one line of Markdown.
    """
    width = _width(cols)
    styles = _styles(cols)
    if separator == ",":
        rows = [[cell(c, "") for c in row] for row in csv.reader(lines) if row]
        header = "header" in options
    else:
        cells = _cells("\n".join(lines), separator)
        first = next((line for line in lines if line.strip()), "")
        width = width or min(max(len(_cells(first, separator)), 1), _MAX_COLUMNS)
        rows = _rows(cells, width, lambda text, style, column: cell(text, style or styles.get(column, "")))
        implicit = "noheader" not in options and _implicit_header(lines, width, separator)
        header = "header" in options or implicit
    if not rows:
        return []
    header = header or ("noheader" not in options and _names_columns(rows))
    width = max(len(row) for row in rows)
    if not header:
        rows.insert(0, [""] * width)
    shown = [f"| {' | '.join(r + [''] * (width - len(r)))} |" for r in rows]
    shown.insert(1, f"|{'---|' * width}")
    return shown


def _width(cols: str) -> int:
    """How many columns ``cols`` gives: ``"1,2,3"`` 3, ``"3*"`` 3, ``"2*,1"`` 3, "" 0."""
    count = 0
    for spec in re.split(r"[,;]", cols.strip().strip("\"'")):
        repeat = re.match(r"\s*(\d{1,4})\*", spec)
        count += int(repeat[1]) if repeat else int(bool(spec.strip()))
    return min(count, _MAX_COLUMNS)


def _styles(cols: str) -> dict[int, str]:
    """Each column's style by its index, as ``cols`` gives it: ``"1,4a"`` makes the second ``a``."""
    styles: dict[int, str] = {}
    column = 0
    for spec in re.split(r"[,;]", cols.strip().strip("\"'")):
        written = re.match(r"\s*(?:(\d{1,4})\*)?[\d.%<^>~]*([adehlmsv])?\s*$", spec)
        repeat = int(written[1]) if written and written[1] else 1
        for _ in range(min(repeat, _MAX_COLUMNS)):
            if written and written[2]:
                styles[column] = written[2]
            column += 1
    return styles


def _cells(body: str, separator: str) -> list[tuple[str, str]]:
    """Each cell's specifier and text, in order."""
    pieces = re.split(rf"(?<!\\){re.escape(separator)}", body)
    found: list[tuple[str, str]] = []
    spec = ""
    for k, piece in enumerate(pieces):
        following = ""
        tail = piece[-_SPEC_WINDOW:]
        if k < len(pieces) - 1 and (match := _SPEC.search(tail)) is not None and match["spec"]:
            following, piece = match["spec"], piece[:len(piece) - len(tail) + match.start()]
        if k > 0:
            found.append((spec, piece.replace(f"\\{separator}", separator)))
        spec = following
    return found


def _rows(cells: list[tuple[str, str]], width: int, cell: Callable[[str, str, int], str]) -> list[list[str]]:
    """The cells laid out in rows ``width`` wide, spans taken into account."""
    rows: list[list[str]] = [[]]
    below = [0] * width  # per column: how many more rows a cell above spans into it
    for spec, text in cells:
        span = _SPAN.match(spec)
        assert span is not None  # every part of the pattern is optional
        repeat, columns = min(int(span["repeat"] or 1), width), min(int(span["cols"] or 1), width)
        for _ in range(repeat):
            row = _row_with_room(rows, below, width)
            at = len(row)
            style = spec[-1] if spec[-1:].isalpha() else ""
            row.extend([cell(text, style, at), *[""] * (columns - 1)])
            for column in range(at, min(at + columns, width)):
                below[column] = min(int(span["rows"] or 1), _MAX_ROWS_SPANNED) - 1
    return [row for row in rows if row]


def _row_with_room(rows: list[list[str]], below: list[int], width: int) -> list[str]:
    """The row the next cell goes in, a new one when the last is full; spanned-into columns kept empty."""
    row = rows[-1]
    while True:
        if len(row) >= width:
            rows.append(row := [])
        elif below[len(row)] > 0:
            below[len(row)] -= 1
            row.append("")
        else:
            return row


#: A column's name: a few words, capitalised, no code, no link, no sentence.
_COLUMN_NAME = re.compile(r"^[A-Z][\w /()&+-]{0,40}$")


def _names_columns(rows: list[list[str]]) -> bool:
    """Whether a table's first row names its columns, though it is written as a row of the body.

    One cell a line, Asciidoctor makes it no header: "Property Name", "Default Value", "Type", over
    rows of values. Each piece of a long table repeats its header: without one, its rows were read
    without their columns' names.
    """
    def names(row: list[str]) -> bool:
        """Whether each cell of ``row`` is a column's name."""
        return all(_COLUMN_NAME.match(cell) and len(cell.split()) <= 4 for cell in row)

    # A grid of names ("C", "C++", "Clojure" over more of them) has no header: other rows are alike.
    return len(rows) > 2 and len(rows[0]) > 1 and names(rows[0]) and not any(names(row) for row in rows[1:])


def _implicit_header(lines: list[str], width: int, separator: str) -> bool:
    """Whether the first line holds the first row whole and a blank line follows it."""
    written = list(lines)
    while written and not written[0].strip():
        written.pop(0)
    if len(written) < 2 or written[1].strip():
        return False
    return len(_cells(written[0], separator)) == width
