"""MDX components read as their site shows them.

Tag by tag (``core.ingest.markdown`` strips the tags): a card, an aside or a step shows its
``title``; a tab its label, which titles the code under it; a callout its kind; a reference
entry's field (Mintlify's ``<ParamField query="limit" type="number">``) its name, type and
default, run on into its text. Page by page, before the page is split at its fences: what is
written for AI agents only is left out (``for_readers``), Nextra's tabs take their pane's names
(``tabs_named``), and a file tree is drawn as a listing (``file_trees``). Everything else a tag
says is for the site, not the reader.
"""

from __future__ import annotations

import re

from core.ingest.fences import Fences, tags_joined
from core.ingest.inline import attribute

__all__ = [
    "PART_MARK",
    "TAB_MARK",
    "callout_label",
    "closing_text",
    "field_ends",
    "field_text",
    "file_trees",
    "for_readers",
    "has_components",
    "is_inline",
    "opening_text",
    "tabs_named",
]

#: Marks a Docusaurus tab's label in cleaned prose, so that the code block under it takes it as its title.
TAB_MARK = "\x1e"
#: Marks a titled part's title (a step's) in cleaned prose: a heading one level below the section's;
#: alone on its line, the part's end (after it, the section's text goes on).
PART_MARK = "\x1d"
#: A component read differently since: given a title (a card, a step) or a type (a field), a
#: pane naming its tabs, a callout, one for agents, a file tree, or one inside a line of text (a badge).
_COMPONENT_SIGNS = re.compile(
    r"<[A-Z][\w.]*\s[^<>]*?\b(?:title|type|label)\s*=\s*[\"']|<Tabs\s[^<>]*\bitems\s*="
    r"|<(?:Note|Warning|Tip|Info|Check|Danger|Caution|Important|Visibility|Prompt|FileTree|Files)\b"
    r"|\S[ \t]*<[A-Z]")
_SPACE = re.compile(r"[ \t\n]+")
#: What starts a block at a line's start: a list item, a heading, a table, a quote, a fence.
_BLOCK_START = re.compile(r"(?:[-*+][ \t]|\d+[.)][ \t]|`{3,}|~{3,}|\||#|>)")
#: Components that are titled parts of a page, the headings inside them under their title:
#: Mintlify's changelog entries (``<Update label="August 14, 2026">``).
_TITLED_PARTS = frozenset({"Update"})
#: Components whose title leads their text in ("Push your changes:"): steps and accordions.
_LEADING_PARTS = frozenset({"Step", "Accordion"})
#: Callouts named for their kind (Mintlify's ``<Warning>``), and those given one (``<Callout type="info">``).
_CALLOUTS = frozenset({"Note", "Warning", "Tip", "Info", "Check", "Danger", "Caution", "Important"})
_TYPED_CALLOUTS = frozenset({"Callout", "Aside", "Admonition"})
#: A pane of tabs (``<Tabs items={['npm', 'pnpm']}>``), one of its tabs, or its end (``tabs_named``).
_TAB_TAGS = re.compile(
    r"<(?P<close>/)Tabs\s*>|<(?P<name>Tabs(?=[\s>])|Tabs\.Tab|Tab)\b"
    r"(?P<attributes>(?:[^<>{}]|\{[^{}]*\})*)>")
_ITEMS = re.compile(r"\bitems\s*=\s*\{\s*\[([^\]]*)\]")
#: One name in a pane's ``items`` array.
_ITEM = re.compile(r"""(["'`])((?:(?!\1)[^\n])+)\1""")
#: A file tree's listing is indented this deep at most (a tree 10,000 folders deep stays linear).
_MAX_TREE_INDENT = 16
#: A file tree's opening and closing lines, and one of its folders or files (``file_trees``).
_TREE_OPENS = re.compile(r"^[ \t]*<(?:FileTree|Files)(?:\s[^<>]*)?>[ \t]*$")
_TREE_CLOSES = re.compile(r"^[ \t]*</(?:FileTree|Files)>[ \t]*$")
_TREE_ENTRY = re.compile(r"<(?P<close>/)?(?:FileTree\.)?(?P<kind>Folder|File)\b(?P<attributes>[^<>]*)>")
#: An agents' block's opening tag left open at its line's end, and the line ending it.
_OPENS_OVER_LINES = re.compile(r"^[ \t]*<(?:Visibility|Prompt)\b[^<>]*$")
_TAG_END = re.compile(">")
#: The opening line of a block written for AI agents, not readers (``for_readers``).
_AGENTS_ONLY = re.compile(
    r"^(?P<indent>[ \t]*)<(?P<name>Visibility(?=\s+for\s*=\s*[\"']agents[\"'])|Prompt)\b"
    r"(?P<attributes>[^<>]*)>[ \t]*$")


