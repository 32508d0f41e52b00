"""AsciiDoc pages (``.adoc``: Asciidoctor's syntax, Antora's sites) read as Markdown.

No well-kept Python library reads today's AsciiDoc: ``asciidoc`` (asciidoc-py) reads the legacy
syntax and, in its safe mode, refused every page of an Antora site tried (``ifeval``); the Lark-based
parsers are alpha. So the preprocessor (``preprocess``), blocks (``blocks``), tables (``tables``) and
inline markup (``inline``) are read here, into Markdown that ``core.ingest.markdown`` reads as it
reads any page (``page``, imported when a page is read); ``antora`` knows an Antora component's
layout and attributes, ``books`` which files a book includes.
"""

from __future__ import annotations

from core.ingest.asciidoc.antora import is_unpublished, served_page
from core.ingest.asciidoc.books import included_pages
from core.ingest.asciidoc.preprocess import SUFFIXES

__all__ = ["SUFFIXES", "included_pages", "is_unpublished", "served_page"]
