"""Docusaurus' partials: Markdown a page imports and shows where it writes the component.

``import Warning from '../components/_Warning.mdx'`` then ``<Warning />`` puts the partial's
text there on the site; read alone, the page lost it (a caution shown atop every chapter of a
tutorial), and the partial was ingested as a page of its own, at an address the site never
serves: Docusaurus publishes no file whose name starts with ``_``. Here the partial's text
takes the component's place, and ``is_partial`` names the files ingest leaves out.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from pathlib import Path

from core.errors import IngestSourceError
from core.ingest.fences import Fences
from core.ingest.front_matter import parse_front_matter
from core.ingest.spans import outside_code_spans
from core.ingest.text import decode_text

#: ``import Name from './_partial.mdx'`` (a relative path to Markdown), or Mintlify's
#: ``import Name from '/snippets/name.mdx'`` (from the docs' root), or through a bundler's alias
#: (``@components/install.mdx``, ``@/components/install.mdx``: Nextra's sites).
_IMPORT = re.compile(
    r"""^import\s+(?P<name>[A-Z]\w*)\s+from\s+(['"])"""
    r"""(?P<path>(?:\.{1,2}|[@~][\w-]*)?/[^'"\n]+\.mdx?)\2;?[ \t]*$""", re.M)
#: What marks a Mintlify site's root: its ``snippets/`` folder holds partials, never pages.
_MINTLIFY_CONFIGS = ("docs.json", "mint.json")
#: A link's relative target (``](../guide.md#x)``), as the partial writes it (not a site path, ``/docs/x``,
#: nor an address, ``https://x``).
_LINK = re.compile(r"\]\((?P<target>[^\s()<>:#/][^\s()<>:#]*)(?=[\s)#])")  # not "https:"
#: Partials inside partials are read this deep.
_MAX_DEPTH = 2


def _links_moved(text: str, *, written_in: Path, shown_in: Path) -> str:
    """A partial's relative links, outside code, rewritten to point where they did from the page."""
    def moved(link: re.Match[str]) -> str:
        target = posixpath.normpath(posixpath.join(written_in.as_posix(), link["target"]))
        return f"]({posixpath.relpath(target, shown_in.as_posix())}"

    lines = text.split("\n")
    fences = Fences()
    for k, line in enumerate(lines):
        if not fences.code(line) and "](" in line:
            lines[k] = outside_code_spans(line, lambda prose: _LINK.sub(moved, prose))
    return "\n".join(lines)


def is_partial(path: Path) -> bool:
    """Whether a file is a partial, no page: Docusaurus' ``_Warning.mdx``, or a Mintlify snippet.

    Hugo's ``_index.mdx`` is a page. Only MDX starts with ``_``: MkDocs and mdBook publish a
    ``_notes.md``, and a ``.md`` partial is rare. Mintlify serves nothing under the ``snippets/``
    folder beside its ``docs.json`` (or ``mint.json``).
    """
    if path.name.startswith("_") and path.suffix.lower() == ".mdx" and path.stem.lower() != "_index":
        return True
    return any(folder.name == "snippets" and _is_mintlify_root(folder.parent) for folder in path.parents)


def _is_mintlify_root(folder: Path) -> bool:
    return any((folder / name).is_file() for name in _MINTLIFY_CONFIGS)


def in_mintlify_site(path: Path, *, root: Path) -> bool:
    """Whether a page is in a Mintlify site: its folder or one above it, up to ``root``, holds its
    ``docs.json`` (or ``mint.json``)."""
    return any(_is_mintlify_root(folder) for folder in path.parents if folder.is_relative_to(root))


def _partial_path(imported: str, *, page: Path, root: Path) -> Path:
    """Where an imported partial is: beside the page, or (``/snippets/x.mdx``) under the docs' root.

    A root-relative import is looked for from the page's folder up to the folder ingested, so a
    site ingested from above its root (the repository, not its ``docs/``) finds it too.
    """
    if imported.startswith("."):
        return page.parent / imported
    # An alias names a folder of the project (``@components`` -> ``components``), found as ``/snippets``.
    inside = imported.lstrip("@~/") if imported[0] in "@~" else imported.lstrip("/")
    # ... or the site's root (Docusaurus' ``@site/docs/_x.mdx``).
    tried = [inside, inside.split("/", 1)[-1]] if imported[0] in "@~" else [inside]
    folders = [folder for folder in page.parents if folder.is_relative_to(root)]
    found = (folder / path for path in tried for folder in folders if (folder / path).is_file())
    return next(found, root / inside)


def with_partials(text: str, *, path: Path, root: Path, read: Callable[[Path], bytes], depth: int = 0) -> str:
    """``text`` (the page at ``path``) with each imported partial's text where its component is written.

    Args:
        text: the page.
        path: where the page is; imports are relative to its folder.
        root: the folder ingested; an import from ``/`` is under it.
        read: reads a file inside the docs (refusing one outside them).
        depth: how many partials in this one is.
    """
    if "import" not in text or depth >= _MAX_DEPTH:
        return text
    bodies: dict[str, str] = {}
    for match in _IMPORT.finditer(text):
        partial = _partial_path(match["path"], page=path, root=root)
        try:
            body = parse_front_matter(decode_text(read(partial), name=str(partial)))[1]
        except (IngestSourceError, OSError):
            continue  # not there to read: the component stays, and is left out as a tag
        body = with_partials(body, path=partial, root=root, read=read, depth=depth + 1).strip("\n")
        bodies[match["name"]] = _links_moved(body, written_in=partial.parent, shown_in=path.parent)
    if not bodies:
        return text
    names = "|".join(map(re.escape, bodies))
    # Mintlify passes a snippet props (``<Snippet word="x" />``); what it does with them is left out.
    usage = re.compile(rf"^[ \t]*<(?P<name>{names})(?:\s[^<>]*?)?(?:/>|>[ \t]*</(?P=name)>)[ \t]*$")
    lines = text.split("\n")
    fences = Fences()
    for k, line in enumerate(lines):
        if not fences.code(line) and (used := usage.match(line)):
            lines[k] = f"\n{bodies[used['name']]}\n"
    return "\n".join(lines)
