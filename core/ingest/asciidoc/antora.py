"""Antora's layout: a component (``antora.yml``) of modules, each with pages, partials and examples.

``modules/ROOT/pages/install.adoc`` is a page; ``modules/ROOT/partials/`` and ``examples/`` hold
what pages include (``include::partial$intro.adoc[]``, ``include::example$app.rb[tag=main]``),
and ``nav.adoc`` the menu: the site publishes neither. ``antora.yml`` gives the attributes every
page reads (``asciidoc.attributes``).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

__all__ = ["Component", "component_of", "is_unpublished", "resource_path", "served_page"]

#: What Antora calls each family of files in an include's resource ID, and the folder holding it.
_FAMILIES = {"page": "pages", "partial": "partials", "example": "examples", "attachment": "attachments",
             "image": "images"}
#: A resource ID: ``[version@][component:][module:][family$]path``.
_RESOURCE = re.compile(r"^(?:(?P<version>[^@:$]+)@)?(?:(?P<first>[^:$]+):)?(?:(?P<second>[^:$]+):)?"
                       r"(?:(?P<family>[a-z]+)\$)?(?P<path>[^:$]+)$")
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://", re.I)


class Component:
    """An Antora component: the folder holding ``antora.yml``, its name and its attributes."""

    def __init__(self, *, folder: Path, name: str, attributes: dict[str, str]) -> None:
        self.folder = folder
        self.name = name
        self.attributes = attributes

    def module_of(self, path: Path) -> str | None:
        """The module a file is in (``ROOT`` for ``modules/ROOT/pages/x.adoc``), or None."""
        parts = path.relative_to(self.folder).parts
        return parts[1] if len(parts) > 2 and parts[0] == "modules" else None


def component_of(path: Path, *, root: Path) -> Component | None:
    """The Antora component a file belongs to: the nearest folder above it, up to ``root``, holding
    ``antora.yml`` and ``modules/``."""
    for folder in path.parents:
        if not folder.is_relative_to(root):
            return None
        if (folder / "antora.yml").is_file() and (folder / "modules").is_dir():
            return _component(folder)
    return None


@functools.lru_cache(maxsize=64)
def _component(folder: Path) -> Component:
    try:
        config = yaml.safe_load((folder / "antora.yml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        config = None  # an unreadable antora.yml: its pages are still read, without its attributes
    config = config if isinstance(config, dict) else {}
    asciidoc = config.get("asciidoc")
    given = asciidoc.get("attributes") if isinstance(asciidoc, dict) else None
    name, version = str(config.get("name") or ""), _attribute_value(config.get("version")) or ""
    # What Antora sets on every page of the component (``{page-component-version}`` in a title).
    attributes = {"env": "site", "env-site": "", "site-gen-antora": "", "page-component-name": name,
                  "page-component-version": version, "page-version": version,
                  "page-component-display-version": str(config.get("display_version") or version),
                  "page-component-title": str(config.get("title") or name)}
    for name, value in (given if isinstance(given, dict) else {}).items():
        if (shown := _attribute_value(value)) is not None:
            attributes[str(name).lower()] = shown
    return Component(folder=folder, name=name, attributes=attributes)


def _attribute_value(value: Any) -> str | None:
    """An ``antora.yml`` attribute as pages read it: ``false`` unsets it, a trailing ``@`` is dropped."""
    if value is False or value is None:
        return None
    if value is True:
        return ""
    return str(value).removesuffix("@")


def is_unpublished(path: Path, *, root: Path) -> bool:
    """Whether Antora publishes no page from an AsciiDoc file: one outside a module's ``pages/``
    (a partial, an example, ``nav.adoc``), or one whose name starts with ``_``."""
    if path.name.startswith("_"):
        return True
    component = component_of(path, root=root)
    if component is None:
        return False
    parts = path.relative_to(component.folder).parts
    return not (len(parts) > 3 and parts[0] == "modules" and parts[2] == "pages")


def resource_path(target: str, *, including: Path, component: Component | None, xref: bool = False
                  ) -> Path | None:
    """The file an include's (or ``xref``'s) target names: a resource ID in Antora, else a path from
    the including file (in Antora, an ``xref``'s plain path is from its module's pages).

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


def served_page(relative: str) -> str | None:
    """Where Antora serves an AsciiDoc page, from the component's folder: ``modules/ROOT/pages/a/b.adoc``
    at ``a/b.html``, another module's pages under its name (``theme/x.html``); None for no page."""
    parts = PurePosixPath(relative).parts
    if "modules" not in parts:
        return None
    at = len(parts) - 1 - parts[::-1].index("modules")
    inside = parts[at:]
    if len(inside) < 4 or inside[2] != "pages":
        return None
    module = [] if inside[1] == "ROOT" else [inside[1]]
    page = PurePosixPath(*inside[3:]).with_suffix(".html")
    return "/".join([*module, page.as_posix()])
