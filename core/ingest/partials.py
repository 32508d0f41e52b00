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

#: ``import Name from './_partial.mdx'`` (a relative path to Markdown).
_IMPORT = re.compile(
    r"""^import\s+(?P<name>[A-Z]\w*)\s+from\s+(['"])(?P<path>\.{1,2}/[^'"\n]+\.mdx?)\2;?[ \t]*$""", re.M)
#: A link's relative target (``](../guide.md#x)``), as the partial writes it (not a site path, ``/docs/x``).
_LINK = re.compile(r"\]\((?P<target>[^\s()<>:#/][^\s()<>:#]*)")
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
    """Whether a file is an MDX partial (``_Warning.mdx``), no page; Hugo's ``_index.mdx`` is a page.

    Only MDX: MkDocs and mdBook publish a ``_notes.md``, and a ``.md`` partial is rare.
    """
    return path.name.startswith("_") and path.suffix.lower() == ".mdx" and path.stem.lower() != "_index"


def with_partials(text: str, *, path: Path, read: Callable[[Path], bytes], depth: int = 0) -> str:
    """``text`` (the page at ``path``) with each imported partial's text where its component is written.

    Args:
        text: the page.
        path: where the page is; imports are relative to its folder.
        read: reads a file inside the docs (refusing one outside them).
        depth: how many partials in this one is.
    """
    if "import" not in text or depth >= _MAX_DEPTH:
        return text
    bodies: dict[str, str] = {}
    for match in _IMPORT.finditer(text):
        partial = path.parent / match["path"]
        try:
            body = parse_front_matter(decode_text(read(partial), name=str(partial)))[1]
        except (IngestSourceError, OSError):
            continue  # not there to read: the component stays, and is left out as a tag
        body = with_partials(body, path=partial, read=read, depth=depth + 1).strip("\n")
        bodies[match["name"]] = _links_moved(body, written_in=partial.parent, shown_in=path.parent)
    if not bodies:
        return text
    names = "|".join(map(re.escape, bodies))
    usage = re.compile(rf"^[ \t]*<(?P<name>{names})\s*(?:/>|>\s*</(?P=name)>)[ \t]*$")
    lines = text.split("\n")
    fences = Fences()
    for k, line in enumerate(lines):
        if not fences.code(line) and (used := usage.match(line)):
            lines[k] = f"\n{bodies[used['name']]}\n"
    return "\n".join(lines)
