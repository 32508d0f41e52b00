"""Sphinx's markup taught to docutils: its roles read as the text they show, its directives as prose or code.

docutils knows reStructuredText, not the roles (``:func:``, ``:ref:``) and directives
(``code-block``, ``versionadded``, ``toctree``) Sphinx adds; unknown ones come out as
errors, their text lost or quoted raw. ``register()`` adds them to docutils' registries,
which are global to the process: ``core.ingest.rst`` calls it once, on import.

What each directive becomes:

* code (``code-block``, ``doctest``, ``testcode``, ``code-tab``, ``prompt``, ``jupyter-execute``):
  a literal block with its language, which the page reader fences;
* version notes, ``seealso``, tabs, cards, object descriptions (``.. function:: f(x)``): their
  content, after a lead line ("New in version 2.1:", the signature as code);
* navigation and generated content (``toctree``, ``autofunction``) and the directives that
  would change how later pages read (``role``, ``default-role``): nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from docutils import nodes
from docutils.parsers.rst import Directive, directives, roles
from docutils.parsers.rst.directives.body import CodeBlock

from core.ingest.sphinx_markup import (
    AUTODOC_DIRECTIVES,
    CODE_DIRECTIVES,
    CODE_ROLES,
    DOMAINS,
    LITERAL_ROLES,
    OBJECT_DIRECTIVES,
    PROSE_DIRECTIVES,
    SKIPPED_DIRECTIVES,
    TEXT_ROLES,
    VERSION_DIRECTIVES,
    for_html,
    role_shown,
    version_note,
)


class _AnyOptions(dict[str, Callable[[str], Any]]):
    """Accepts every option name: Sphinx and its extensions add options docutils does not know."""

    def __missing__(self, key: str) -> Callable[[str], Any]:
        return directives.unchanged


class _SphinxCodeBlock(CodeBlock):
    """``code-block`` with Sphinx's options (``:caption:``, ``:linenos:``) accepted."""

    option_spec = _AnyOptions(CodeBlock.option_spec)


class _Lenient(Directive):
    """A Sphinx directive: content, an optional argument and any option are accepted."""

    has_content = True
    optional_arguments = 1
    final_argument_whitespace = True
    option_spec = _AnyOptions(name=directives.unchanged)


class _Skipped(_Lenient):
    """A directive read and left out, content and all."""

    def run(self) -> list[nodes.Node]:
        return []


class _Code(_Lenient):
    """A code directive Sphinx or an extension adds: its content as a literal block."""

    optional_arguments = 2  # "prompt:: bash $"

    def run(self) -> list[nodes.Node]:
        language = CODE_DIRECTIVES.get(self.name)
        if language is None:  # "code-tab:: py", "prompt:: bash $"
            language = self.arguments[0].split()[0] if self.arguments else ""
        code = "\n".join(self.content)
        return [nodes.literal_block(code, code, classes=[language] if language else [])]


class _Prose(_Lenient):
    """A directive whose content is read as RST, after a lead line made from its argument."""

    def run(self) -> list[nodes.Node]:
        argument = " ".join(self.arguments).strip()
        if (self.name == "only" and not for_html(argument)) or (
                self.name in AUTODOC_DIRECTIVES and not "".join(self.content).strip()):
            return []
        box = self._box(argument)
        self.state.nested_parse(self.content, self.content_offset, box)
        return [box]

    def _box(self, argument: str) -> nodes.Element:
        """The node the content goes in, holding the lead its directive puts first."""
        if self.name in VERSION_DIRECTIVES:
            words, note = version_note(self.name, argument)
            return nodes.container("", self._paragraph(note, lead=f"{words}: " if note else f"{words}."))
        if self.name in PROSE_DIRECTIVES:
            title = PROSE_DIRECTIVES[self.name]
            if title is None:
                title, argument = argument, ""
            if not title:  # "only", "tabs": an argument that is no text of the page
                return nodes.container()
            box = nodes.admonition("", nodes.title("", title))
            if argument:  # ".. seealso:: Module :mod:`zipfile`": the note is the argument
                box += self._paragraph(argument)
            return box
        if argument:  # an object description: its signature, quoted as code, then what it does
            return nodes.container("", nodes.paragraph("", "", nodes.literal(text=argument)))
        return nodes.container()

    def _paragraph(self, text: str, *, lead: str = "") -> nodes.paragraph:
        paragraph = nodes.paragraph("", lead)
        if text:
            paragraph += self.state.inline_text(text, self.lineno)[0]
        return paragraph


def _role(*, code: bool) -> Callable[..., tuple[list[nodes.Node], list[nodes.Node]]]:
    def role(name: str, rawtext: str, text: str, lineno: int, inliner: Any,
             options: Any = None, content: Any = None) -> tuple[list[nodes.Node], list[nodes.Node]]:
        shown = nodes.unescape(text) if name.split(":")[-1] in LITERAL_ROLES else role_shown(name, text)
        return [nodes.literal(rawtext, shown) if code else nodes.Text(shown)], []

    return role


def register() -> None:
    """Add Sphinx's roles and directives to docutils' (global) registries."""
    for names, code in ((CODE_ROLES, True), (TEXT_ROLES, False)):
        for name in names:
            for full in (name, *(f"{domain}:{name}" for domain in DOMAINS)):
                roles.register_local_role(full, _role(code=code))
    kinds: list[tuple[Any, Any]] = [
        (("code-block", "sourcecode"), _SphinxCodeBlock),
        (SKIPPED_DIRECTIVES, _Skipped),
        (CODE_DIRECTIVES, _Code),
        ((*VERSION_DIRECTIVES, *PROSE_DIRECTIVES, *OBJECT_DIRECTIVES, *AUTODOC_DIRECTIVES), _Prose),
        ((f"{domain}:{name}" for domain in DOMAINS for name in OBJECT_DIRECTIVES), _Prose),
    ]
    for names, directive in kinds:
        for name in names:
            directives.register_directive(name, directive)
