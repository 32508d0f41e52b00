"""Turn one docs file (Markdown, MDX, HTML, reStructuredText, notebooks, text) into a ``LoadedDocument``.

This module only dispatches on the file's suffix; each format has its own module:
``markdown.py`` (Markdown and MDX; MyST pages through ``myst.py`` first, MkDocs' notes and tabs
through ``mkdocs.py``, GitBook, Jekyll and Hugo tags through ``templates.py``), ``front_matter.py``,
``html.py``, ``rst.py`` (with ``sphinx.py``), ``notebook.py`` (then as Markdown), ``text.py``,
and ``urls.py`` for where a file is published. Parsing is pure: those modules take
text and return typed values; only ``load_file`` touches the disk, and it opens only
regular files whose resolved path is inside the ingest root (never a FIFO, a device,
or a symbolic link unless asked to follow it).
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import stat
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from core.errors import IngestSourceError
from core.ingest.asciidoc import SUFFIXES as ASCIIDOC_SUFFIXES
from core.ingest.attr_lists import has_attribute_lines, has_rules_or_attributes
from core.ingest.components import has_components
from core.ingest.deflists import definition_lists, has_definition_lists
from core.ingest.document import LoadedDocument, Section, clip_title
from core.ingest.front_matter import endpoint, parse_front_matter, tag_list, text_value
from core.ingest.html import parse_html
from core.ingest.markdown import (
    has_filename_captions,
    has_icons,
    has_include_lines,
    has_inline_markup,
    has_reference_links,
    has_unclosed_span_in_table_row,
    has_untitled_notes,
    is_code_block,
    parse_markdown,
)
from core.ingest.mdx import has_mdx_syntax
from core.ingest.mkdocs import looks_like_mkdocs, mkdocs_to_markdown
from core.ingest.myst import looks_like_myst, myst_to_markdown
from core.ingest.notebook import read_notebook
from core.ingest.partials import in_mintlify_site, with_partials
from core.ingest.sitelinks import site_links
from core.ingest.spans import CODE_SPAN
from core.ingest.sphinx_targets import SphinxTargets, reading_from
from core.ingest.templates import looks_like_templates, templates_to_markdown
from core.ingest.text import decode_text, parse_plain_text
from core.ingest.urls import document_url, prettify_stem, stands_for_folder
from core.retrieval.terms import content_terms, is_number

__all__ = [
    "MAX_FILE_BYTES",
    "SUPPORTED_SUFFIXES",
    "LoadedDocument",
    "Section",
    "is_supported",
    "load_file",
    "read_regular_file",
]

MARKDOWN_SUFFIXES = frozenset({".md", ".markdown"})
MDX_SUFFIXES = frozenset({".mdx"})
HTML_SUFFIXES = frozenset({".html", ".htm"})
RST_SUFFIXES = frozenset({".rst"})
NOTEBOOK_SUFFIXES = frozenset({".ipynb"})
TEXT_SUFFIXES = frozenset({".txt"})
SUPPORTED_SUFFIXES = (MARKDOWN_SUFFIXES | MDX_SUFFIXES | HTML_SUFFIXES | RST_SUFFIXES | NOTEBOOK_SUFFIXES
                      | TEXT_SUFFIXES | ASCIIDOC_SUFFIXES)
#: Parsers whose reading of a format changed: pages they read are chunked again once
#: (``LoadedDocument.parser``). Bump a tag when its parser's output changes.
#: -4: what a page writes under autodoc's directives; -5: malformed tables, cells with unknown roles;
#: -6: a project's own directive writing prose (``.. conf::``) kept; -7: the table of contents
#: ``.. contents::`` generates left out
RST_PARSER = "rst-7"
MYST_PARSER = "myst-2"
ASCIIDOC_PARSER = "asciidoc-1"
MKDOCS_PARSER = "mkdocs-3"  # -3: code annotation markers left out
#: -4: code tags (``code-toggle``) hold code; tabs keep positional names; -5: tags inside prose as shown
TEMPLATES_PARSER = "templates-5"
#: Pages with MDX comments or ESM statements, which may run over lines holding fences (``core.ingest.mdx``).
MDX_PARSER = "mdx-1"
#: Mintlify pages, whose front matter's ``description`` the site shows under their title.
DESCRIBED_PARSER = "described-1"
#: API reference pages whose operation (front matter's ``openapi: "POST /x"``) was not read.
ENDPOINT_PARSER = "endpoint-1"
#: Definition lists, whose terms were read apart from the ": definition" line under them (-2: also
#: with a blank line between the term and its definition).
DEFLISTS_PARSER = "deflists-2"
#: Pages with attribute lines (``{.hide-header}``), which were read as text before.
ATTRIBUTES_PARSER = "attributes-1"
#: Pages including files (mdBook's ``{{#include file}}``, MkDocs' ``{* file *}``): 1: an include line
#: outside code was read as text; 2: the sentence introducing one ends in a full stop, not a colon.
INCLUDES_PARSER = "includes-2"
#: Pages defining or making reference links (``[ref]: url``, ``[a][ref]``), whose references and
#: definitions were read as text before (``-2``: a definition may give its URL on the next line;
#: ``-3``: pages making a reference too, an undefined ``[text][ref]`` shows its text).
REFLINKS_PARSER = "reflinks-3"
#: Pages with character references, ``<code>``, GitHub alerts, tabs or comments in code spans
#: (``has_inline_markup``), which were read as written before; -2: an untitled alert's kind opens
#: its first paragraph.
MARKUP_PARSER = "markup-2"
#: Pages with CommonMark's indented code blocks, which were read as prose before.
INDENTED_CODE_PARSER = "indented-code-1"
#: Pages showing Material for MkDocs' icons (``:material-help:``), whose shortcodes were read as text.
ICONS_PARSER = "icons-1"
#: Pages with titled components (``<Card title="...">``, ``<LinkCard>``), whose titles were left out.
#: -2: a field's name and type (``<ParamField>``), a tab's title; -3: callouts' kinds, steps as parts,
#: components inside a line, text for agents left out
COMPONENTS_PARSER = "components-3"
#: Pages linking to other pages of the docs, published under a base URL (``core.ingest.sitelinks``;
#: 2: the linked page's ``slug`` or ``id`` followed).
SITE_LINKS_PARSER = "site-links-2"
#: Pages captioning a listing with its file (mdBook's ``<span class="filename">``), now the code's title.
FILENAME_PARSER = "filename-1"
#: Pages importing a partial (``<Warning />``), whose text now stands where the page shows it.
PARTIALS_PARSER = "partials-1"
#: Pages with an untitled note (``:::tip``), whose first line now shows its kind ("Tip: ...").
NOTES_PARSER = "notes-1"
#: Pages titled by their book's table of contents (mdBook's ``SUMMARY.md``), not their file name.
TOC_TITLE_PARSER = "toc-title-1"
#: Pages titled from their file name, a word cased as the page writes it ("SSL" for ``ssl.md``).
CASED_TITLE_PARSER = "cased-title-1"
#: Pages titled by the heading that heads them (``### Providers`` over its ``####`` sections), not
#: their file name (``components.md``).
HEADING_TITLE_PARSER = "heading-title-1"
#: Pages with a table row opening a code span it does not close, which ran on into the rows below.
TABLE_SPANS_PARSER = "table-spans-1"
#: Pages with a thematic break (``---``), or attributes after a heading, a link or an image
#: (``{ #id data-toc-label="x" }``, ``{ width="300" }``), read as text before.
RULES_PARSER = "rules-1"
#: HTML pages, read since with their links and tables as Markdown, landmarks, permalinks and
#: screen-reader text left out, and redirect stubs holding nothing (-3: a definition list's terms
#: open their definition's first line; Sphinx's "[source]" links left out; -4: a list item written
#: <li><p> keeps its marker, numbered lists their numbers, a note's title opens its text; Sphinx's
#: generated pages and in-page tables of contents left out).
HTML_PARSER = "html-4"
#: Larger files are not read: no page of docs is this big, and memory grows with the file.
MAX_FILE_BYTES = 16 * 1024 * 1024


class Parsed(NamedTuple):
    """What a format's parser found in a file's text."""

    title: str | None
    sections: list[Section]
    front_matter: dict[str, Any]
    parser: str = ""
    #: What fingerprints the page when its bytes change more often than its text ("": the bytes).
    fingerprint: str = ""
    #: The heading a page without a title opens with: its title when it names what the file does
    #: or heads the whole page (``heads_page``).
    opening: str | None = None
    heads_page: bool = False


def _markdown(text: str, *, mdx: bool = False) -> Parsed:
    front_matter, body = parse_front_matter(text)
    return _markdown_body(body, front_matter, mdx=mdx)


#: What a Markdown page holds that is read otherwise since a parser tag, and that tag, in order.
_MARKDOWN_READINGS: tuple[tuple[Callable[[str], bool], str], ...] = (
    (has_attribute_lines, ATTRIBUTES_PARSER),
    (has_include_lines, INCLUDES_PARSER),
    (has_reference_links, REFLINKS_PARSER),
    (has_inline_markup, MARKUP_PARSER),
    (has_icons, ICONS_PARSER),
    (has_components, COMPONENTS_PARSER),
    (has_filename_captions, FILENAME_PARSER),
    (has_untitled_notes, NOTES_PARSER),
    (has_mdx_syntax, MDX_PARSER),
    (has_unclosed_span_in_table_row, TABLE_SPANS_PARSER),
    (has_rules_or_attributes, RULES_PARSER),
)


def _markdown_body(body: str, front_matter: dict[str, Any], *, mdx: bool = False) -> Parsed:
    parsers = []
    body = body.replace("\r\n", "\n").replace("\r", "\n")  # the rewrites below read lines
    if not mdx and looks_like_myst(body):  # MDX's braces are JSX, never MyST
        body = myst_to_markdown(body)
        parsers.append(MYST_PARSER)
    if looks_like_mkdocs(body):
        body = mkdocs_to_markdown(body)
        parsers.append(MKDOCS_PARSER)
    if looks_like_templates(body):
        body = templates_to_markdown(body)
        parsers.append(TEMPLATES_PARSER)
    if has_definition_lists(body) and (defined := definition_lists(body)) != body:
        body = defined
        parsers.append(DEFLISTS_PARSER)
    parsers.extend(tag for reads_differently, tag in _MARKDOWN_READINGS if reads_differently(body))
    if (operation := endpoint(front_matter)) is not None:
        body = f"`{operation}`\n\n{body}"  # an API page's operation, shown first on the site
        parsers.append(ENDPOINT_PARSER)
    page = parse_markdown(body, indented_code=not mdx)
    if page.indented_code:
        parsers.append(INDENTED_CODE_PARSER)
    title = text_value(front_matter.get("title")) or page.h1
    return Parsed(title, page.sections, front_matter, "+".join(parsers), opening=page.opening,
                  heads_page=page.heads_page)


def _mdx(text: str) -> Parsed:
    return _markdown(text, mdx=True)


def _html(text: str) -> Parsed:
    title, sections = parse_html(text)
    return Parsed(title, sections, {}, HTML_PARSER)


def _rst(text: str) -> Parsed:
    # Imported here: docutils adds ~70 ms to every command's start, and only .rst pages need it.
    from core.ingest.rst import parse_rst

    title, sections = parse_rst(text)
    return Parsed(title, sections, {}, RST_PARSER)


def _notebook(text: str) -> Parsed:
    notebook = read_notebook(text)
    front_matter = parse_front_matter(notebook.front_matter + "\n")[0] if notebook.front_matter else {}
    parsed = _markdown_body(notebook.markdown, front_matter)
    # Its cells, not its bytes: outputs and execution counts change each time it runs.
    fingerprint = hashlib.sha256(f"{notebook.front_matter}\x00{notebook.markdown}".encode()).hexdigest()
    return parsed._replace(fingerprint=fingerprint)


def _asciidoc(markdown: str) -> Parsed:
    """An AsciiDoc page, read as Markdown already (``asciidoc_markdown``, which reads its includes)."""
    parsed = _markdown_body(markdown, {})
    return parsed._replace(parser="+".join(p for p in (ASCIIDOC_PARSER, parsed.parser) if p))


def _plain_text(text: str) -> Parsed:
    return Parsed(None, parse_plain_text(text), {})


#: The parser of each supported suffix.
PARSERS: dict[str, Callable[[str], Parsed]] = {
    **dict.fromkeys(MARKDOWN_SUFFIXES, _markdown),
    **dict.fromkeys(MDX_SUFFIXES, _mdx),
    **dict.fromkeys(HTML_SUFFIXES, _html),
    **dict.fromkeys(RST_SUFFIXES, _rst),
    **dict.fromkeys(NOTEBOOK_SUFFIXES, _notebook),
    **dict.fromkeys(TEXT_SUFFIXES, _plain_text),
    **dict.fromkeys(ASCIIDOC_SUFFIXES, _asciidoc),
}


def is_supported(path: Path) -> bool:
    """Return True when ``load_file`` knows the file's type (``_category_.json`` and friends are not)."""
    return path.suffix.lower() in SUPPORTED_SUFFIXES


