"""AsciiDoc books: a master page includes its chapters, a chapter its sections.

Asciidoctor publishes the master (``progit.asc`` includes ``ch01-getting-started.asc``, which
includes ``sections/installing.asc``); read as pages of their own too, each section was stored
three times, and answers cited one passage from three files. Outside Antora (whose families say
what a page is, ``core.ingest.asciidoc.antora``), a file another page includes is read there only.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable
from pathlib import Path

from core.errors import IngestSourceError
from core.ingest.asciidoc.antora import component_of
from core.ingest.asciidoc.attributes import BASE_ATTRIBUTES
from core.ingest.asciidoc.preprocess import SUFFIXES, Reader
from core.ingest.text import decode_text

__all__ = ["included_pages"]


def included_pages(files: Iterable[Path], *, root: Path, read: Callable[[Path], bytes]) -> set[Path]:
    """The AsciiDoc files (outside Antora) that a page among ``files`` includes whole.

    Only what a page shows counts: an include under a condition that does not hold, or in a
    comment, does not; one picking lines or tags (``tag=summary``) leaves the file a page too.
    Includes are followed down from the pages no one includes; a loop of files including each
    other, which no such page reaches, stays: its files are pages.

    Args:
        files: the files found.
        root: the folder ingested.
        read: reads a file inside the docs.
    """
    pages = {path for path in files
             if path.suffix.lower() in SUFFIXES and component_of(path, root=root) is None}
    edges = {path: [target for target in _includes(path, read) if target in pages]
             for path in pages}
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
    """The files a page includes whole, as the preprocessor reads its includes (not reading them)."""
    try:
        text = decode_text(read(path), name=str(path))
    except (IngestSourceError, OSError):
        return []
    if "include::" not in text:
        return []
    reader = Reader(read=read, component=None, attributes=dict(BASE_ATTRIBUTES), follow=False)
    try:
        reader.lines(text, path=path)
    except (ValueError, RecursionError):  # the walk goes on: the page is read (or refused) on its own
        return []
    # On paper: ``sections/../sections/a.adoc`` is the file the walk found as ``sections/a.adoc``.
    return [Path(posixpath.normpath(target.as_posix())) for target in reader.includes]
