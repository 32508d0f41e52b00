"""AsciiDoc pages (``.adoc``: Asciidoctor's syntax, Antora's sites) read as Markdown.

No well-kept Python library reads today's AsciiDoc: ``asciidoc`` (asciidoc-py) reads the legacy
syntax and, in its safe mode, refused every page of an Antora site tried (``ifeval``); the Lark-based
parsers are alpha. So the preprocessor (``preprocess``), blocks (``blocks``), tables (``tables``) and
inline markup (``inline``) are read here, into Markdown that ``core.ingest.markdown`` reads as it
reads any page; ``antora`` knows an Antora component's layout and attributes.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from core.ingest.asciidoc.antora import component_of, is_unpublished, served_page
from core.ingest.asciidoc.blocks import to_markdown
from core.ingest.asciidoc.preprocess import SUFFIXES, Reader

__all__ = ["SUFFIXES", "asciidoc_markdown", "is_unpublished", "served_page"]

#: What every page reads: the HTML backend's attributes, as a site built with Asciidoctor sets them.
_BASE_ATTRIBUTES = {"backend": "html5", "backend-html5": "", "basebackend": "html", "basebackend-html": "",
                    "embedded": "", "asciidoctor": "", "safe-mode-name": "safe"}


def asciidoc_markdown(text: str, *, path: Path, root: Path, read: Callable[[Path], bytes]) -> str:
    """The AsciiDoc page at ``path`` as Markdown, with what it includes.

    Args:
        text: the page.
        path: where it is: includes are read from beside it, or from its Antora component.
        root: the folder ingested; nothing outside it is read.
        read: reads a file inside the docs (refusing one outside them).
    """
    component = component_of(path, root=root)
    attributes = {**_BASE_ATTRIBUTES, **(component.attributes if component else {}),
                  "docname": path.stem, "docfilesuffix": path.suffix}
    reader = Reader(root=root, read=read, component=component, attributes=dict(attributes))
    lines = reader.lines(text, path=path)
    return to_markdown(lines, attributes=attributes)