def _named_by_file(heading: str | None, relative: str) -> str | None:
    """``heading`` when it shares a word with the file's name: "The Slice Type" for
    ``ch04-03-slices.md``; "Requirements" opening ``install.md`` names a part of the page."""
    if not heading:
        return None
    if stands_for_folder(relative):
        return heading  # an index page's name is its folder's: its opening heading says more
    named = {t for t in content_terms(prettify_stem(relative)) if not is_number(t)}
    return heading if named & set(content_terms(heading)) else None


def _cased_as_written(title: str, sections: list[Section]) -> str:
    """``title`` (made from a file name) with each word cased as the page writes it most.

    "Ssl" for ``ssl.md`` is "SSL" on the page. Only a form with two capitals or more counts (an
    acronym, "GitHub"): the file name's capitalised word is never worse than a lower-case one.
    """
    words = title.split(" ")
    wanted = {w.casefold() for w in words if w.isalpha()}
    if not wanted:
        return title
    # Words of prose only: code and its names (``GITHUB_TOKEN``, ``DJANGO_SETTINGS_MODULE``) say
    # nothing of how the page writes a word.
    prose = (CODE_SPAN.sub(" ", block) for section in sections for block in section.blocks
             if not is_code_block(block))
    counts: Counter[str] = Counter(
        form for text in prose for form in re.findall(r"\w+", text)
        if form.isalpha() and form.casefold() in wanted and sum(c.isupper() for c in form) >= 2)
    best: dict[str, str] = {}
    for form, _ in counts.most_common():
        best.setdefault(form.casefold(), form)
    return " ".join(best.get(w.casefold(), w) for w in words)


