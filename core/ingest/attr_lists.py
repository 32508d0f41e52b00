"""Markdown's markup for the site, not for the reader: attribute lists, thematic breaks, search exclusion.

Python-Markdown's ``attr_list`` (MkDocs), kramdown and Pandoc put attributes in braces after a
heading, a link or an image, or on a line of their own before a block; a thematic break
(``---``) draws a rule. A reader sees none of them as text. Material for MkDocs keeps a section
out of its search with ``{ data-search-exclude }`` after its heading: its own blocks stay out of
answers too (up to the next heading).
"""

from __future__ import annotations

import re

#: One attribute of an attribute list (Python-Markdown's ``attr_list``, kramdown, Pandoc): an id, a
#: class, a ``key="value"``, or a bare ``data-`` flag (Material's ``data-search-exclude``).
ATTR = r"(?:[#.][\w.:-]+|[\w-]+=(?:\"[^\"\n]*\"|'[^'\n]*'|[\w.:%-]+)|data-[\w-]+)"
ATTR_LIST = rf"\{{:?[ \t]*{ATTR}(?:[ \t]+{ATTR})*[ \t]*\}}"
#: A heading's own attributes: ``{#install}`` (MkDocs, Docusaurus), ``{ #id data-toc-label="Pip" }``,
#: ``[#install]`` (Nextra 4).
HEADING_ANCHOR = re.compile(rf"(?<!\s)\s*+(?:{ATTR_LIST}|\[#[\w.:-]+\])\s*$")
#: Attributes after a link or an image (``![map](a.png){ width="300" }``): markup, nothing shown. A
#: bracketed span's (``[text]{.smallcaps}``) are left alone.
INLINE_ATTRIBUTES = re.compile(rf"(?<=\))[ \t]?{ATTR_LIST}")
#: A section its author keeps out of the site's search (Material for MkDocs): out of answers too.
SEARCH_EXCLUDED = re.compile(r"\{[^{}\n]*\bdata-search-exclude\b[^{}\n]*\}\s*$")
#: A thematic break (``---``, ``***``, ``_ _ _``) between blocks: a rule drawn, no text.
THEMATIC_BREAK = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$", re.M)
_ATTRIBUTES_READ = re.compile(rf"(?:[)\]]|^#.*?)[ \t]?({ATTR_LIST})", re.M)
_LONE_ID = re.compile(r"\{\s*#[\w.:-]+\s*\}")
#: A line of attributes for the next block: ``{#label}``, MyST's ``{.hide-header}``, kramdown's
#: ``{: .note}``, ``{#intro .lead key="v"}``: markup for the site, nothing a reader sees.
ATTRIBUTE_LINE = re.compile(
    r"^[ \t]*\{:?[ \t]*(?:[#.][\w.:-]+|data-[\w-]+)"
    r"(?:[ \t]+(?:[#.][\w.:-]+|[\w-]+=(?:\"[^\"\n]*\"|'[^'\n]*'|[\w.:%-]+)))*[ \t]*\}[ \t]*$", re.M)


def has_attribute_lines(text: str) -> bool:
    """Whether ``text`` holds a line of block attributes (``{.class}``), which reading leaves out."""
    return ATTRIBUTE_LINE.search(text) is not None


def has_rules_or_attributes(text: str) -> bool:
    """Whether ``text`` holds a rule or attributes after a heading, a link or an image (parser ``rules-1``).

    All were read as text before.
    """
    if THEMATIC_BREAK.search(text) is not None:
        return True
    # A heading's lone id (``{ #title }``) was read as markup already.
    return "{" in text and any(not _LONE_ID.fullmatch(found[1]) for found in _ATTRIBUTES_READ.finditer(text))
