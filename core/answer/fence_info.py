"""A code fence's info string: the language a chat can show, and the title the docs give it.

Docs write much after a fence's language that a chat cannot read: attributes
(``title="pyproject.toml"``, ``hl_lines="4"``), highlights (``{1,3}``, ``/word/``), switches
(``showLineNumbers``, ``wrap``). The title (an attribute, VitePress' ``[npm]`` tab, or Mintlify's
plain words, ```` ```bash npm ````) is shown above the code instead.
"""

from __future__ import annotations

import re

from core.ingest.inline import attribute

__all__ = ["plain_fence"]

#: A fence's info string: the language, then attributes chat cannot read (``title="pyproject.toml"``,
#: ``hl_lines="4"``, ``linenums="1"``), or ``{ .dockerfile .annotate }``.
_FENCE_INFO_RE = re.compile(r"^(\s*(?:`{3,}|~{3,}))(.*)$")  # the info is stripped after: linear
_LANGUAGE_RE = re.compile(r"\{?\s*\.?([\w+#-]+)")
#: ... and VitePress' code-group tab label ending it: ```` ```sh [npm] ```` (not ``hl_lines=[8]``).
_TAB_LABEL_RE = re.compile(r"(?:^|\s)\[([^\[\]\n]+)\](?:\{[^{}\n]*\})?\s*$")


def plain_fence(line: str) -> tuple[str, str]:
    """A fence line with only its language left, and the title its attributes give ("": none)."""
    match = _FENCE_INFO_RE.match(line)
    given = match[2].strip() if match is not None else ""
    if match is None or not given or "`" in given:  # "```text```" on one line is no fence
        return line, ""
    if re.fullmatch(r"[\w+#.-]+", given):
        return match[1] + given, ""
    info = re.sub(r"^\{(?:code-block|code|sourcecode|code-cell)\}\s*", "", given)  # MyST's, unread
    language = _LANGUAGE_RE.match(info)
    keep = language[1] if language is not None and "=" not in info[: language.end() + 1] else ""
    label = _TAB_LABEL_RE.search(info)
    title = (attribute(info, "title") or attribute(info, "filename") or (label[1] if label else "")
             or _bare_title(info, keep))
    return match[1] + keep, title.strip()


#: What follows a fence's language and is not its title: ``key=value`` (quoted, braced or bare),
#: ``{1,3}``, ``[npm]``, ``/word/`` and ``"word"`` highlights, ``:line-numbers``, ``,ignore``.
_FENCE_MARKUP_RE = re.compile(
    r"""[\w-]+=(?:"[^"]*"|'[^']*'|\{[^{}]*\}|\S+)|\{[^{}]*\}|\[[^\[\]]*\]|(?<!\S)(?:/[^/\s]+/|[:,]\S*)|"[^"]*"|'[^']*'""")
#: A title after a fence's language is at most this many words ("Mixpanel with EU data residency").
_TITLE_WORDS = 8
#: Words a fence's info gives as switches, not as a title (Mintlify's ``wrap``, Nextra's ``copy`` and
#: ``npm2yarn``, Docusaurus' ``showLineNumbers`` and ``live``, MDN's ``hidden``, rustdoc's ``ignore``).
_FENCE_FLAGS = frozenset(
    "lines wrap expandable copy nocopy no-copy showlinenumbers linenums numberlines twoslash collapse "
    "ignore editable noplayground no_run should_panic compile_fail hidelines diff npm2yarn live noinline "
    "hidden example-good example-bad".split())
#: One lower-case word joined by hyphens, without a dot: a switch a site's plugin reads
#: (Hatch's ``config-example``, ``example-good``), not a title, which names a file (``docker-compose.yml``)
#: or is written in words.
_FLAG_RE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)+")
#: An info string longer than this holds no title worth reading (and is not read: answers stay fast).
_MAX_INFO_CHARS = 200


def _bare_title(info: str, language: str) -> str:
    """The title written after a fence's language as plain words (Mintlify's ```` ```bash npm ````)."""
    if not language or not info.startswith(language) or len(info) > _MAX_INFO_CHARS:
        return ""
    words = _FENCE_MARKUP_RE.sub(" ", info[len(language):]).split()
    while words and words[-1].lower() in _FENCE_FLAGS:  # switches follow the title ("Example expandable")
        words.pop()
    # A title starts with a letter or a dot (``.env``): "$ npm i" is a prompt, not a title.
    titled = 0 < len(words) <= _TITLE_WORDS and (words[0][:1].isalpha() or words[0][:1] == ".")
    if len(words) == 1 and _FLAG_RE.fullmatch(words[0]):
        return ""  # a site's own switch ("config-example", "no-copy"), not a title
    return " ".join(words) if titled else ""