def load_file(
    path: Path, *, root: Path, base_url: str | None = None, follow_symlinks: bool = False,
    titles: Mapping[str, str] | None = None, targets: SphinxTargets | None = None,
) -> LoadedDocument:
    """Read and parse one file below ``root``.

    Args:
        path: the file.
        root: the ingest root; ``source_document`` is ``path`` relative to it.
        base_url: the published docs' base URL (Docusaurus style); None gives ``file://`` URLs.
        follow_symlinks: read ``path`` when it is a symbolic link (to a file inside ``root``).
        titles: a book's titles of its pages by path (``core.ingest.toc``), for a page without one.
        targets: the titles Sphinx shows for cross-references in the folder's ``.rst`` pages.

    Returns:
        The parsed document; its title is the front matter's, else the first heading,
        else one made from the file name.

    Raises:
        IngestSourceError: naming the file when its type is unsupported, it cannot be
            read, it is not a regular file inside ``root``, or it is not UTF-8 text.
    """
    suffix = path.suffix.lower()
    parse = PARSERS.get(suffix)
    if parse is None:
        raise IngestSourceError(f"{path}: unsupported file type {suffix or '(none)'!r}")
    raw = read_regular_file(path, root=root, follow_symlinks=follow_symlinks)
    relative = path.relative_to(root).as_posix()
    with reading_from(targets, relative):
        parsed, shows_partials = _parse(parse, decode_text(raw, name=str(path)), path=path, root=root,
                                        follow_symlinks=follow_symlinks)
    listed = None if parsed.title else (titles or {}).get(relative)
    title = parsed.title or listed or _named_by_file(parsed.opening, relative)
    headed = not title and parsed.heads_page
    title = title or (parsed.opening if headed else None)
    parser = "+".join(p for p in (parsed.parser, TOC_TITLE_PARSER if listed else "",
                                  PARTIALS_PARSER if shows_partials else "",
                                  HEADING_TITLE_PARSER if headed else "") if p)
    sections = parsed.sections
    if base_url is not None:
        sections, linked = site_links(
            sections, relative=relative, base_url=base_url, root=root,
            page_suffixes=SUPPORTED_SUFFIXES - TEXT_SUFFIXES,
            page_url=lambda page: _published_url(root, page, base_url=base_url))
        if linked:  # stored with the links as written before
            parser = "+".join(p for p in (parser, SITE_LINKS_PARSER) if p)
    if not title:
        named = prettify_stem(relative)
        title = _cased_as_written(named, sections)
        if title != named:  # stored before names were cased as the page writes them
            parser = "+".join(p for p in (parser, CASED_TITLE_PARSER) if p)
    return LoadedDocument(
        source_document=relative,
        title=clip_title(title),
        url=document_url(path, relative, base_url=base_url, front_matter=parsed.front_matter),
        sections=sections,
        raw_sha256=parsed.fingerprint or hashlib.sha256(raw).hexdigest(),
        tags=tag_list(parsed.front_matter.get("tags")),
        front_matter=parsed.front_matter,
        parser=parser,
    )


