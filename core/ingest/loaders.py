"""Turn one docs file (Markdown, MDX, HTML, plain text) into a ``LoadedDocument``.

Parsing is pure: ``parse_markdown``, ``parse_html`` and ``parse_front_matter``
take text and return typed values; only ``load_file`` touches the disk. A
document is a title, tags, a URL and a list of sections, each a heading path
(``["ROS 2", "Nodes"]``) with its text blocks: paragraphs, lists, tables and
fenced code blocks (kept whole, fences included, so the chunker can see them).

What is dropped on purpose, outside code fences only: front matter, MDX
``import``/``export`` lines, JSX and HTML tags (their inner text is kept),
HTML and MDX comments, Docusaurus ``:::tip`` and MkDocs ``/// tip`` admonition
markers (their titles and inner text are kept), ``{ #anchor }`` heading ids and
MkDocs ``{* file *}`` code includes (the included file is not there to read).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path, PurePosixPath
from typing import Any, NamedTuple
from urllib.parse import quote

from core.errors import IngestSourceError

MARKDOWN_SUFFIXES = frozenset({".md", ".markdown"})
MDX_SUFFIXES = frozenset({".mdx"})
HTML_SUFFIXES = frozenset({".html", ".htm"})
TEXT_SUFFIXES = frozenset({".txt", ".rst"})
SUPPORTED_SUFFIXES = MARKDOWN_SUFFIXES | MDX_SUFFIXES | HTML_SUFFIXES | TEXT_SUFFIXES
#: RetrievedChunk caps titles at 1000 characters; longer ones are cut here.
MAX_TITLE_CHARS = 1000
#: Stems that stand for their folder in Docusaurus URLs and titles.
INDEX_STEMS = frozenset({"index", "readme"})


class Section(NamedTuple):
    """One part of a document: its heading path and its text blocks, in order."""

    headings: list[str]
    blocks: list[str]


@dataclass(frozen=True, kw_only=True, slots=True)
class LoadedDocument:
    """A parsed document, ready for ``core.ingest.chunking.chunk_document``.

    ``raw_sha256`` fingerprints what was read (the file's bytes, or a fetched
    page's extracted text) so an unchanged document can be skipped.
    """

    source_document: str
    title: str
    url: str
    sections: list[Section]
    raw_sha256: str
    tags: list[str] = field(default_factory=list)
    front_matter: dict[str, Any] = field(default_factory=dict)


def is_supported(path: Path) -> bool:
    """Return True when ``load_file`` knows the file's type (``_category_.json`` and friends are not)."""
    return path.suffix.lower() in SUPPORTED_SUFFIXES


# --------------------------------------------------------------------------- file entry point


def load_file(path: Path, *, root: Path, base_url: str | None = None) -> LoadedDocument:
    """Read and parse one file below ``root``.

    Args:
        path: the file.
        root: the ingest root; ``source_document`` is ``path`` relative to it.
        base_url: the published docs' base URL (Docusaurus style); None gives ``file://`` URLs.

    Returns:
        The parsed document.

    Raises:
        IngestSourceError: naming the file when its type is unsupported, it cannot be
            read, or it is not UTF-8 text.
    """
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise IngestSourceError(f"{path}: unsupported file type {suffix or '(none)'!r}")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise IngestSourceError(f"{path}: cannot be read: {exc.strerror or exc}") from exc
    text = decode_text(raw, name=str(path))
    relative = path.relative_to(root).as_posix()
    digest = hashlib.sha256(raw).hexdigest()

    if suffix in HTML_SUFFIXES:
        html_title, sections = parse_html(text)
        return LoadedDocument(
            source_document=relative,
            title=_clip_title(html_title or prettify_stem(relative)),
            url=_document_url(path, relative, base_url=base_url, front_matter={}),
            sections=sections,
            raw_sha256=digest,
        )
    if suffix in TEXT_SUFFIXES:
        return LoadedDocument(
            source_document=relative,
            title=_clip_title(prettify_stem(relative)),
            url=_document_url(path, relative, base_url=base_url, front_matter={}),
            sections=parse_plain_text(text),
            raw_sha256=digest,
        )
    front_matter, body = parse_front_matter(text)
    h1, sections = parse_markdown(body)
    title = _as_text(front_matter.get("title")) or h1 or prettify_stem(relative)
    return LoadedDocument(
        source_document=relative,
        title=_clip_title(title),
        url=_document_url(path, relative, base_url=base_url, front_matter=front_matter),
        sections=sections,
        raw_sha256=digest,
        tags=_as_tags(front_matter.get("tags")),
        front_matter=front_matter,
    )


def decode_text(raw: bytes, *, name: str) -> str:
    """Decode UTF-8 text (a BOM is allowed), refusing binary data.

    Raises:
        IngestSourceError: naming ``name`` when the bytes are binary or not UTF-8.
    """
    # A NUL byte never occurs in text files but almost always in binary ones.
    if b"\x00" in raw[:8192]:
        raise IngestSourceError(f"{name}: looks binary (contains NUL bytes), not a text document")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise IngestSourceError(
            f"{name}: not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start})"
        ) from exc


def html_document(
    text: str, *, source_document: str, url: str, raw_sha256: str | None = None
) -> LoadedDocument:
    """Parse an HTML page fetched from ``url`` (sitemap ingestion).

    Args:
        text: the page's HTML.
        source_document: what identifies the page in the store (its URL).
        url: the link shown to users.
        raw_sha256: fingerprint to use; by default the hash of the extracted text, so
            pages whose markup changes without their content (asset hashes) stay unchanged.

    Returns:
        The parsed document.
    """
    title, sections = parse_html(text)
    if raw_sha256 is None:
        digest = hashlib.sha256()
        for section in sections:
            digest.update("\x1f".join(section.headings).encode())
            for block in section.blocks:
                digest.update(b"\x1e" + block.encode())
        raw_sha256 = digest.hexdigest()
    path = PurePosixPath(url.split("?", 1)[0].split("#", 1)[0].rstrip("/"))
    return LoadedDocument(
        source_document=source_document,
        title=_clip_title(title or prettify_stem(path.name or "index")),
        url=url,
        sections=sections,
        raw_sha256=raw_sha256,
    )


# --------------------------------------------------------------------------- URLs and titles


_NUMBER_PREFIX = re.compile(r"^\d+\s*[-_.]+\s*(?=[^-_.\s])")
_DATE_LIKE = re.compile(r"^\d{2,4}[-_.]\d{2}[-_.]\d{2}[-_.]")


def strip_number_prefix(name: str) -> str:
    """Drop an ordering prefix like Docusaurus does: ``01-module-ros`` -> ``module-ros``.

    Date-like names (``2024-01-31-release``) keep their prefix, as in Docusaurus.
    """
    if _DATE_LIKE.match(name):
        return name
    return _NUMBER_PREFIX.sub("", name, count=1)


def docusaurus_url(
    relative_path: str, *, base_url: str, slug: str | None = None, doc_id: str | None = None
) -> str:
    """Map a docs file to its published URL the way Docusaurus does.

    ``module-1/intro.md`` under ``https://book.dev/docs`` is
    ``https://book.dev/docs/module-1/intro``; ordering prefixes are dropped
    (``01-intro/02-setup.md`` -> ``intro/setup``); ``index``/``README`` stand for their
    folder; an absolute ``slug`` (``/x/y``) replaces the path, a relative one
    replaces the file name, as does a front matter ``id``.

    Args:
        relative_path: path below the docs root, with forward slashes.
        base_url: the docs' base URL (a trailing slash is ignored).
        slug: front matter ``slug``, if any.
        doc_id: front matter ``id``, if any.

    Returns:
        The page URL, percent-encoded.
    """
    base = base_url.rstrip("/")
    pure = PurePosixPath(relative_path)
    folder = [strip_number_prefix(p) for p in pure.parent.parts if p not in ("", ".")]
    if slug:
        slug = slug.strip()
        parts = slug.strip("/").split("/") if slug.startswith("/") else [*folder, *slug.strip("/").split("/")]
    else:
        stem = doc_id.strip() if doc_id else strip_number_prefix(pure.stem)
        parts = folder if not doc_id and stem.lower() in INDEX_STEMS else [*folder, stem]
    path = "/".join(quote(p) for p in parts if p)
    return f"{base}/{path}" if path else base


def prettify_stem(relative_path: str) -> str:
    """Title from a file name: ``ros2-lab_exercises.md`` -> ``Ros2 Lab Exercises``.

    An ``index``/``README`` file is named after its folder.
    """
    pure = PurePosixPath(relative_path)
    stem = pure.stem
    if stem.lower() in INDEX_STEMS and pure.parent.name:
        stem = pure.parent.name
    words = re.sub(r"[-_\s]+", " ", stem).strip()
    return " ".join(w[:1].upper() + w[1:] for w in words.split(" ")) or stem or "Untitled"


def _document_url(path: Path, relative: str, *, base_url: str | None, front_matter: dict[str, Any]) -> str:
    if base_url is None:
        return path.resolve().as_uri()
    return docusaurus_url(
        relative,
        base_url=base_url,
        slug=_as_text(front_matter.get("slug")) or None,
        doc_id=_as_text(front_matter.get("id")) or None,
    )


def _clip_title(title: str) -> str:
    title = " ".join(title.split())
    return title[:MAX_TITLE_CHARS] or "Untitled"


def _as_text(value: Any) -> str:
    if value is None or isinstance(value, (list, dict)):
        return ""
    return str(value).strip()


def _as_tags(value: Any) -> list[str]:
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    tags: list[str] = []
    for item in items:
        text = _as_text(item)
        if text and text not in tags:
            tags.append(text)
    return tags


# --------------------------------------------------------------------------- front matter

_FM_KEY = re.compile(r"^([A-Za-z_][\w-]*)\s*:(?:\s+(.*?))?\s*$")
_FM_ITEM = re.compile(r"^\s+-\s*(.*?)\s*$")


def parse_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """Split YAML-ish front matter (between ``---`` lines) from the body.

    Only what docs use is understood: ``key: value`` with optional quotes and
    ``# comments``, inline lists ``[a, "b c"]`` and block lists (``- item``; an
    item written as ``label: x`` gives ``x``). Nested maps are skipped.

    Returns:
        (front matter as a dict, the text after it); ``({}, text)`` when there is none.
    """
    if not text.startswith("---"):
        return {}, text
    lines = text.split("\n")
    if lines[0].strip() != "---":
        return {}, text
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        return {}, text
    data: dict[str, Any] = {}
    key: str | None = None
    for line in lines[1:end]:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        item = _FM_ITEM.match(line)
        if item and key is not None:
            value = item.group(1)
            nested = _FM_KEY.match(value)
            if nested:  # "- label: ros2": keep the value, the common shape of tag objects.
                value = nested.group(2) or ""
            current = data.get(key)
            if not isinstance(current, list):
                current = data[key] = []
            parsed = _fm_scalar(value)
            if parsed != "":
                current.append(parsed)
            continue
        match = _FM_KEY.match(line)
        if match is None:
            continue  # nested map lines and multi-line scalars are not needed
        key, raw_value = match.group(1), match.group(2) or ""
        data[key] = _fm_value(raw_value) if raw_value else None
    return data, "\n".join(lines[end + 1 :])


def _fm_value(raw: str) -> Any:
    raw = raw.strip()
    if raw.startswith("[") and "]" in raw:
        inner = raw[1 : raw.rindex("]")]
        return [v for v in (_fm_scalar(p) for p in _split_inline_list(inner)) if v != ""]
    if raw in ("|", ">", "|-", ">-"):
        return None  # block scalars span lines we do not read; no field we use is one
    return _fm_scalar(raw)


def _split_inline_list(inner: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    quote_char: str | None = None
    for ch in inner:
        if quote_char:
            current.append(ch)
            if ch == quote_char:
                quote_char = None
        elif ch in "\"'":
            quote_char = ch
            current.append(ch)
        elif ch == ",":
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return parts


def _fm_scalar(raw: str) -> str:
    raw = raw.strip()
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
        return raw[1:-1]
    if raw and raw[0] in "\"'":
        # A quoted value followed by a comment: "Title"  # shown in the tab
        closing = raw.find(raw[0], 1)
        if closing > 0:
            return raw[1:closing]
    comment = re.search(r"\s#", raw)
    return (raw[: comment.start()] if comment else raw).strip()


# --------------------------------------------------------------------------- markdown / MDX

_FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_HEADING_ANCHOR = re.compile(r"\s*\{\s*#[\w.:-]+\s*\}\s*$")
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
_MDX_COMMENT = re.compile(r"\{/\*.*?\*/\}", re.S)
_IMPORT = re.compile(
    r"^import\s+(?:[\w*\s,]*\{[^}]*\}[\w\s,]*from\s+|[\w*\s,]+from\s+)?['\"][^'\"\n]+['\"];?[ \t]*$", re.M
)
_EXPORT = re.compile(r"^export\s+(?:default\s+|const\s|let\s|var\s|function[\s*]|class\s|async\s|\{)")
_ADMONITION = re.compile(
    r"^[ \t]*(?::{3,}|/{3,})[ \t]*(?:[A-Za-z][\w-]*)?[ \t]*"  # ":::tip", "/// note"
    r"(?:\[(?P<bracket>[^\]]*)\]|\|?[ \t]*(?P<title>.*?))[ \t]*$"  # "[Title]", "| Title", " Title"
)
_INCLUDE = re.compile(r"^[ \t]*(?:\{\*.*\*\}|\{\s*#[\w.:-]+\s*\})[ \t]*$", re.M)  # {* file *}, {#label}
_TAG_START = re.compile(r"<(/?)([A-Za-z][\w.:-]*)")
_SPECIAL = re.compile(r"[`<]")
_AUTOLINK = re.compile(r"(?i)(?:https?|mailto|ftp):")
_BLOCK_TAGS = frozenset(
    {"address", "article", "aside", "blockquote", "center", "dd", "details", "div", "dl", "dt",
     "figcaption", "figure", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "li", "ol", "p", "pre",
     "section", "summary", "table", "tbody", "td", "th", "thead", "tr", "ul"}
)
_LABEL_ATTR = re.compile(r"""\blabel\s*=\s*(?:"([^"]*)"|'([^']*)')""")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")


def parse_markdown(text: str) -> tuple[str | None, list[Section]]:
    """Parse Markdown/MDX (front matter already removed) into sections.

    Returns:
        (text of the first ``# H1`` or None, the sections in document order).
    """
    builder = _SectionBuilder()
    for is_code, lines in _split_fences(text.replace("\r\n", "\n").replace("\r", "\n")):
        if is_code:
            builder.block("\n".join(lines))
            continue
        for line in clean_prose("\n".join(lines)).split("\n"):
            heading = _ATX.match(line)
            if heading:
                builder.heading(len(heading.group(1)), _heading_text(heading.group(2) or ""))
                continue
            setext = _SETEXT.match(line)
            if setext and len(builder.paragraph) == 1 and builder.paragraph[0].strip():
                title = builder.paragraph.pop()
                builder.heading(1 if setext.group(1)[0] == "=" else 2, _heading_text(title))
                continue
            if line.strip():
                builder.paragraph.append(line.rstrip())
            else:
                builder.end_paragraph()
    return builder.first_h1, builder.finish()


def clean_prose(text: str) -> str:
    """Remove MDX/HTML syntax from Markdown prose (never call it on code blocks).

    Keeps the text inside tags, admonitions and ``<details>``; drops comments,
    ``import``/``export`` statements, tags, admonition fences and heading anchors.
    """
    text = _HTML_COMMENT.sub("", text)
    text = _MDX_COMMENT.sub("", text)
    text = _IMPORT.sub("", text)
    text = _INCLUDE.sub("", text)
    text = _drop_exports(text)
    text = _strip_tags(text)
    lines: list[str] = []
    for line in text.split("\n"):
        admonition = _ADMONITION.match(line)
        if admonition:
            title = (admonition.group("bracket") or admonition.group("title") or "").strip()
            # The title is a paragraph of its own; the marker line itself carries no text.
            lines.extend(["", title, ""] if title else [""])
            continue
        lines.append(line)
    return "\n".join(lines)


def _drop_exports(text: str) -> str:
    if "export" not in text:
        return text
    out: list[str] = []
    depth = 0
    skipping = False
    for line in text.split("\n"):
        if not skipping and _EXPORT.match(line):
            skipping, depth = True, 0
        if skipping:
            depth += line.count("{") + line.count("(") + line.count("[")
            depth -= line.count("}") + line.count(")") + line.count("]")
            if depth <= 0:
                skipping = False
            continue
        out.append(line)
    return "\n".join(out)


def _strip_tags(text: str) -> str:
    """Remove HTML/JSX tags but keep the text between them and inline code spans."""
    if "<" not in text:
        return text
    out: list[str] = []
    pos = 0
    n = len(text)
    while True:
        match = _SPECIAL.search(text, pos)
        if match is None:
            out.append(text[pos:])
            break
        i = match.start()
        out.append(text[pos:i])
        if text[i] == "`":
            j = i
            while j < n and text[j] == "`":
                j += 1
            end = text.find(text[i:j], j)
            if end == -1 or "\n\n" in text[j:end]:
                out.append(text[i:j])
                pos = j
            else:
                out.append(text[i : end + j - i])
                pos = end + j - i
            continue
        tag = _TAG_START.match(text, i)
        end = _tag_end(text, tag.end()) if tag else -1
        if tag is None or end == -1:
            out.append("<")
            pos = i + 1
            continue
        name = tag.group(2)
        inner = text[tag.end() : end - 1]
        if _AUTOLINK.match(text, i + 1):
            out.append(text[i + 1 : end - 1])  # an autolink <https://...>: keep the address
        elif name.lower() == "br":
            out.append(" ")
        elif name == "TabItem" and not tag.group(1):
            label = _LABEL_ATTR.search(inner)
            out.append(f"\n\n{label.group(1) or label.group(2)}\n\n" if label else "\n")
        elif name.lower() in _BLOCK_TAGS or name[0].isupper():
            out.append("\n")
        pos = end
    return "".join(out)


def _tag_end(text: str, start: int) -> int:
    """Index just past the ``>`` closing a tag whose name ends at ``start``, or -1."""
    if start < len(text) and text[start] not in " \t\n/>":
        return -1
    depth = 0
    i = start
    limit = min(len(text), start + 5000)
    while i < limit:
        ch = text[i]
        if ch in "\"'" and depth == 0:
            close = text.find(ch, i + 1, limit)
            if close == -1:
                return -1
            i = close + 1
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif depth == 0:
            if ch == ">":
                return i + 1
            if ch == "<" or text.startswith("\n\n", i):
                return -1  # "a <b and c": not a tag after all
        i += 1
    return -1


def _heading_text(raw: str) -> str:
    raw = _HEADING_ANCHOR.sub("", raw)
    raw = re.sub(r"[ \t]+#+[ \t]*$", "", raw)  # closing hashes: "## Title ##"
    raw = _LINK.sub(r"\1", raw)
    raw = raw.replace("**", "").replace("__", "").replace("`", "")
    return " ".join(raw.split())


def _split_fences(text: str) -> list[tuple[bool, list[str]]]:
    """Split text into (is_code, lines) runs; code runs include their fences."""
    runs: list[tuple[bool, list[str]]] = []
    prose: list[str] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        opener = _FENCE_OPEN.match(lines[i])
        if opener is None:
            prose.append(lines[i])
            i += 1
            continue
        if prose:
            runs.append((False, prose))
            prose = []
        indent = len(opener.group("indent"))
        fence = opener.group("fence")
        closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        code = [fence + opener.group("info").rstrip()]
        i += 1
        while i < len(lines) and not closing.match(lines[i]):
            line = lines[i]
            # Drop the opener's indentation (fences inside list items) but no more.
            strip = min(indent, len(line) - len(line.lstrip(" \t")))
            code.append(line[strip:].rstrip())
            i += 1
        while len(code) > 1 and not code[-1].strip():
            code.pop()  # trailing blank lines (often an unclosed fence's end of file)
        code.append(fence)  # an unclosed fence is closed so fences always pair up
        i += 1
        runs.append((True, code))
    if prose:
        runs.append((False, prose))
    return runs


class _SectionBuilder:
    """Collects blocks under the current heading path."""

    def __init__(self) -> None:
        self.stack: list[tuple[int, str]] = []
        self.blocks: list[str] = []
        self.paragraph: list[str] = []
        self.sections: list[Section] = []
        self.first_h1: str | None = None

    def heading(self, level: int, text: str) -> None:
        self.end_section()
        if level == 1 and self.first_h1 is None and text:
            self.first_h1 = text
        while self.stack and self.stack[-1][0] >= level:
            self.stack.pop()
        if text:
            self.stack.append((level, text))

    def end_paragraph(self) -> None:
        if self.paragraph:
            block = "\n".join(self.paragraph).strip("\n")
            if block.strip():
                self.blocks.append(block)
            self.paragraph = []

    def block(self, text: str) -> None:
        self.end_paragraph()
        if text.strip():
            self.blocks.append(text)

    def end_section(self) -> None:
        self.end_paragraph()
        if self.blocks:
            self.sections.append(Section([t for _, t in self.stack], self.blocks))
            self.blocks = []

    def finish(self) -> list[Section]:
        self.end_section()
        return self.sections


# --------------------------------------------------------------------------- plain text


def parse_plain_text(text: str) -> list[Section]:
    """Split plain text (``.txt``, ``.rst``) into paragraphs under no heading."""
    normalised = text.replace("\r\n", "\n").replace("\r", "\n")
    blocks = [b.strip("\n") for b in re.split(r"\n[ \t]*\n", normalised) if b.strip()]
    return [Section([], [b.rstrip() for b in blocks])] if blocks else []


# --------------------------------------------------------------------------- HTML

_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
     "track", "wbr"}
)
_DROP = frozenset(
    {"script", "style", "nav", "footer", "aside", "noscript", "template", "svg", "button", "form",
     "iframe", "head", "select", "canvas", "object", "dialog"}
)
_HTML_BLOCKS = frozenset(
    {"p", "div", "section", "blockquote", "ul", "ol", "dl", "dd", "dt", "table", "thead", "tbody",
     "tfoot", "figure", "figcaption", "details", "summary", "h5", "h6", "address", "center", "main",
     "article", "header", "hr", "body", "html"}
)
_HTML_LINES = frozenset({"li", "tr", "br"})
_HEADING_LEVELS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4}
_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\ufeff"))


