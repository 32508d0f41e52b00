"""MDX components: what a JSX component's opening tag shows in place of itself.

A card, an aside or a step shows its ``title``; a tab its label, which titles the code under it;
a reference entry's field (Mintlify's ``<ParamField query="limit" type="number">``) its name,
type and default, run on into its text. Everything else a tag says is for the site, not the reader.
"""

from __future__ import annotations

import re

from core.ingest.inline import attribute

__all__ = ["TAB_MARK", "field_ends", "field_text", "has_component_titles", "opening_text"]

#: Marks a Docusaurus tab's label in cleaned prose, so that the code block under it takes it as its title.
TAB_MARK = "\x1e"
#: A component (capitalised, as JSX writes them) given a title (a card, a link card, an aside) or
#: a type (a reference entry's field).
_COMPONENT_TITLE = re.compile(r"<[A-Z][\w.]*\s[^<>]*?\b(?:title|type)\s*=\s*[\"']")
_SPACE = re.compile(r"[ \t\n]+")


def opening_text(name: str, attributes: str) -> str | None:
    """What an opening tag shows in place (None: nothing of its own): a tab's label, a card's title."""
    if name.lower() == "span" and attribute(attributes, "class") == "filename":
        return f"\n\n{TAB_MARK}"  # mdBook's "Filename: src/main.rs" over a listing titles it
    if name in ("TabItem", "Tab"):
        # Docusaurus shows a tab's value when it has no label; Mintlify's tab has a title.
        shown = [attribute(attributes, key) for key in ("label", "value", "title")]
        label = " ".join(next((value for value in shown if value), "").split())
        return f"\n\n{TAB_MARK}{label}\n\n" if label else "\n"
    card = _card_text(attributes) if name[0].isupper() else None
    return f"\n\n{card}\n\n" if card else None


def field_ends(text: str, end: int) -> tuple[str, int]:
    """What follows a field's name, and where its text starts: on the same line, unless a block
    (after a blank line) comes first."""
    space = _SPACE.match(text, end)
    if space is None or "\n\n" in space[0]:
        return "\n\n", end
    return " ", space.end()


def _card_text(attributes: str) -> str | None:
    """What a component's ``title`` (a card's, an aside's) shows: a line, linked and described."""
    title = attribute(attributes, "title")
    if not title or not title.strip():
        return None
    href, description = attribute(attributes, "href"), attribute(attributes, "description")
    shown = " ".join(title.split())
    text = f"[{shown}]({href})" if href and not href.startswith("{") else shown
    return f"{text}: {' '.join(description.split())}" if description and description.strip() else text


#: The attributes naming a reference entry's field (Mintlify's ``<ParamField query="limit">``,
#: ``<ResponseField name="id">``): where the value goes, or the field's own name.
_FIELD_NAMES = ("name", "path", "query", "body", "header")
#: A bare ``required`` attribute (or ``required={true}``), not the word inside a quoted value.
_REQUIRED = re.compile(r"(?:^|\s)required(?=\s|/|$|=\{?true)")


def field_text(component: str, attributes: str) -> str | None:
    """What a component describing one field shows before its text: "`limit` (number, default: 10):".

    Only a component giving both a field's name and its ``type`` is one: the name is what the
    reader asks for, and it stood nowhere in the text before.
    """
    if not component[0].isupper():
        return None
    kind = attribute(attributes, "type")
    name = next((value for key in _FIELD_NAMES if (value := attribute(attributes, key))), None)
    if not kind or not name or not name.strip() or "`" in name:
        return None
    notes = [" ".join(kind.split())]
    default = attribute(attributes, "default")
    if default is not None and default.strip():
        notes.append(f"default: {' '.join(default.split())}")
    if _REQUIRED.search(attributes):
        notes.append("required")
    return f"`{' '.join(name.split())}` ({', '.join(notes)}):"


def has_component_titles(text: str) -> bool:
    """Whether ``text`` holds a component with a title or a field's type, left out before."""
    return _COMPONENT_TITLE.search(text) is not None
