"""What Sphinx shows for a cross-reference that gives no title: the title of the section or page it names.

``:ref:`topics-settings``` reads "Settings" on the site and ``:doc:`topics/addons``` the title
of that page; read one page at a time, answers showed the label ("see autothrottle-algorithm")
or the path. Before a folder of ``.rst`` pages is read, each is scanned (no docutils: a few
regular expressions) for its title and for the labels set on its sections (``.. _label:`` above
a heading); while a page is read, ``reading_from`` makes them known to the roles that show them.
A label the scan does not know (set on a figure, or in a page not ingested) shows as written.
"""

from __future__ import annotations

import contextlib
import posixpath
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

from core.errors import IngestSourceError
from core.ingest.text import decode_text

#: ``.. _label:`` (an explicit target; ``.. _a: https://...`` names a link, not a section).
_LABEL = re.compile(r"\.\.\s+_(?P<label>[^:`\n][^:\n]*|`[^`\n]+`):\s*$")
#: A section title's underline or overline: one punctuation character repeated.
_ADORNMENT = re.compile(r"([=\-~^\"'`#*+<>:.,_!$%&()/;?@\[\\\]{|}])\1{2,}\s*$")


@dataclass(frozen=True, slots=True)
class SphinxTargets:
    """Section titles by label and page titles by path (without suffix) of a folder of ``.rst`` pages."""

    labels: Mapping[str, str] = field(default_factory=dict)
    pages: Mapping[str, str] = field(default_factory=dict)


_reading: ContextVar[tuple[SphinxTargets, str] | None] = ContextVar("ragbot_sphinx_targets", default=None)


def sphinx_targets(root: Path, pages: Iterable[Path], read: Callable[[Path], bytes]) -> SphinxTargets:
    """The titles the ``.rst`` files among ``pages`` (below ``root``) give their labels and themselves.

    A page that cannot be read is left out: it is reported when it is ingested.
    """
    labels: dict[str, str] = {}
    titles: dict[str, str] = {}
    for path in pages:
        if path.suffix.lower() != ".rst":
            continue
        try:
            text = decode_text(read(path), name=str(path))
        except (IngestSourceError, OSError):
            continue
        page_title, page_labels = _scan(text.splitlines())
        if page_title:
            titles[path.relative_to(root).with_suffix("").as_posix()] = page_title
        for label, title in page_labels.items():
            labels.setdefault(label, title)
    return SphinxTargets(labels=labels, pages=titles)


def _scan(lines: list[str]) -> tuple[str, dict[str, str]]:
    """A page's first section title, and the title of each section a label is set on."""
    first = ""
    labels: dict[str, str] = {}
    pending: list[str] = []
    for k, line in enumerate(lines):
        if not line.strip():
            continue
        label = _LABEL.match(line)
        if label is not None:
            pending.append(_normal(label["label"].strip("`")))
            continue
        title = _title_at(lines, k)
        if title and not first:
            first = title
        for name in pending:
            if title:
                labels[name] = title
        pending = []
    return first, labels


def _title_at(lines: list[str], k: int) -> str:
    """The section title starting at line ``k`` (under an overline, or above an underline), if one does."""
    line = lines[k]
    if _ADORNMENT.match(line) and k + 2 < len(lines) and _ADORNMENT.match(lines[k + 2]):
        return lines[k + 1].strip()
    below = lines[k + 1] if k + 1 < len(lines) else ""
    text = line.strip()
    if (text and not line[:1].isspace() and not _ADORNMENT.match(line) and _ADORNMENT.match(below)
            and len(below.rstrip()) >= len(text)):
        return text
    return ""


def _normal(label: str) -> str:
    """A label as Sphinx compares them: case folded, spaces collapsed."""
    return " ".join(label.split()).casefold()


@contextlib.contextmanager
def reading_from(targets: SphinxTargets | None, page: str) -> Iterator[None]:
    """Make ``targets`` known to the roles of the page at ``page`` (below the root) while it is read."""
    token = _reading.set((targets, page) if targets is not None else None)
    try:
        yield
    finally:
        _reading.reset(token)


def target_title(role: str, target: str) -> str | None:
    """What ``:ref:`` or ``:doc:`` with no title shows for ``target`` on the page read (None: unknown)."""
    reading = _reading.get()
    if reading is None:
        return None
    targets, page = reading
    if role == "ref":
        return targets.labels.get(_normal(target))
    if role == "doc":
        here = posixpath.dirname(page)
        path = target.lstrip("/") if target.startswith("/") else posixpath.join(here, target)
        return targets.pages.get(posixpath.normpath(path).removesuffix(".rst"))
    return None