class _Node:
    __slots__ = ("attrs", "children", "tag")

    def __init__(self, tag: str, attrs: dict[str, str]) -> None:
        self.tag = tag
        self.attrs = attrs
        self.children: list[_Node | str] = []

    def find_all(self, tag: str, *, nested: bool = False) -> list[_Node]:
        found: list[_Node] = []
        stack: list[_Node] = [self]
        while stack:
            node = stack.pop()
            for child in reversed(node.children):
                if isinstance(child, _Node):
                    if child.tag == tag:
                        found.append(child)
                        if not nested:
                            continue
                    stack.append(child)
        return found

    def text(self) -> str:
        parts: list[str] = []
        stack: list[_Node | str] = [self]
        while stack:
            node = stack.pop()
            if isinstance(node, str):
                parts.append(node)
            elif node.tag not in _DROP:
                stack.extend(reversed(node.children))
        return " ".join("".join(parts).translate(_ZERO_WIDTH).split())


class _TreeBuilder(HTMLParser):
    """A forgiving DOM: unknown end tags are ignored, unclosed ones closed at their parent's end."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = _Node("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = _Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in _VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(_Node(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)


def parse_html(text: str) -> tuple[str | None, list[Section]]:
    """Extract the main content of an HTML page as sections.

    The content root is ``<main>`` (narrowed to its ``<article>`` when it holds
    exactly one), else a lone ``<article>``, else ``<body>``. Navigation, headers
    outside the content root, footers, scripts, styles and asides are dropped;
    ``h1``-``h4`` form the heading path; ``<pre>`` becomes a fenced code block.

    Returns:
        (title: the first ``<h1>`` of the content, else ``<title>`` up to a " | ", or None;
        the sections).
    """
    builder = _TreeBuilder()
    builder.feed(text)
    builder.close()
    document = builder.root
    mains = document.find_all("main")
    bodies = document.find_all("body")
    root = mains[0] if mains else (bodies[0] if bodies else document)
    articles = root.find_all("article")
    if len(articles) == 1:
        root = articles[0]
    in_content = root.tag in ("main", "article")

    title: str | None = None
    h1s = root.find_all("h1")
    if h1s:
        title = _heading_node_text(h1s[0]) or None
    if title is None:
        titles = document.find_all("title")
        if titles:
            title = titles[0].text().split(" | ")[0].strip() or None

    renderer = _HtmlRenderer(keep_header=in_content)
    renderer.walk(root)
    return title, renderer.builder.finish()


def _heading_node_text(node: _Node) -> str:
    # Docusaurus puts a "#" permalink (class hash-link) inside every heading.
    clone = _Node(node.tag, node.attrs)
    clone.children = [
        c for c in node.children if not (isinstance(c, _Node) and "hash-link" in c.attrs.get("class", ""))
    ]
    return clone.text()


class _HtmlRenderer:
    """Walks the content tree, turning elements into lines, blocks and sections."""

    def __init__(self, *, keep_header: bool) -> None:
        self.builder = _SectionBuilder()
        self.keep_header = keep_header
        self.inline: list[str] = []
        self.prefix = ""
        self.lines: list[str] = []
        self.list_depth = 0

    def walk(self, node: _Node) -> None:
        # An explicit stack, not recursion: deeply nested markup must not hit the recursion limit.
        stack: list[tuple[_Node | str, bool]] = [(node, False)]
        while stack:
            item, leaving = stack.pop()
            if isinstance(item, str):
                self.inline.append(item)
                continue
            tag = item.tag
            if leaving:
                self._leave(item)
                continue
            if tag in _DROP or (tag == "header" and not self.keep_header):
                continue
            if tag in _HEADING_LEVELS:
                self.end_block()
                self.builder.heading(_HEADING_LEVELS[tag], _heading_node_text(item))
                continue
            if tag == "pre":
                self._code_block(item)
                continue
            if tag == "code":
                self.inline.append("`" + item.text() + "`")
                continue
            if tag == "img":
                continue
            self._enter(item)
            stack.append((item, True))
            stack.extend((child, False) for child in reversed(item.children))

    def _enter(self, node: _Node) -> None:
        tag = node.tag
        if tag in ("ul", "ol") and self.list_depth:
            self.end_line()  # a nested list continues its parent's block
        elif tag in _HTML_BLOCKS:
            self.end_block()
        elif tag == "li":
            self.end_line()
            self.prefix = "  " * max(self.list_depth - 1, 0) + "- "
        elif tag == "tr":
            self.end_line()
        elif tag in ("td", "th") and self.inline and "".join(self.inline).strip():
            self.inline.append(" | ")
        if tag in ("ul", "ol"):
            self.list_depth += 1

    def _leave(self, node: _Node) -> None:
        tag = node.tag
        if tag in ("ul", "ol"):
            self.list_depth -= 1
            if self.list_depth:
                self.end_line()
                return
        if tag in _HTML_BLOCKS:
            self.end_block()
        elif tag in _HTML_LINES:
            self.end_line()

    def _code_block(self, node: _Node) -> None:
        self.end_block()
        parts: list[str] = []
        stack: list[_Node | str] = [node]
        language = ""
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                parts.append(item)
                continue
            if item.tag == "br":
                parts.append("\n")
            match = re.search(r"language-([\w+#-]+)", item.attrs.get("class", ""))
            if match and not language:
                language = match.group(1)
            stack.extend(reversed(item.children))
        code = "".join(parts).translate(_ZERO_WIDTH).strip("\n")
        if code.strip():
            # A longer fence than any backtick run inside keeps the block closed where it should.
            longest = max((len(m) for m in re.findall(r"`{3,}", code)), default=2)
            fence = "`" * max(3, longest + 1)
            self.builder.block(f"{fence}{language}\n{code.rstrip()}\n{fence}")

    def end_line(self) -> None:
        line = " ".join("".join(self.inline).translate(_ZERO_WIDTH).split())
        prefix, self.prefix, self.inline = self.prefix, "", []
        if line.strip(" |"):
            self.lines.append(prefix + line)

    def end_block(self) -> None:
        self.end_line()
        if self.lines:
            self.builder.block("\n".join(self.lines))
            self.lines = []
