"""Sphinx's markup by kind, shared by the ``.rst`` reader and the MyST one; no docutils needed.

Which roles name code, which directives hold prose (and the lead line each puts first), code,
or nothing of the page; and how a role's text reads. ``core.ingest.sphinx`` teaches these to
docutils for ``.rst`` pages; ``core.ingest.myst`` reads the same names in Markdown pages.
"""

from __future__ import annotations

from core.ingest.sphinx_targets import target_title

#: Sphinx roles that name code (shown as ``code``); other unknown roles show their text.
CODE_ROLES = frozenset(
    "func meth class mod attr data const exc obj envvar option command program file samp kbd "
    "makevar type member macro var struct enum enumerator function expr".split()
)
#: Roles whose text is shown as written: no "title <target>" to read in them.
LITERAL_ROLES = frozenset("code math kbd samp file".split())
TEXT_ROLES = frozenset(
    "ref doc term abbr any numref download guilabel menuselection dfn keyword token".split()
)
DOMAINS = ("py", "c", "cpp", "js", "std", "rst")
#: Sphinx's version notes: the words put before the version and the note that follows it.
VERSION_DIRECTIVES = {
    "versionadded": "New in version",
    "versionchanged": "Changed in version",
    "versionremoved": "Removed in version",
    "deprecated": "Deprecated since version",
}
#: Directives whose content is prose, read as a titled note; None titles it with the
#: directive's argument (a tab's name), "" leaves it untitled.
PROSE_DIRECTIVES: dict[str, str | None] = {
    "seealso": "See also", "todo": "To do", "glossary": "", "only": "", "hlist": "", "tabs": "",
    "tab-set": "", "grid": "", "grid-item": "", "grid-item-card": None, "tab": None,
    "group-tab": None, "tab-item": None, "dropdown": None, "card": None,
}
#: Object descriptions: the signature is quoted as code before its description. (Like Sphinx,
#: this replaces docutils' own ``class`` directive, which only sets a CSS class.)
OBJECT_DIRECTIVES = frozenset(
    "function class method attribute data exception decorator describe object option envvar "
    "confval staticmethod classmethod property".split()
)
#: Code directives and their language (None: the directive's first argument names it).
CODE_DIRECTIVES: dict[str, str | None] = {
    "doctest": "pycon", "testcode": "python", "testoutput": "", "jupyter-execute": "python",
    "ipython": "ipython", "code-tab": None, "prompt": None,
}
#: Directives that hold no prose of the page (navigation, generated API docs), or that would
#: change how every later page reads (docutils keeps roles in one registry per process).
SKIPPED_DIRECTIVES = frozenset(
    "toctree literalinclude index highlight currentmodule module py:module py:currentmodule "
    "autosummary automodule tabularcolumns sectionauthor moduleauthor codeauthor "
    "spelling:word-list graphviz digraph plot mermaid role default-role".split()
)
#: autodoc's object directives: the docstring they pull in from the code is not in the docs, but
#: what a page writes under one is (``.. autoclass:: Request`` then its ``.. attribute:: meta``
#: and what it is for), read like an object description; with nothing written, nothing is read.
AUTODOC_DIRECTIVES = frozenset(
    "autoclass autofunction automethod autoattribute autodata autoexception autoproperty "
    "autodecorator".split()
)
#: Builders other than HTML: ``.. only:: latex`` content is not on the published pages.
_OTHER_BUILDERS = frozenset("latex epub man texinfo text xml pdf".split())


def version_note(kind: str, argument: str) -> tuple[str, str]:
    """A version directive's words and note: ("New in version 2.1", "The --user flag.").

    Sphinx reads the words after the version (same line or next) as the note itself.
    """
    version, _, note = " ".join(argument.split()).partition(" ")
    return f"{VERSION_DIRECTIVES[kind]} {version}", note


def for_html(expression: str) -> bool:
    """Whether ``.. only:: expression`` content is on the HTML pages (unless it names others only)."""
    words = set(expression.replace("(", " ").replace(")", " ").split())
    return "html" in words or not words & _OTHER_BUILDERS


def shown_text(role_text: str) -> str:
    """What a cross-reference role shows: ``title <target>`` -> title, ``~a.b.c`` -> c, ``!x`` -> x.

    ``role_text`` is as docutils hands it to a role: an escaped character follows a NUL
    (``:ref:`a \\<b>``` is no target), or, in raw source, a backslash. Roles that show their
    text as written (``LITERAL_ROLES``: ``:code:`List<int>```) are not read through this.
    """
    text = role_text.strip()
    start = text.rfind("<")
    if text.endswith(">") and start > 0 and text[start - 1] not in "\x00\\":
        text = text[:start].rstrip()
    text = _unescape(text).replace("\\<", "<").lstrip("!")
    if text.startswith("~"):
        text = text[1:].rsplit(".", 1)[-1]
    return text


def role_shown(role: str, text: str) -> str:
    """What ``:role:`text``` shows, a ``ref`` or ``doc`` naming no title showing what it names.

    That is the title of the section or page (``core.ingest.sphinx_targets``), when known; a code
    role's ``.Request.meta`` (a name searched for as a suffix) shows without its dot.
    """
    shown = shown_text(text)
    kind = role.split(":")[-1]
    if kind in ("ref", "doc") and not text.rstrip().endswith(">"):
        return target_title(kind, shown) or shown
    if kind in CODE_ROLES and shown[:1] == "." and shown[1:2].isalpha():
        return shown[1:]
    return shown


def _unescape(text: str) -> str:
    """docutils' escapes undone: a NUL marks the escaped character (an escaped space is none)."""
    return text.replace("\x00 ", "").replace("\x00\n", "").replace("\x00", "")
