"""Jupyter notebooks (``.ipynb``) -> Markdown: their Markdown cells as written, code cells fenced.

Docs and books built with Jupyter Book, nbsphinx or mkdocs-jupyter keep tutorials as
notebooks. Outputs are left out: they are what running the code printed (tables, logs,
base64 images), often long, and rarely what a question asks about; the code that made them
is kept. Raw cells (build-time markup) are left out too. The Markdown then goes through the
same reader as a ``.md`` page, so MyST markup in cells is read as well.
"""

from __future__ import annotations

import json
import re
from typing import Any

from core.ingest.document import fenced

_LANGUAGE = re.compile(r"[\w+#.-]+")


def notebook_markdown(text: str) -> str:
    """The notebook's cells as one Markdown text, in order.

    Args:
        text: the ``.ipynb`` file's JSON.

    Raises:
        ValueError: saying why ``text`` is no notebook (the loader names the file).
    """
    try:
        notebook = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not a Jupyter notebook (invalid JSON: {exc.msg} at line {exc.lineno})") from exc
    cells = _cells(notebook)
    if cells is None:
        raise ValueError("not a Jupyter notebook (no list of cells)")
    language = _language(notebook.get("metadata"))
    parts: list[str] = []
    for cell in cells:
        if not isinstance(cell, dict):
            continue
        source = _source(cell.get("source", cell.get("input"))).strip("\n")  # "input": nbformat 3
        kind = cell.get("cell_type")
        if not source.strip():
            continue
        if kind == "markdown":
            parts.append(source)
        elif kind == "heading":  # nbformat 3 kept headings in cells of their own
            parts.append(f"{'#' * min(max(int(cell.get('level') or 1), 1), 6)} {source}")
        elif kind == "code":
            parts.append(fenced(source, language))
    return "\n\n".join(parts) + "\n"


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


def _source(source: Any) -> str:
    """A cell's source: a list of lines (nbformat 4) or one string."""
    if isinstance(source, list):
        return "".join(part for part in source if isinstance(part, str))
    return source if isinstance(source, str) else ""


def _language(metadata: Any) -> str:
    """The notebook's programming language, for its code fences ("python" when unsaid)."""
    if isinstance(metadata, dict):
        for key, field in (("kernelspec", "language"), ("language_info", "name")):
            info = metadata.get(key)
            if isinstance(info, dict) and (name := _LANGUAGE.match(str(info.get(field) or "").strip())):
                return name.group().lower()
    return "python"
