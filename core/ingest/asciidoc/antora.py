"""Antora's layout: a component (``antora.yml``) of modules, each with pages, partials and examples.

``modules/ROOT/pages/install.adoc`` is a page; ``modules/ROOT/partials/`` and ``examples/`` hold
what pages include (``include::partial$intro.adoc[]``, ``include::example$app.rb[tag=main]``),
and ``nav.adoc`` the menu: the site publishes neither. ``antora.yml`` gives the attributes every
page reads (``asciidoc.attributes``).
"""

from __future__ import annotations

import functools
import logging
import re
from pathlib import Path, PurePosixPath
from typing import Any

from core.errors import IngestSourceError

log = logging.getLogger(__name__)

__all__ = ["Component", "component_of", "is_unpublished", "resource_path", "served_page"]

#: What Antora calls each family of files in an include's resource ID, and the folder holding it.
_FAMILIES = {"page": "pages", "partial": "partials", "example": "examples", "attachment": "attachments",
             "image": "images"}
#: A resource ID: ``[version@][component:][module:][family$]path``.
_RESOURCE = re.compile(r"^(?:(?P<version>[^@:$]+)@)?(?:(?P<first>[^:$]+):)?(?:(?P<second>[^:$]+):)?"
                       r"(?:(?P<family>[a-z]+)\$)?(?P<path>[^:$]+)$")
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://", re.I)


class Component:
    """An Antora component: the folder holding ``antora.yml``, its name, version and attributes."""

    def __init__(self, *, folder: Path, name: str, version: str, attributes: dict[str, str]) -> None:
        """A component as ``antora.yml`` describes it (see ``component_of``)."""
        self.folder = folder
        self.name = name
        self.version = version
        self.attributes = attributes

    def module_of(self, path: Path) -> str | None:
        """The module a file is in (``ROOT`` for ``modules/ROOT/pages/x.adoc``), or None."""
        if not path.is_relative_to(self.folder):
            return None
        parts = path.relative_to(self.folder).parts
        return parts[1] if len(parts) > 2 and parts[0] == "modules" else None


def component_of(path: Path, *, root: Path) -> Component | None:
    """The Antora component a file is in: the nearest folder above it, up to ``root``, with ``antora.yml``.

    Its ``modules/`` folder beside it too: an ``antora.yml`` alone is no component's.
    """
    for folder in path.parents:
        if not folder.is_relative_to(root):
            return None
        config = folder / "antora.yml"
        if config.is_file() and (folder / "modules").is_dir():
            try:
                state = config.stat()
            except OSError:
                return None
            return _component(folder, root, state.st_mtime_ns, state.st_size)
    return None


#: ``antora.yml`` is a few lines: a bigger one is not read (its pages are, without its attributes).
_MAX_CONFIG_BYTES = 1024 * 1024
#: An attribute's value longer than this is left out: a version or an address is short.
_MAX_VALUE_CHARS = 10_000


@functools.lru_cache(maxsize=64)
def _component(folder: Path, root: Path, mtime_ns: int, size: int) -> Component:
    """The component ``folder/antora.yml`` describes, cached while the file is unchanged."""
    del mtime_ns  # only the cache's key: an edited antora.yml is read again
    # Imported here: the loaders read AsciiDoc pages with this module; PyYAML only an Antora site needs.
    import yaml

    from core.ingest.loaders import read_regular_file

    config: Any = None
    path = folder / "antora.yml"
    try:  # inside the docs only, never through a link, and never a FIFO
        if size > _MAX_CONFIG_BYTES:
            raise IngestSourceError(f"over {_MAX_CONFIG_BYTES // 1024} KB")
        config = yaml.safe_load(read_regular_file(path, root=root).decode("utf-8"))
    except (IngestSourceError, UnicodeDecodeError, yaml.YAMLError, ValueError, TypeError,
            RecursionError) as exc:
        # Unreadable or no YAML (``version: 2024-02-30``): its pages are read without its attributes.
        log.warning("%s: not read, its pages are read without its attributes: %s", path,
                    " ".join(str(exc).split())[:200] or type(exc).__name__)
    config = config if isinstance(config, dict) else {}
    asciidoc = config.get("asciidoc")
    given = asciidoc.get("attributes") if isinstance(asciidoc, dict) else None
    name = _attribute_value(config.get("name")) or ""
    version = _attribute_value(config.get("version")) or ""
    shown_version = _attribute_value(config.get("display_version")) or version
    # What Antora sets on every page of the component (``{page-component-version}`` in a title).
    attributes = {"env": "site", "env-site": "", "site-gen-antora": "", "page-component-name": name,
                  "page-component-version": version, "page-version": version,
                  "page-component-display-version": shown_version,
                  "page-component-title": _attribute_value(config.get("title")) or name}
    for key, value in (given if isinstance(given, dict) else {}).items():
        if (shown := _attribute_value(value)) is not None:
            attributes[str(key).lower()] = shown
    return Component(folder=folder, name=name, version=version, attributes=attributes)


