"""One AsciiDoc page read as Markdown: its includes, its attributes, the titles its ``xref``s show.

Imported only when a page is read (``core.ingest.loaders``): its patterns take a while to compile,
and no other command needs them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from core.errors import IngestSourceError
from core.ingest.asciidoc.antora import component_of, resource_path
from core.ingest.asciidoc.attributes import BASE_ATTRIBUTES
from core.ingest.asciidoc.blocks import to_markdown
from core.ingest.asciidoc.inline import inline
from core.ingest.asciidoc.preprocess import Reader
from core.ingest.text import decode_text

__all__ = ["asciidoc_markdown"]


def asciidoc_markdown(text: str, *, path: Path, root: Path, read: Callable[[Path], bytes]) -> str:
    """The AsciiDoc page at ``path`` as Markdown, with what it includes.

    Args:
        text: the page.
        path: where it is: includes are read from beside it, or from its Antora component.
        root: the folder ingested; nothing outside it is read.
        read: reads a file inside the docs (refusing one outside them).
    """
    component = component_of(path, root=root)
    attributes = {**BASE_ATTRIBUTES, **(component.attributes if component else {}),
                  "docname": path.stem, "docfilesuffix": path.suffix}
    if component is not None:
        attributes["page-module"] = component.module_of(path) or "ROOT"
    reader = Reader(read=read, component=component, attributes=dict(attributes))
    lines = reader.lines(text, path=path)

    def page_title(target: str) -> str | None:
        """The title of the page an ``xref`` names (``xref:install.adoc[]``)."""
        found = resource_path(target, including=path, component=component, xref=True)
        return None if found is None else _title_of(found, read, component.attributes if component else {})

    return to_markdown(lines, attributes=attributes, page_title=page_title)


#: A page's title is on one of its first lines, after its comments and attributes.
_TITLE_LINES = 40


def _title_of(path: Path, read: Callable[[Path], bytes], attributes: Mapping[str, str]) -> str | None:
    """The document title (``= Title``) of the AsciiDoc page at ``path``, read as shown; None for none."""
    try:
        state = path.stat()
        key = (path, state.st_mtime_ns, state.st_size)  # a changed page is read again
        if key not in _TITLES:
            if len(_TITLES) >= _MAX_TITLES:
                _TITLES.clear()
            lines = decode_text(read(path), name=str(path)).split("\n", _TITLE_LINES)[:_TITLE_LINES]
            _TITLES[key] = next((line[2:].strip() for line in lines if line.startswith("= ")), None)
    except (OSError, IngestSourceError):
        return None
    title = _TITLES[key]
    return inline(title, attributes, {}) if title else None


#: Pages' titles as written, by path and version: pages cite the same pages over and over.
_TITLES: dict[tuple[Path, int, int], str | None] = {}
_MAX_TITLES = 4096
