"""Jupyter notebooks (``.ipynb``) -> Markdown: their Markdown cells as written, code cells fenced.

Docs and books built with Jupyter Book, nbsphinx or mkdocs-jupyter keep tutorials as
notebooks. Outputs are left out: they are what running the code printed (tables, logs,
base64 images), often long, rarely what a question asks about, and they change every time
the notebook runs; the code that made them is kept. Raw cells are build-time markup, except a
leading one holding front matter (jupytext, Quarto). Cells the published docs hide
(``remove-cell``, nbsphinx ``hidden``) are left out too. The Markdown then goes through the
same reader as a ``.md`` page, so MyST markup in cells is read as well.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from core.errors import IngestSourceError
from core.ingest.document import fenced
from core.ingest.fences import Fences

_LANGUAGE = re.compile(r"[\w+#.-]+")
#: An image attached to the cell: the URL means nothing outside the notebook; its alt text stays.
_ATTACHMENT = re.compile(r"!\[([^\]]*)\]\(attachment:[^)]*\)")
#: Cell tags with which Jupyter Book leaves a cell, or its code, out of the published page.
_HIDDEN_TAGS = frozenset({"remove-cell", "remove_cell", "remove-input", "remove_input"})


@dataclass(frozen=True, slots=True)
class NotebookText:
    """A notebook as Markdown, and the front matter of a leading raw cell ("" when none)."""

    markdown: str
    front_matter: str = ""


def read_notebook(text: str) -> NotebookText:
    """The notebook's cells as one Markdown text, in order.

    Args:
        text: the ``.ipynb`` file's JSON.

    Raises:
        IngestSourceError: saying why ``text`` is no notebook (the loader adds the file's name).
    """
    notebook = _json(text)
    cells = _cells(notebook)
    if cells is None:
        raise IngestSourceError("not a Jupyter notebook (no list of cells)")
    language = _language(notebook.get("metadata"))
    front_matter = ""
    parts: list[str] = []
    for index, cell in enumerate(c for c in cells if isinstance(c, dict) and not _hidden(c)):
        source = _source(cell.get("source", cell.get("input"))).strip("\n")  # "input": nbformat 3
        kind = cell.get("cell_type")
        if kind == "raw" and index == 0 and source.startswith("---"):
            front_matter = source
        elif kind == "markdown" and source.strip():
            parts.append(_closed(_ATTACHMENT.sub(r"\1", source)))
        elif kind == "heading" and source.strip():  # nbformat 3 kept headings in cells of their own
            parts.append(f"{'#' * _level(cell.get('level'))} {source}")
        elif kind == "code" and source.strip():
            parts.append(fenced(source, _language_name(cell.get("language")) or language))
    return NotebookText(markdown=_text("\n\n".join(parts) + "\n"), front_matter=_text(front_matter))


def _text(text: str) -> str:
    """``text`` with any lone surrogate (a JSON ``\\ud800`` escape) replaced: it is no character."""
    return text.encode("utf-8", "replace").decode("utf-8")


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    # Deep nesting overflows the parser's stack; a huge number exceeds int's digit limit.
    except (ValueError, RecursionError) as exc:
        reason = f"{exc.msg} at line {exc.lineno}" if isinstance(exc, json.JSONDecodeError) else str(exc)
        raise IngestSourceError(f"not a Jupyter notebook (invalid JSON: {reason})") from exc


def _cells(notebook: Any) -> list[Any] | None:
    """The notebook's cells (nbformat 4, or 3's worksheets), or None when it has none to list."""
    if not isinstance(notebook, dict):
        return None
    if isinstance(notebook.get("cells"), list):
        return list(notebook["cells"])
    worksheets = notebook.get("worksheets")
    if isinstance(worksheets, list):
        sheets = [sheet.get("cells") for sheet in worksheets if isinstance(sheet, dict)]
        return [cell for cells in sheets if isinstance(cells, list) for cell in cells]
    return None


def _hidden(cell: dict[str, Any]) -> bool:
    """Whether the published docs leave the cell out (Jupyter Book tags, nbsphinx metadata)."""
    metadata = cell.get("metadata")
    if not isinstance(metadata, dict):
        return False
    tags = metadata.get("tags")
    tagged = isinstance(tags, list) and any(tag in _HIDDEN_TAGS for tag in tags if isinstance(tag, str))
    return tagged or metadata.get("nbsphinx") == "hidden"


def _source(source: Any) -> str:
    """A cell's source: a list of lines (nbformat 4) or one string."""
    if isinstance(source, list):
        return "".join(part for part in source if isinstance(part, str))
    return source if isinstance(source, str) else ""


def _closed(markdown: str) -> str:
    """A Markdown cell with a code fence it leaves open closed: Jupyter renders each cell alone."""
    fences = Fences()
    for line in markdown.split("\n"):
        fences.code(line)
    return markdown if fences.fence is None else f"{markdown}\n{fences.fence}"


def _level(level: Any) -> int:
    """A heading cell's level, 1-6 (1 when it is not a number)."""
    return min(max(level, 1), 6) if isinstance(level, int) and not isinstance(level, bool) else 1


def _language(metadata: Any) -> str:
    """The notebook's programming language, for its code fences ("python" when unsaid)."""
    if isinstance(metadata, dict):
        for key, field in (("kernelspec", "language"), ("language_info", "name")):
            info = metadata.get(key)
            if isinstance(info, dict) and (name := _language_name(info.get(field))):
                return name
    return "python"


def _language_name(value: Any) -> str:
    """A language's name as a fence can carry it ("" when there is none)."""
    match = _LANGUAGE.match(value.strip()) if isinstance(value, str) else None
    return match.group().lower() if match else ""
