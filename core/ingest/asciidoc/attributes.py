"""AsciiDoc's attributes: entries (``:name: value``), references (``{name}``) and the built-in ones.

A page names its URLs and versions once (``:url-repo: https://...``) and writes ``{url-repo}``
after; Antora adds the component's own from ``antora.yml``. Read as written, an answer quoted
``{url-project-repo}/blob/main`` where the site shows the address.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["BASE_ATTRIBUTES", "BUILT_IN", "ENTRY", "entry", "substituted"]

#: What every page reads: the HTML backend's attributes, as a site built with Asciidoctor sets them.
BASE_ATTRIBUTES = {"backend": "html5", "backend-html5": "", "basebackend": "html", "basebackend-html": "",
                   "embedded": "", "asciidoctor": "", "safe-mode-name": "safe"}

#: The characters AsciiDoc names by attribute, to write what its syntax would read otherwise.
BUILT_IN: Mapping[str, str] = {
    "nbsp": " ", "sp": " ", "empty": "", "blank": "", "zwsp": "", "wj": "", "startsb": "[",
    "endsb": "]", "vbar": "|", "caret": "^", "asterisk": "*", "tilde": "~", "plus": "+",
    "backslash": "\\", "backtick": "`", "two-colons": "::", "two-semicolons": ";;", "amp": "&",
    "lt": "<", "gt": ">", "quot": '"', "apos": "'", "deg": "°", "brvbar": "¦", "ldquo": "“",
    "rdquo": "”", "lsquo": "‘", "rsquo": "’", "cpp": "C++", "pp": "++", "cxx": "C++",
}
#: An attribute entry: ``:name: value``, unset by ``:name!:`` or ``:!name:``.
#: Matched on the line without its trailing blanks: a run of them costs nothing.
ENTRY = re.compile(r"^:(?P<bang>!?)(?P<name>[\w][\w-]*)(?P<unset>!?):(?:[ \t]+(?P<value>.*))?$")
#: A reference to an attribute (``{url-repo}``), not escaped (``\{name}``) nor a counter.
_REFERENCE = re.compile(r"(?<!\\)\{(?P<name>[\w][\w-]*)\}")
_ESCAPED = re.compile(r"\\(\{[\w][\w-]*\})")
#: A value passed through whole (``pass:q[...]``): what the entry sets is its text.
_PASSED = re.compile(r"^pass:[a-z,]*\[(?P<text>.*)\]$")


def entry(line: str) -> tuple[str, str | None] | None:
    """The attribute a line sets (its name, and its value or None when it unsets it), if it is an entry."""
    match = ENTRY.match(line.rstrip()) if line.startswith(":") else None
    if match is None:
        return None
    name = match["name"].lower()
    if match["bang"] or match["unset"]:
        return name, None
    value = (match["value"] or "").removesuffix(" +").removesuffix(" \\")
    passed = _PASSED.match(value)  # ``:description: pass:q[The `SHOW` statement ...]``: its text
    return name, passed["text"] if passed else value


def substituted(text: str, attributes: Mapping[str, str]) -> str:
    """``text`` with each reference to a known attribute replaced by its value.

    An unknown one stays as written, as Asciidoctor leaves it (``attribute-missing: skip``);
    ``\\{name}`` shows ``{name}``.
    """
    if "{" not in text:
        return text

    def value(reference: re.Match[str]) -> str:
        """A reference's value, or the reference as written."""
        name = reference["name"].lower()
        found = attributes.get(name, BUILT_IN.get(name))
        return reference[0] if found is None else found

    return _ESCAPED.sub(r"\1", _REFERENCE.sub(value, text))