def opening_text(name: str, attributes: str) -> str | None:
    """What an opening tag shows in place (None: nothing of its own): a tab's label, a card's title.

    A changelog entry's label heads its notes (``<Update label="August 14, 2026">`` over its
    "## New features"): left out, the notes of every release read alike, and said nothing of when
    they shipped. (A step's or an accordion's title made a heading took its words out of the text
    answers are picked from: BENCHMARKS.md, twentieth pass.)
    """
    if name in _TITLED_PARTS and (label := _card_text(attributes, name=name)):
        return f"\n\n{PART_MARK}{label}\n\n"
    if name.lower() == "span" and attribute(attributes, "class") == "filename":
        return f"\n\n{TAB_MARK}"  # mdBook's "Filename: src/main.rs" over a listing titles it
    if name in ("TabItem", "Tab", "Tabs.Tab"):
        # Docusaurus shows a tab's value when it has no label; Mintlify's tab has a title.
        shown = [attribute(attributes, key) for key in ("label", "value", "title")]
        label = " ".join(next((value for value in shown if value), "").split())
        return f"\n\n{TAB_MARK}{label}\n\n" if label else "\n"
    card = _card_text(attributes, name=name) if name[0].isupper() else None
    if card and name in _LEADING_PARTS and not card.endswith((".", ":", "?", "!")):
        card += ":"  # a step's title leads its text in: quoted, or chunked, with it, never alone
    return f"\n\n{card}\n\n" if card else None


def closing_text(name: str) -> str | None:
    """What a closing tag shows in place (None: nothing of its own): a part's end."""
    return f"\n\n{PART_MARK}\n\n" if name in _TITLED_PARTS else None


def callout_label(name: str, attributes: str) -> str | None:
    """The kind a callout without a title shows before its text ("Warning:"), as ``:::warning`` does."""
    if attribute(attributes, "title") or attributes.rstrip().endswith("/"):  # titled, or holding nothing
        return None
    kind = name if name in _CALLOUTS else attribute(attributes, "type") if name in _TYPED_CALLOUTS else None
    return f"{kind.strip().capitalize()}:" if kind and kind.strip() else None


def field_ends(text: str, end: int, *, attributes: str = "") -> tuple[str, int]:
    """What follows a field's or a callout's lead, and where its text starts: on the same line,
    unless the tag closes itself (it holds no text) or a block comes first (after a blank line,
    or a list, heading, table, quote or code: "Note:" never opens a list's first item)."""
    space = _SPACE.match(text, end)
    after = space.end() if space is not None else end
    if attributes.rstrip().endswith("/") or (space is not None and "\n\n" in space[0]):
        return "\n\n", end
    if space is not None and "\n" in space[0] and _BLOCK_START.match(text, after):
        return "\n\n", end
    return " ", after


def for_readers(text: str) -> str:
    """A page without what its site shows AI agents only: Mintlify's ``<Visibility for="agents">``.

    A ``<Prompt description="...">`` holds a request written to an AI tool ("Install the CLI so I
    can preview my docs ... tell me before continuing"), which a reader copies: it stands as its
    description. Quoted as they were, both answered people in an agent's words. Code showing the
    components is left as written.
    """
    if "<Visibility" not in text and "<Prompt" not in text:
        return text
    out: list[str] = []
    fences = Fences()
    closing: str | None = None
    hidden: list[str] = []  # the block's lines, given back if it never closes
    for line in _tags_joined(text.split("\n")):
        if closing is not None:
            hidden.append(line)
            if (at := line.find(closing)) != -1:
                out.append(line[at + len(closing):])  # what follows the closing tag stays
                closing = None
            continue
        found = None if fences.code(line) else _AGENTS_ONLY.match(line)
        if found is None:
            out.append(line)
            continue
        shown = attribute(found["attributes"], "description") if found["name"] == "Prompt" else None
        out.append(f"{found['indent']}Prompt: {' '.join(shown.split())}" if shown else "")
        if not found["attributes"].rstrip().endswith("/"):  # a tag closing itself holds nothing
            closing, hidden = f"</{found['name']}>", [line]
    if closing is not None:
        out[-1:] = hidden
    return "\n".join(out)


def _tags_joined(lines: list[str]) -> list[str]:
    """The lines, with an agents' block's opening tag written over lines (``<Prompt`` then one
    attribute a line, as Mintlify's docs write it) on one line."""
    return [line for line, _ in tags_joined(lines, opens=_OPENS_OVER_LINES, ends=_TAG_END, marker="<")]


def tabs_named(text: str) -> str:
    """A page whose tabs take their names from their pane, as Nextra's do, with each tab titled.

    ``<Tabs items={['npm', 'pnpm']}>`` over two ``<Tabs.Tab>``: read without the names, the tabs'
    near-identical commands could not be told apart. Each untitled tab takes the next name; code
    showing the components is left as written.
    """
    if "items=" not in text:
        return text
    out: list[str] = []
    fences = Fences()
    panes: list[list[str]] = []
    for line in text.split("\n"):
        if not fences.code(line) and ("<Tab" in line or "</Tabs" in line):
            line = _TAB_TAGS.sub(lambda tag: _named_tab(tag, panes), line)
        out.append(line)
    return "\n".join(out)


