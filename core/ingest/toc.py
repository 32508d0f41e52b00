"""A book's table of contents: the titles mdBook gives its pages.

mdBook names each chapter in ``SUMMARY.md`` (``- [Validating References with
Lifetimes](ch10-03-lifetime-syntax.md)``) and many chapters open at ``##`` without a title of
their own; read alone, such a page was titled from its file name ("Ch10 03 Lifetime Syntax").
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote

from core.errors import IngestSourceError

#: The table of contents mdBook reads, at the root of the book's source folder.
SUMMARY = "SUMMARY.md"
#: ``[Title](path.md)`` of one entry; a draft chapter (``[Title]()``) names no file.
_ENTRY = re.compile(r"\[(?P<title>[^\[\]\n]+)\]\((?P<path>[^()\s]+)\)")


def book_titles(root: Path, read: Callable[[Path], bytes]) -> dict[str, str]:
    """The title ``SUMMARY.md`` under ``root`` gives each page, by its path in the folder.

    Args:
        root: the folder ingested.
        read: reads a file below ``root`` (refusing links out of it).

    Returns:
        ``{"ch10-03-lifetime-syntax.md": "Validating References with Lifetimes"}``; empty
        when there is no table of contents or it cannot be read.
    """
    summary = root / SUMMARY
    if not summary.is_file():
        return {}
    try:
        text = read(summary).decode("utf-8", errors="replace")
    except (IngestSourceError, OSError):
        return {}
    titles: dict[str, str] = {}
    for match in _ENTRY.finditer(text):
        path = posixpath.normpath(unquote(match["path"].split("#", 1)[0]))
        title = " ".join(match["title"].replace("`", "").replace("*", "").split())
        if title and not path.startswith("../"):
            titles.setdefault(path, title)
    return titles