def _parse(parse: Callable[[str], Parsed], text: str, *, path: Path, root: Path, follow_symlinks: bool
           ) -> tuple[Parsed, bool]:
    """The page parsed, with the partials it shows (Markdown), and whether it shows any."""
    whole = text
    read = functools.partial(read_regular_file, root=root, follow_symlinks=follow_symlinks)
    if path.suffix.lower() in MARKDOWN_SUFFIXES | MDX_SUFFIXES:
        whole = with_partials(text, path=path, root=root, read=read)
    if path.suffix.lower() in ASCIIDOC_SUFFIXES:  # its includes are part of reading it, not partials
        # Imported here, as docutils is for .rst: only AsciiDoc pages need its patterns compiled.
        from core.ingest.asciidoc.page import asciidoc_markdown

        text = whole = asciidoc_markdown(text, path=path, root=root, read=read)
    try:
        parsed = parse(whole)
    except IngestSourceError as exc:  # the content is not its suffix's format (a notebook that is no JSON)
        raise IngestSourceError(f"{path}: {exc}") from exc
    if path.suffix.lower() in MARKDOWN_SUFFIXES | MDX_SUFFIXES:
        parsed = _described(parsed, path=path, root=root)
    return parsed, whole != text


def _described(parsed: Parsed, *, path: Path, root: Path) -> Parsed:
    """A Mintlify page with its front matter's ``description`` as its first paragraph.

    Mintlify shows it under the page's title, often the only sentence saying what the page is
    about ("Mintlify is an AI-native documentation platform ..."). Other sites keep it for search
    engines only: read as text there, it changed nothing (BENCHMARKS.md, fifteenth pass).
    """
    described = text_value(parsed.front_matter.get("description")).strip()
    if not described or not in_mintlify_site(path, root=root):
        return parsed
    lead = " ".join(described.split())
    first = parsed.sections[0] if parsed.sections else None
    sections = ([Section(first.headings, [lead, *first.blocks]), *parsed.sections[1:]]
                if first is not None and not first.headings else [Section([], [lead]), *parsed.sections])
    parser = "+".join(p for p in (parsed.parser, DESCRIBED_PARSER) if p)
    return parsed._replace(sections=sections, parser=parser)


