"""Where a docs file is published: Docusaurus URLs (ordering prefixes, ``index``, slugs), Sphinx
URLs (``.rst`` pages) and titles."""

from __future__ import annotations

import re
from pathlib import Path, PurePath, PurePosixPath
from typing import Any
from urllib.parse import quote

from core.ingest.asciidoc import SUFFIXES as ASCIIDOC_SUFFIXES
from core.ingest.asciidoc import served_page
from core.ingest.front_matter import text_value

#: Stems that stand for their folder in URLs and titles (Docusaurus, and Hugo's section page ``_index.md``).
INDEX_STEMS = frozenset({"index", "readme", "_index"})
_NUMBER_PREFIX = re.compile(r"^\d+\s*[-_.]+\s*(?=[^-_.\s])")
#: Names Docusaurus reads no ordering prefix in: version-like (``1.1-intro``, ``8.0``), which takes
#: in its date-like ones (``2024-01-31-release``): its ``DefaultNumberPrefixParser``'s ignored patterns.
_NO_PREFIX = re.compile(r"^\d+[-_.]\d")


def stands_for_folder(relative_path: str) -> bool:
    """Whether a file is its folder's page: ``index.md``, ``README.md``, Hugo's ``_index.md``, or
    a Next.js route's ``page.mdx`` (``is_route_page``)."""
    pure = PurePosixPath(relative_path)
    return pure.stem.lower() in INDEX_STEMS or is_route_page(pure)


def is_route_page(path: PurePath) -> bool:
    """Whether a file is a page of Next.js' App Router (Nextra 4): ``page.mdx`` under an ``app/`` folder,
    served at its folder's route (``app/docs/search/page.mdx`` at ``/docs/search``)."""
    return path.name.lower() == "page.mdx" and "app" in path.parent.parts


def _routes(folder: list[str]) -> list[str]:
    """A route page's folders as its address: without ``app/`` (and what holds it, ``src/``) and
    the route groups (``(docs)``) the URL leaves out."""
    if "app" in folder:
        folder = folder[folder.index("app") + 1:]
    return [part for part in folder if not (part.startswith("(") and part.endswith(")"))]


def served_parts(relative_path: str, *, route: bool = False) -> tuple[str, ...]:
    """A page's path as far as its address carries it: a route page (``route``) by its route."""
    pure = PurePosixPath(relative_path)
    return (*_routes(list(pure.parent.parts)), pure.name) if route else pure.parts


def strip_number_prefix(name: str) -> str:
    """Drop an ordering prefix like Docusaurus does: ``01-module-ros`` -> ``module-ros``.

    Date-like and version-like names (``2024-01-31-release``, ``1.1-intro``) keep theirs, as in Docusaurus.
    """
    if _NO_PREFIX.match(name):
        return name
    return _NUMBER_PREFIX.sub("", name, count=1)


def docusaurus_url(
    relative_path: str, *, base_url: str, slug: str | None = None, doc_id: str | None = None,
    route: bool = False,
) -> str:
    """Map a docs file to its published URL the way Docusaurus does.

    ``module-1/intro.md`` under ``https://book.dev/docs`` is
    ``https://book.dev/docs/module-1/intro``; ordering prefixes are dropped
    (``01-intro/02-setup.md`` -> ``intro/setup``); ``index``/``README`` stand for their
    folder; an absolute ``slug`` (``/x/y``) replaces the path, a relative one
    replaces the file name, as does a front matter ``id``.

    Args:
        relative_path: path below the docs root, with forward slashes.
        base_url: the docs' base URL (a trailing slash is ignored).
        slug: front matter ``slug``, if any.
        doc_id: front matter ``id``, if any.
        route: the file is a Next.js route's page (``is_route_page``, read off its whole path: the
            ``app/`` folder may be the one ingested).

    Returns:
        The page URL, percent-encoded.
    """
    base = base_url.rstrip("/")
    pure = PurePosixPath(relative_path)
    folder = [strip_number_prefix(p) for p in pure.parent.parts if p not in ("", ".")]
    folder = _routes(folder) if route else folder
    if slug:
        slug = slug.strip()
        parts = slug.strip("/").split("/") if slug.startswith("/") else [*folder, *slug.strip("/").split("/")]
    else:
        # A folder's index page is served at the folder, whatever ``id`` it gives itself.
        index = route or pure.stem.lower() in INDEX_STEMS
        stem = doc_id.strip() if doc_id and not index else strip_number_prefix(pure.stem)
        parts = folder if index else [*folder, stem]
    path = "/".join(quote(p) for p in parts if p)
    return f"{base}/{path}" if path else base


def sphinx_url(relative_path: str, *, base_url: str) -> str:
    """Map an ``.rst`` page to its published URL the way Sphinx's HTML builder does.

    ``guide/install.rst`` under ``https://lib.dev/en/latest`` is
    ``https://lib.dev/en/latest/guide/install.html``; an ``index.rst`` stands for its folder.
    """
    pure = PurePosixPath(relative_path)
    parts = [p for p in pure.parent.parts if p not in ("", ".")]
    page = "" if pure.stem.lower() == "index" else f"{quote(pure.stem)}.html"
    path = "/".join([*(quote(p) for p in parts), page])
    return f"{base_url.rstrip('/')}/{path}"


def asciidoc_url(path: Path, relative_path: str, *, root: Path, base_url: str) -> str:
    """Map an AsciiDoc page to its published URL under the site's ``base_url``: Antora's
    (``served_page``), else the page's path as ``.html``."""
    served = served_page(path, root=root) or PurePosixPath(relative_path).with_suffix(".html").as_posix()
    return f"{base_url.rstrip('/')}/{quote(served)}"


def prettify_stem(relative_path: str) -> str:
    """Title from a file name: ``ros2-lab_exercises.md`` -> ``Ros2 Lab Exercises``.

    An ``index``/``README`` file is named after its folder.
    """
    pure = PurePosixPath(relative_path)
    stem = pure.stem
    if stands_for_folder(relative_path) and pure.parent.name:
        routed = _routes(list(pure.parent.parts)) if is_route_page(pure) else [pure.parent.name]
        stem = routed[-1] if routed else stem
    words = re.sub(r"[-_\s]+", " ", stem).strip()
    return " ".join(w[:1].upper() + w[1:] for w in words.split(" ")) or stem or "Untitled"


def document_url(path: Path, relative: str, *, base_url: str | None, front_matter: dict[str, Any]) -> str:
    """The link shown for a file: its Docusaurus URL under ``base_url``, else its ``file://`` URI."""
    if base_url is None:
        return path.resolve().as_uri()
    if path.suffix.lower() == ".rst":
        return sphinx_url(relative, base_url=base_url)
    if path.suffix.lower() in ASCIIDOC_SUFFIXES:
        root = path.parents[len(PurePosixPath(relative).parts) - 1]
        return asciidoc_url(path, relative, root=root, base_url=base_url)
    return docusaurus_url(
        relative,
        base_url=base_url,
        slug=text_value(front_matter.get("slug")) or None,
        doc_id=text_value(front_matter.get("id")) or None,
        route=is_route_page(path.resolve()),
    )