def _named_tab(tag: re.Match[str], panes: list[list[str]]) -> str:
    """One tag of a pane: its names remembered, a tab given the next one, the pane's end forgotten."""
    if tag["close"]:
        if panes:
            panes.pop()
        return tag[0]
    if tag["name"] == "Tabs":
        items = _ITEMS.search(tag["attributes"])
        panes.append([name for _, name in _ITEM.findall(items[1])][::-1] if items is not None else [])
        return tag[0]
    names = panes[-1] if panes else []
    if not names or any(attribute(tag["attributes"], key) for key in ("title", "label", "value")):
        return tag[0]
    shown = names.pop().replace('"', "'")
    return f'<{tag["name"]} title="{shown}"{tag["attributes"]}>'


def file_trees(text: str) -> str:
    """A page with each file tree component drawn as the site draws it: a listing, one name a line.

    Nextra's ``<FileTree>`` of ``<FileTree.Folder name="app">`` and ``<FileTree.File name=...>``
    (Fumadocs' ``<Files>``, ``<Folder>``, ``<File>``): its names are attributes, so the tree was
    left out whole, and "you should get the following structure:" introduced nothing. A tree
    naming nothing so (Starlight's wraps a Markdown list) is left as written.
    """
    if "<FileTree" not in text and "<Files" not in text:
        return text
    out: list[str] = []
    fences = Fences()
    raw: list[str] | None = None  # the tree's lines as written: Starlight's holds a Markdown list
    tree: list[str] = []
    depth = 0
    for line in text.split("\n"):
        if raw is None:
            if not fences.code(line) and _TREE_OPENS.match(line):
                raw, tree, depth = [line], [], 0
            else:
                out.append(line)
            continue
        raw.append(line)
        if _TREE_CLOSES.match(line):
            out.extend(["```text", *tree, "```"] if tree else raw)
            raw = None
            continue
        for tag in _TREE_ENTRY.finditer(line):
            if tag["close"]:
                depth = max(depth - 1, 0)
            elif (name := attribute(tag["attributes"], "name")) is not None:
                folder = tag["kind"] == "Folder"
                indent = "  " * min(depth, _MAX_TREE_INDENT)
                tree.append(f"{indent}{name}{'/' if folder and not name.endswith('/') else ''}")
                if folder and not tag["attributes"].rstrip().endswith("/"):  # an empty folder closes itself
                    depth += 1
    return "\n".join(out if raw is None else [*out, *raw])  # a tree never closed: as written


def is_inline(text: str, start: int, end: int) -> bool:
    """Whether the tag at ``text[start:end]`` sits inside a line of text, as a badge or an icon does.

    Such a component (``<Badge>required</Badge>`` in a heading, ``Click the <Icon icon="gear" />
    button``) broke the line: the heading was one no more, the sentence two paragraphs. Only the
    characters next to the tag are read, so a long line of many tags stays linear.
    """
    before = start - 1
    while before >= 0 and text[before] in " \t":
        before -= 1
    if before < 0 or text[before] == "\n":
        return False  # the tag opens its line
    after = end
    while after < len(text) and text[after] in " \t":
        after += 1
    if after < len(text) and text[after] != "\n":
        return True
    line = text[text.rfind("\n", 0, start) + 1 : start]  # the tag ends its line: inside a heading?
    return line.lstrip()[:1] == "#"


def _card_text(attributes: str, *, name: str = "") -> str | None:
    """What a component's ``title`` (a card's, an aside's) shows: a line, linked and described.

    A changelog entry (Mintlify's ``<Update label="August 14, 2026" description="v2.3">``) shows
    its ``label`` so: left out, its notes said nothing of when they shipped.
    """
    title = attribute(attributes, "label" if name == "Update" else "title")
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
    named = ((key, value) for key in _FIELD_NAMES if (value := attribute(attributes, key)))
    key, name = next(named, ("", ""))
    if not kind or not name.strip() or "`" in name:
        return None
    # Where a request's value goes; "path" is left out, as docs use it for a setting's path too.
    notes = [" ".join(kind.split()) if key in ("name", "path") else f"{key}, {' '.join(kind.split())}"]
    default = attribute(attributes, "default")
    default = _braced(attributes, "default") if default is None else default
    if default is not None and default.strip():
        notes.append(f"default: {' '.join(default.split())}")
    if _REQUIRED.search(attributes):
        notes.append("required")
    return f"`{' '.join(name.split())}` ({', '.join(notes)}):"


def _braced(attributes: str, name: str) -> str | None:
    """A JSX literal's value, ``default={2}`` -> "2" (an expression holding braces: None)."""
    found = re.search(rf"\b{re.escape(name)}\s*=\s*\{{([^{{}}\n]*)\}}", attributes)
    return None if found is None else found[1].strip().strip("\"'`")


def has_components(text: str) -> bool:
    """Whether ``text`` holds a component read differently before (``COMPONENTS_PARSER``)."""
    return _COMPONENT_SIGNS.search(text) is not None