def _attribute_value(value: Any) -> str | None:
    """An ``antora.yml`` value as pages read it: ``false`` unsets it, a trailing ``@`` is dropped.

    Only a scalar is a value: a list or a mapping (or an alias bomb of them) is none.
    """
    if value is False or value is None or not isinstance(value, str | int | float | bool):
        return None
    if value is True:
        return ""
    shown = str(value).removesuffix("@")
    return shown if len(shown) <= _MAX_VALUE_CHARS else None


def is_unpublished(path: Path, *, root: Path) -> bool:
    """Whether a site publishes no page from an AsciiDoc file, named ``_x.adoc`` or Antora's and not a page.

    Antora publishes its modules' ``pages/`` only: a partial, an example or ``nav.adoc`` is none.
    """
    if path.name.startswith("_"):
        return True
    component = component_of(path, root=root)
    if component is None:
        return False
    parts = path.relative_to(component.folder).parts
    return not (len(parts) > 3 and parts[0] == "modules" and parts[2] == "pages")


def resource_path(target: str, *, including: Path, component: Component | None, xref: bool = False
                  ) -> Path | None:
    """The file an include's (or ``xref``'s) target names; None for one not among these docs.

    A resource ID in Antora, else a path from the including file (in Antora, an ``xref``'s plain
    path is from its module's pages).

    A resource of another component (``xref:asciidoctor:install:page.adoc``) is not among these
    docs: None.
    """
    if _URL.match(target):
        return None  # read from the network: never
    plain = "$" not in target and ":" not in target
    if component is not None and xref and plain and not target.startswith("."):
        return component.folder / "modules" / (component.module_of(including) or "ROOT") / "pages" / target
    if component is None or not _RESOURCE.match(target) or plain:
        return including.parent / target
    match = _RESOURCE.match(target)
    assert match is not None
    first, second = match["first"], match["second"]
    if second is not None and first != component.name:
        return None  # another component's
    module = second if second is not None else first
    module = module or component.module_of(including) or "ROOT"
    family = _FAMILIES.get(match["family"] or "page")
    if family is None or match["version"]:
        return None
    # ``example$/App.java``: Antora reads the path from the family's folder, leading slash or not.
    return component.folder / "modules" / module / family / PurePosixPath(match["path"].lstrip("/"))


def served_page(path: Path, *, root: Path) -> str | None:
    """Where Antora serves an AsciiDoc page, from the site's root; None for no page of a component.

    ``modules/ROOT/pages/a/b.adoc`` of component ``pdf`` version ``2.3`` is at ``pdf/2.3/a/b.html``,
    another module's pages under its name (``pdf/2.3/theme/x.html``); a component named ``ROOT``
    and a version ``~`` take no part of the address.
    """
    component = component_of(path, root=root)
    if component is None:
        return None
    parts = path.relative_to(component.folder).parts
    if len(parts) < 4 or parts[0] != "modules" or parts[2] != "pages":
        return None
    prefix = [part for part in (component.name, component.version) if part not in ("", "ROOT", "~")]
    module = [] if parts[1] == "ROOT" else [parts[1]]
    page = PurePosixPath(*parts[3:]).with_suffix(".html")
    return "/".join([*prefix, *module, page.as_posix()])
