"""Links between pages of the docs, given the addresses the published site gives those pages.

A page links to another by its file (``[models](../concepts/models.md#fields)``) or by its path
on the site (``[Getting Started](/getting-started/)``); neither is an address chat can open,
so answers showed such links as their bare text ("see Serialization"). With the site's base
URL known, each becomes the address ``document_url`` gives the page it names, whether the link
names its file or the path the site serves it at (``./build``, ``build.html``). A link to anything
else (a picture, a file of code, a folder outside the docs) stays as written; a site path naming
no file is read against the base URL. A ``slug`` or ``id`` the linked page's front matter sets
is followed (Docusaurus serves ``WritingTests.mdx`` with ``id: writing-tests`` as ``writing-tests``);
a page linking to it is stored again only when it changes itself.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Collection
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urljoin

from core.ingest.document import Section
from core.ingest.markdown import is_code_block
from core.ingest.spans import set_code_aside

#: ``[text](target)`` (no picture), the target without spaces or an address' scheme.
_LINK = re.compile(r"(?<![!\\])\[(?P<text>(?:[^\[\]\n]|\n(?![ \t]*\n))*)\]\((?P<target>[^\s()<>:]+)\)")
#: What a site serves a page as, whose source has another suffix (VitePress' ``build.html``).
_SERVED = frozenset({".html", ".htm"})
#: The source files a page served without a suffix may have, and a folder's page.
_SOURCES = (".md", ".mdx", ".rst", ".ipynb")
_INDEXES = ("index.md", "index.mdx", "README.md", "_index.md", "index.rst")


def site_links(
    sections: list[Section], *, relative: str, base_url: str, root: Path, page_suffixes: Collection[str],
    page_url: Callable[[str], str],
) -> tuple[list[Section], bool]:
    """``sections`` with links to other pages of the docs written as the site's addresses.

    Args:
        sections: the page's sections.
        relative: the page's path in the docs (``concepts/models.md``).
        base_url: the published site's base URL; a site path (``/guides/``) is read against it.
        root: the docs' folder, where a link without a suffix (``./build``) finds its page.
        page_suffixes: the suffixes of files that are pages (``.md``, ``.rst``).
        page_url: the address of the page at a path in the docs.

    Returns:
        The sections, and whether a link was rewritten.
    """
    here = posixpath.dirname(relative)
    changed = False
    docs = root.resolve()

    def rewrite(match: re.Match[str]) -> str:
        nonlocal changed
        target, _, anchor = match["target"].partition("#")
        if not target:
            return match[0]
        path = _in_docs(unquote(target), here)
        page = None if path is None else _page(path, docs, page_suffixes)
        if page is not None:
            url = page_url(page)
        elif target.startswith("/"):
            url = urljoin(base_url if base_url.endswith("/") else f"{base_url}/", target)
        else:
            return match[0]
        changed = True
        return f"[{match['text']}]({url}{'#' + anchor if anchor else ''})"

    def prose(block: str) -> str:
        if "](" not in block or "\x00" in block or is_code_block(block):
            return block
        # What a code span writes is no link, but a link's text may be one ("[`Field()`](fields.md)").
        marked, back = set_code_aside(block)
        return back(_LINK.sub(rewrite, marked))

    out = [Section(section.headings, [prose(block) for block in section.blocks]) for section in sections]
    return out, changed


def _in_docs(target: str, here: str) -> str | None:
    """The path in the docs a link's (unescaped) target names from folder ``here``; None when it
    leaves the docs (``../../other``, ``/etc/passwd`` written escaped as ``%2Fetc%2Fpasswd``)."""
    path = posixpath.normpath(target.lstrip("/") if target.startswith("/") else posixpath.join(here, target))
    if path == ".." or path.startswith(("../", "/")) or "\x00" in path:
        return None
    return path


def _page(path: str, docs: Path, page_suffixes: Collection[str]) -> str | None:
    """The page of the docs a link's path names: a page's file, or one the site serves without
    its suffix (``./build``, ``build.html``, ``guide/`` for ``guide/index.md``); None for no page.
    """
    suffix = PurePosixPath(path).suffix.lower()
    if suffix in page_suffixes and suffix not in _SERVED:
        return path
    stem = path[: -len(suffix)] if suffix in _SERVED else path
    candidates = [stem + s for s in _SOURCES] + [f"{stem}/{name}" for name in _INDEXES]
    return next((c for c in candidates if _is_page_file(docs, c)), None)


def _is_page_file(docs: Path, path: str) -> bool:
    """Whether ``path`` is a file inside the (resolved) ``docs`` folder; a link out through a
    symbolic link is none."""
    try:
        file = (docs / path).resolve()
        return file.is_file() and file.is_relative_to(docs)
    except (OSError, ValueError):  # a name too long for the file system, a NUL
        return False
