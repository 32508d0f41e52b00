"""AsciiDoc books: a master page includes its chapters, a chapter its sections.

Asciidoctor publishes the master (``progit.asc`` includes ``ch01-getting-started.asc``, which
includes ``sections/installing.asc``); read as pages of their own too, each section was stored
three times, and answers cited one passage from three files. Outside Antora (whose families say
what a page is, ``core.ingest.asciidoc.antora``), a file another page includes is read there only.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path

from core.errors import IngestSourceError
from core.ingest.asciidoc.antora import component_of
from core.ingest.asciidoc.attributes import entry, substituted
from core.ingest.asciidoc.preprocess import SUFFIXES
from core.ingest.text import decode_text

__all__ = ["included_pages"]

_INCLUDE = re.compile(r"^include::(?P<target>[^\[\s][^\[]*)\[[^\]]*\][ \t]*$", re.M)
_ENTRY = re.compile(r"^:!?[\w][\w-]*!?:.*$", re.M)


def included_pages(files: Iterable[Path], *, root: Path, read: Callable[[Path], bytes]) -> set[Path]:
    """The AsciiDoc files (outside Antora) that a page among ``files`` includes, as far down as
    includes go from a page no one includes; a loop of files including each other, which no such
    page reaches, stays: its files are pages."""
    pages = {path for path in files
             if path.suffix.lower() in SUFFIXES and component_of(path, root=root) is None}
    edges = {path: [target for target in _includes(path, read) if target in pages] for path in pages}
    included = {target for targets in edges.values() for target in targets}
    reached: set[Path] = set()
    pending = [path for path in pages if path not in included]
    while pending:
        for target in edges[pending.pop()]:
            if target not in reached:
                reached.add(target)
                pending.append(target)
    return reached


def _includes(path: Path, read: Callable[[Path], bytes]) -> list[Path]:
    """The files a page includes, by the paths it writes (attributes it sets itself replaced)."""
    try:
        text = decode_text(read(path), name=str(path))
    except (IngestSourceError, OSError):
        return []
    if "include::" not in text:
        return []
    attributes: dict[str, str] = {}
    for line in _ENTRY.findall(text):
        if (setting := entry(line)) is not None and setting[1] is not None:
            attributes[setting[0]] = substituted(setting[1], attributes)
    targets = (substituted(m["target"].strip(), attributes) for m in _INCLUDE.finditer(text))
    return [Path(_normalised(path.parent / target)) for target in targets if "{" not in target]


def _normalised(path: Path) -> str:
    """``path`` with ``..`` and ``.`` resolved on paper: what a link points at needs no disk."""
    parts: list[str] = []
    for part in path.parts:
        if part == "..":
            if parts:
                parts.pop()
        elif part != ".":
            parts.append(part)
    return str(Path(*parts))
