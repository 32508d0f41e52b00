"""Markdown tables as chat can show them: Slack and Discord draw no tables, only their pipes.

A narrow table becomes a code block with its columns aligned; a wide one, whose lines chat
would wrap, becomes a list with one row per item, each cell named by its column. Pure
functions over the answer's Markdown; code blocks are left as they are.
"""

from __future__ import annotations

import re

from core.ingest.fences import Fences
from core.ingest.tables import DELIMITER_ROW_RE

#: Widest aligned table, in characters per line, that chat shows without wrapping it.
ALIGNED_WIDTH = 72

_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_LINK = re.compile(r"\[([^\]\n]*)\]\([^)\n]*\)")


def tables_for_chat(text: str) -> str:
    """``text`` with each Markdown table outside code written as aligned code or as a list."""
    if "|" not in text:
        return text
    lines = text.split("\n")
    out: list[str] = []
    fences = Fences()
    i = 0
    while i < len(lines):
        line = lines[i]
        if not fences.code(line) and i + 1 < len(lines) and _is_table_head(line, lines[i + 1]):
            end = i + 2
            while end < len(lines) and "|" in lines[end] and lines[end].strip():
                end += 1
            out.extend(_shown([_cells(row) for row in [line, *lines[i + 2:end]]]))
            i = end
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


def _is_table_head(line: str, nxt: str) -> bool:
    """Whether ``line`` over ``nxt`` opens a table: a row with a pipe over a delimiter row."""
    return "|" in line and DELIMITER_ROW_RE.match(nxt) is not None


def _cells(row: str) -> list[str]:
    """A row's cells as plain text: no outer pipes, code marks, bold or link addresses."""
    row = row.strip()
    row = row[1:] if row.startswith("|") else row
    row = row[:-1] if row.endswith("|") and not row.endswith("\\|") else row
    cells = [_LINK.sub(r"\1", cell).replace("`", "").replace("**", "").replace("\\|", "|").strip()
             for cell in _CELL_SPLIT.split(row)]
    return [" ".join(cell.split()) for cell in cells]


def _shown(rows: list[list[str]]) -> list[str]:
    """The table's rows (header first) as aligned code, or as a list when too wide for that."""
    columns = max(len(row) for row in rows)
    rows = [row + [""] * (columns - len(row)) for row in rows]
    widths = [max(len(row[c]) for row in rows) for c in range(columns)]
    if sum(widths) + 2 * (columns - 1) <= ALIGNED_WIDTH:
        body = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
                for row in rows]
        rule = "  ".join("-" * w for w in widths)
        if not any(rows[0]):  # a table without a header (reST's simple tables may have none)
            return ["```", *body[1:], "```"]
        return ["```", body[0], rule, *body[1:], "```"]
    header, items = rows[0], []
    if len(rows) == 2:  # one row: each cell under its column's name ("Default: ...", not the value alone)
        pairs = zip(header, rows[1], strict=True)
        return [f"- {name}: {cell}" if name else f"- {cell}" for name, cell in pairs if cell]
    for row in rows[1:]:
        named = [f"{name}: {cell}" if name else cell
                 for name, cell in zip(header[1:], row[1:], strict=True) if cell]
        if row[0] and named:
            items.append(f"- {row[0]} ({'; '.join(named)})")
        elif row[0] or named:
            items.append(f"- {row[0] or '; '.join(named)}")
    return items
