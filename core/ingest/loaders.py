"""Turn one docs file (Markdown, MDX, HTML, plain text) into a ``LoadedDocument``.

This module only dispatches on the file's suffix; each format has its own module:
``markdown.py`` (Markdown and MDX), ``front_matter.py``, ``html.py``, ``text.py``,
and ``urls.py`` for where a file is published. Parsing is pure: those modules take
text and return typed values; only ``load_file`` touches the disk.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from core.errors import IngestSourceError
from core.ingest.document import LoadedDocument, Section, clip_title
from core.ingest.front_matter import parse_front_matter, tag_list, text_value
from core.ingest.html import parse_html
from core.ingest.markdown import parse_markdown
from core.ingest.text import decode_text, parse_plain_text
from core.ingest.urls import document_url, prettify_stem

__all__ = [
    "SUPPORTED_SUFFIXES",
    "LoadedDocument",
    "Section",
    "is_supported",
    "load_file",
]

MARKDOWN_SUFFIXES = frozenset({".md", ".markdown"})
MDX_SUFFIXES = frozenset({".mdx"})
HTML_SUFFIXES = frozenset({".html", ".htm"})
TEXT_SUFFIXES = frozenset({".txt", ".rst"})
SUPPORTED_SUFFIXES = MARKDOWN_SUFFIXES | MDX_SUFFIXES | HTML_SUFFIXES | TEXT_SUFFIXES


class Parsed(NamedTuple):
    """What a format's parser found in a file's text."""

    title: str | None
    sections: list[Section]
    front_matter: dict[str, Any]


def _markdown(text: str) -> Parsed:
    front_matter, body = parse_front_matter(text)
    h1, sections = parse_markdown(body)
    return Parsed(text_value(front_matter.get("title")) or h1, sections, front_matter)


def _html(text: str) -> Parsed:
    title, sections = parse_html(text)
    return Parsed(title, sections, {})


def _plain_text(text: str) -> Parsed:
    return Parsed(None, parse_plain_text(text), {})


#: The parser of each supported suffix.
PARSERS: dict[str, Callable[[str], Parsed]] = {
    **dict.fromkeys(MARKDOWN_SUFFIXES | MDX_SUFFIXES, _markdown),
    **dict.fromkeys(HTML_SUFFIXES, _html),
    **dict.fromkeys(TEXT_SUFFIXES, _plain_text),
}


def is_supported(path: Path) -> bool:
    """Return True when ``load_file`` knows the file's type (``_category_.json`` and friends are not)."""
    return path.suffix.lower() in SUPPORTED_SUFFIXES


def load_file(path: Path, *, root: Path, base_url: str | None = None) -> LoadedDocument:
    """Read and parse one file below ``root``.

    Args:
        path: the file.
        root: the ingest root; ``source_document`` is ``path`` relative to it.
        base_url: the published docs' base URL (Docusaurus style); None gives ``file://`` URLs.

    Returns:
        The parsed document; its title is the front matter's, else the first heading,
        else one made from the file name.

    Raises:
        IngestSourceError: naming the file when its type is unsupported, it cannot be
            read, or it is not UTF-8 text.
    """
    suffix = path.suffix.lower()
    parse = PARSERS.get(suffix)
    if parse is None:
        raise IngestSourceError(f"{path}: unsupported file type {suffix or '(none)'!r}")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise IngestSourceError(f"{path}: cannot be read: {exc.strerror or exc}") from exc
    parsed = parse(decode_text(raw, name=str(path)))
    relative = path.relative_to(root).as_posix()
    return LoadedDocument(
        source_document=relative,
        title=clip_title(parsed.title or prettify_stem(relative)),
        url=document_url(path, relative, base_url=base_url, front_matter=parsed.front_matter),
        sections=parsed.sections,
        raw_sha256=hashlib.sha256(raw).hexdigest(),
        tags=tag_list(parsed.front_matter.get("tags")),
        front_matter=parsed.front_matter,
    )