def _published_url(root: Path, page: str, *, base_url: str) -> str:
    """The address the site serves ``page`` (a path in the docs) at, after its ``slug`` or ``id``.

    Docusaurus serves ``usage/WritingTests.mdx`` with ``id: writing-tests`` at ``usage/writing-tests``:
    a link naming the file goes there, not to an address built from the file's name.
    """
    path = root / page
    front_matter: dict[str, Any] = {}
    if path.suffix.lower() in MARKDOWN_SUFFIXES | MDX_SUFFIXES:
        try:
            state = path.stat()
            front_matter = _front_matter_of(path, root, state.st_mtime_ns, state.st_size)
        except (OSError, IngestSourceError):  # an unreadable page keeps the address its path gives
            pass
    return document_url(path, page, base_url=base_url, front_matter=front_matter)


@functools.lru_cache(maxsize=4096)
def _front_matter_of(path: Path, root: Path, mtime_ns: int, size: int) -> dict[str, Any]:
    """The front matter of the Markdown page at ``path``, cached while the file is unchanged.

    Pages link to the same pages over and over; the dict is shared, and only read.
    """
    del mtime_ns, size  # only the cache's key: a changed file is read again
    text = decode_text(read_regular_file(path, root=root), name=str(path))
    return parse_front_matter(text)[0]


def read_regular_file(path: Path, *, root: Path, follow_symlinks: bool = False) -> bytes:
    """The bytes of ``path``, if it is a regular file whose resolved path is inside ``root``.

    Opened with ``O_NOFOLLOW`` (a link swapped in after the walk is refused) and
    ``O_NONBLOCK`` (a FIFO swapped in does not block), then checked with ``fstat``.

    Raises:
        IngestSourceError: naming the file and what is wrong with it.
    """
    if path.is_symlink() and not follow_symlinks:
        raise IngestSourceError(f"{path}: is a symbolic link; ragbot does not follow links "
                                "unless asked to (--follow-symlinks)")
    try:
        real = path.resolve()
    except (RuntimeError, OSError) as exc:  # a loop of links on the way ("Symlink loop from ...")
        raise IngestSourceError(f"{path}: cannot be resolved: {exc}") from exc
    if not real.is_relative_to(root.resolve()):
        raise IngestSourceError(f"{path}: resolves to {str(real)!r}, outside the docs folder {str(root)!r}")
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(real, flags)
    except OSError as exc:
        raise IngestSourceError(f"{path}: cannot be read: {exc.strerror or exc}") from exc
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise IngestSourceError(f"{path}: not a regular file (a FIFO, socket or device is never read)")
        if info.st_size > MAX_FILE_BYTES:
            raise IngestSourceError(f"{path}: larger than {MAX_FILE_BYTES // (1024 * 1024)} MB, not read")
        try:
            return handle.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            raise IngestSourceError(f"{path}: cannot be read: {exc.strerror or exc}") from exc
