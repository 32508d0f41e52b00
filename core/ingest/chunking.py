"""Split a ``LoadedDocument`` into ``DocumentChunk``s along its heading hierarchy.

Each section's blocks are packed into chunks near ``target_chars``; a block too
long for that is split at line, then sentence, then word boundaries. Fenced code
blocks are never split: one longer than ``max_chars`` becomes a chunk of its own,
keeping only a short lead-in such as "Create the node:" (blocks beyond the
store's 50,000-character text limit are the exception: they are cut at line
boundaries and each piece is fenced again). A chunk after the first of a section
starts with the tail of the previous one (``overlap_chars``), unless that tail
is code. Sections under ~200 characters are merged with the next one, so a
heading with one line under it does not become a useless chunk.

``content`` is the passage only; ``embedding_text`` adds the title and section
so the vector knows where the passage sits.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from dataclasses import dataclass

from core.ingest.fences import Fences
from core.ingest.loaders import LoadedDocument, Section
from core.ingest.tables import compact_table, table_head, table_pieces
from core.models import MAX_TEXT_LENGTH, DocumentChunk
from core.retrieval.terms import introduces_next, names_entry

#: Bump whenever chunk boundaries or texts change, so every document is re-ingested (6: an entry's
#: name on its own line goes to the next chunk with what it names, or with the code under it; a
#: table's alignment padding goes; 7: the Markdown parser ends a paragraph where a table starts or
#: ends inside it, so such a table is compacted and cut under its header too).
CHUNKER_VERSION = "7"
#: Sections shorter than this are merged with their neighbour.
MIN_SECTION_CHARS = 200
#: RetrievedChunk caps ``section`` at 2000 characters.
MAX_SECTION_CHARS = 2000
SECTION_SEPARATOR = " > "

_FENCE = re.compile(r"^(`{3,}|~{3,})")
_SENTENCE_END = re.compile(r"(?<=[.!?…:;])\s+(?=\S)")
_PARAGRAPH = "\n\n"
#: Prose this many times the target with no sentence end is split into runs of words, not words.
_HUGE_RUN = 64


@dataclass(frozen=True, slots=True)
class _Unit:
    """An unsplittable piece of a section: its text, how it joins the previous piece, is it code."""

    text: str
    joiner: str
    code: bool = False
    #: A table, or rows of one under its header: no other chunk starts with its tail.
    table: bool = False


def chunk_id(source_document: str, chunk_index: int) -> str:
    """The deterministic id of a document's ``chunk_index``-th chunk (uuid5 over ``doc#index``)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{source_document}#{chunk_index}"))


#: Times the ``title > section`` line is repeated in the embedded text: title words then count
#: more in BM25 (field weighting). 2 was best on SciFact train (BENCHMARKS.md).
DEFAULT_TITLE_REPEAT = 2


def document_hash(
    doc: LoadedDocument, *, target_chars: int = 1200, max_chars: int = 2000, overlap_chars: int = 150,
    title_repeat: int = DEFAULT_TITLE_REPEAT,
) -> str:
    """Fingerprint of everything that decides a document's chunks.

    The raw content, the chunker version and settings, the URL, title and tags
    (which land in every chunk's payload, and change with ``base_url`` or ``slug``
    without the file changing), the parser when its format names one, and the text read
    (since ``CHUNKER_VERSION`` 4): what other files put in a page changes it too (a partial
    it shows, the title a cross-reference shows, the address of a page it links to).
    """
    digest = hashlib.sha256()
    for section in doc.sections:
        for part in (*section.headings, "\x1d", *section.blocks):
            digest.update(part.encode() + b"\x1e")
    for part in (
        CHUNKER_VERSION, str(target_chars), str(max_chars), str(overlap_chars), str(title_repeat),
        doc.url, doc.title, "\x1f".join(doc.tags), doc.raw_sha256,
        # Only when set: every other document keeps the fingerprint it was stored with.
        *((doc.parser,) if doc.parser else ()),
    ):
        digest.update(part.encode() + b"\x00")
    return digest.hexdigest()


def embedding_text(chunk: DocumentChunk, *, title_repeat: int = DEFAULT_TITLE_REPEAT) -> str:
    """The text to embed: the ``title > section`` line ``title_repeat`` times, then the passage."""
    context = chunk.title
    if chunk.section and chunk.section != chunk.title:
        if chunk.section.startswith(chunk.title + SECTION_SEPARATOR):
            context = chunk.section  # the H1 usually repeats the title
        else:
            context = f"{chunk.title}{SECTION_SEPARATOR}{chunk.section}"
    return "\n".join([context] * max(1, title_repeat)) + f"\n\n{chunk.content}"


def chunk_document(
    doc: LoadedDocument, *, target_chars: int = 1200, max_chars: int = 2000, overlap_chars: int = 150,
    title_repeat: int = DEFAULT_TITLE_REPEAT,
) -> list[DocumentChunk]:
    """Chunk one document by heading hierarchy.

    Args:
        doc: the parsed document.
        target_chars: size chunks are packed towards.
        max_chars: no chunk is longer, except one holding a single larger code block.
        overlap_chars: at most this much of the previous chunk's tail starts the next one.
        title_repeat: how ``embedding_text`` will weigh the title; part of the hash, so that
            changing it re-embeds every document.

    Returns:
        The chunks, ``chunk_index`` counting from 0; empty for a document without text.

    Raises:
        ValueError: naming the bad size when the sizes are inconsistent.
    """
    if target_chars < 1:
        raise ValueError(f"target_chars must be positive, got {target_chars}")
    if max_chars < target_chars:
        raise ValueError(f"max_chars ({max_chars}) must be at least target_chars ({target_chars})")
    if not 0 <= overlap_chars < target_chars:
        raise ValueError(f"overlap_chars must be in [0, target_chars), got {overlap_chars}")

    content_hash = document_hash(
        doc, target_chars=target_chars, max_chars=max_chars, overlap_chars=overlap_chars,
        title_repeat=title_repeat,
    )
    chunks: list[DocumentChunk] = []
    for section in merge_small_sections(doc.sections, min_chars=MIN_SECTION_CHARS, max_chars=max_chars):
        units = list(_units(section.blocks, target_chars=target_chars))
        section_path = SECTION_SEPARATOR.join(section.headings)[:MAX_SECTION_CHARS]
        for text in _pack(units, target_chars=target_chars, max_chars=max_chars, overlap_chars=overlap_chars):
            index = len(chunks)
            chunks.append(
                DocumentChunk(
                    chunk_id=chunk_id(doc.source_document, index),
                    content=text,
                    url=doc.url,
                    title=doc.title,
                    section=section_path,
                    headings=list(section.headings),
                    chunk_index=index,
                    source_document=doc.source_document,
                    tags=list(doc.tags),
                    content_hash=content_hash,
                )
            )
    return chunks


# --------------------------------------------------------------------------- sections


def merge_small_sections(sections: list[Section], *, min_chars: int, max_chars: int) -> list[Section]:
    """Merge each section shorter than ``min_chars`` into the next (the last one into the previous).

    When the merged text fits in one chunk (``max_chars``), it is filed under the
    two paths' common prefix and each part is labelled by the headings it no
    longer shows; otherwise the small part joins the big one under the big one's path.
    """
    cleaned = [Section(s.headings, [b for b in s.blocks if b.strip()]) for s in sections]
    cleaned = [s for s in cleaned if s.blocks]
    merged: list[Section] = []
    pending: Section | None = None
    for section in cleaned:
        current = _merge(pending, section, max_chars=max_chars) if pending else section
        pending = None
        if _size(current.blocks) < min_chars:
            pending = current
        else:
            merged.append(current)
    if pending is not None:
        if merged:
            merged[-1] = _merge(merged[-1], pending, max_chars=max_chars)
        else:
            merged.append(pending)
    return merged


def _merge(first: Section, second: Section, *, max_chars: int) -> Section:
    if _size(first.blocks) + _size(second.blocks) + 2 <= max_chars:
        common = _common_prefix(first.headings, second.headings)
    elif _size(first.blocks) >= _size(second.blocks):
        common = first.headings
    else:
        common = second.headings
    return Section(common, _labelled(first, common) + _labelled(second, common))


def _labelled(section: Section, shown: list[str]) -> list[str]:
    # Headings the merged section's path no longer shows become a line of text, so
    # "Nodes" text stays recognisable after merging with its sibling "Topics".
    if section.headings[: len(shown)] == shown and len(section.headings) > len(shown):
        return [SECTION_SEPARATOR.join(section.headings[len(shown) :]), *section.blocks]
    if section.headings[: len(shown)] != shown and section.headings:
        return [section.headings[-1], *section.blocks]
    return list(section.blocks)


def _common_prefix(a: list[str], b: list[str]) -> list[str]:
    prefix: list[str] = []
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        prefix.append(x)
    return prefix


def _size(blocks: list[str]) -> int:
    return sum(len(b) for b in blocks) + len(_PARAGRAPH) * max(len(blocks) - 1, 0)


# --------------------------------------------------------------------------- units


def is_code_block(block: str) -> bool:
    """True for a fenced code block (as produced by the loaders: fences on the first and last lines)."""
    return bool(_FENCE.match(block))


def _units(blocks: list[str], *, target_chars: int) -> list[_Unit]:
    units: list[_Unit] = []
    for block in blocks:
        if is_code_block(block):
            units.extend(_Unit(piece, _PARAGRAPH, code=True) for piece in _cap_code(block))
        elif len(block := compact_table(block)) <= target_chars:
            units.append(_Unit(block, _PARAGRAPH, table=table_head(block) is not None))
        elif (rows := table_pieces(block, target_chars)) is not None:
            units.extend(_Unit(piece, _PARAGRAPH, table=True) for piece in rows)
        else:
            pieces = _split_prose(block, target_chars)
            units.append(_Unit(pieces[0][0], _PARAGRAPH))
            units.extend(_Unit(text, joiner) for text, joiner in pieces[1:])
    return units


def _split_prose(text: str, limit: int) -> list[tuple[str, str]]:
    """Split prose longer than ``limit`` at lines, then sentences, then words: (piece, joiner) pairs."""
    for pattern, joiner in ((r"\n", "\n"), (_SENTENCE_END.pattern, " "), (r"\s+", " ")):
        if joiner == " " and pattern == r"\s+" and len(text) > _HUGE_RUN * limit:
            return _word_runs(text, limit)
        parts = [p for p in (_lines(text) if joiner == "\n" else re.split(pattern, text)) if p.strip()]
        if len(parts) > 1:
            out: list[tuple[str, str]] = []
            for part in parts:
                # A list item's code too long for one chunk is cut between its lines, as before.
                pieces = [line for line in part.split("\n") if line.strip()] if joiner == "\n" else [part]
                for piece in pieces if len(part) > limit else [part]:
                    if len(piece) <= limit:
                        out.append((piece, joiner))
                    else:
                        sub = _split_prose(piece, limit)
                        out.append((sub[0][0], joiner))
                        out.extend(sub[1:])
            return out
    # One unbroken word longer than the limit (a URL, base64): cut it.
    return [(text[i : i + limit], "") for i in range(0, len(text), limit)]


def _lines(text: str) -> list[str]:
    """``text``'s lines, an indented fenced block's kept as one.

    A list item's code cut in two left a chunk ending in an open fence and the next one starting
    with unfenced code.
    """
    parts: list[str] = []
    fences = Fences()
    for line in text.split("\n"):
        inside = fences.fence is not None  # the block was open before this line (its closing one too)
        fences.code(line)
        if inside:
            parts[-1] += "\n" + line
        else:
            parts.append(line)
    return parts


def _word_runs(text: str, limit: int) -> list[tuple[str, str]]:
    """Words packed into runs of at most ``limit`` characters, without a list of every word.

    For megabytes of text with no sentence end, one unit per word took ~50 bytes of
    overhead per word (``bench/ingest_memory.py``: 560 MB for a 10 MB line).
    """
    runs: list[tuple[str, str]] = []
    current: list[str] = []
    size = 0
    for match in re.finditer(r"\S+", text):
        word = match.group()
        if current and (len(word) > limit or size + 1 + len(word) > limit):
            runs.append((" ".join(current), " "))
            current, size = [], 0
        if len(word) > limit:  # a URL or base64 longer than a chunk: cut it
            runs.extend((word[i : i + limit], "") for i in range(0, len(word), limit))
            continue
        size += len(word) + (1 if current else 0)
        current.append(word)
    if current:
        runs.append((" ".join(current), " "))
    return runs


def _cap_code(block: str) -> list[str]:
    """Cut a code block beyond the store's text limit into fenced pieces; normal blocks pass whole."""
    if len(block) <= MAX_TEXT_LENGTH:
        return [block]
    lines = block.split("\n")
    opener, closer, body = lines[0], lines[-1], lines[1:-1]
    room = MAX_TEXT_LENGTH - len(opener) - len(closer) - 2
    pieces: list[str] = []
    current: list[str] = []
    size = 0
    for line in body:
        line = line[:room]
        if current and size + len(line) + 1 > room:
            pieces.append("\n".join([opener, *current, closer]))
            current, size = [], 0
        current.append(line)
        size += len(line) + 1
    pieces.append("\n".join([opener, *current, closer]))
    return pieces


# --------------------------------------------------------------------------- packing


def _pack(units: list[_Unit], *, target_chars: int, max_chars: int, overlap_chars: int) -> list[str]:
    groups: list[list[_Unit]] = []
    current: list[_Unit] = []
    size = 0
    for unit in units:
        if unit.code and len(unit.text) > max_chars:
            # An oversize code block gets a chunk of its own, except that a short lead-in
            # ("Create the node:") rides along rather than becoming a useless chunk.
            if current and size >= MIN_SECTION_CHARS:
                # "Add the following script:" goes with the script, not with what came before.
                lead = current[-1:] if len(current) > 1 and _is_lead_in(current[-1]) else []
                groups.append(current[: len(current) - len(lead)])
                current = lead
            if current and len(_render([*current, unit])) > MAX_TEXT_LENGTH:
                # Beside a block already at the store's text limit, the lead-in stands alone.
                groups.append(current)
                current = []
            groups.append([*current, unit])
            current, size = [], 0
            continue
        added = len(unit.text) + (len(unit.joiner) if current else 0)
        fits = size + added <= target_chars
        # A half-empty chunk may grow up to max rather than leave a small fragment behind.
        stretch = size < target_chars // 2 and size + added <= max_chars
        if current and not (fits or stretch):
            keep = len(current) - _carried(current, unit, max_chars=max_chars)
            groups.append(current[:keep])
            current = current[keep:]
            size = len(_render(current)) if current else 0
            added = len(unit.text) + (len(unit.joiner) if current else 0)
        current.append(unit)
        size += added
    if current:
        # A small remainder joins the previous chunk when both fit, instead of standing alone.
        if groups and size < MIN_SECTION_CHARS and _fits(groups[-1], current, max_chars):
            groups[-1] = groups[-1] + current
        else:
            groups.append(current)

    texts: list[str] = []
    previous: str | None = None
    previous_ends_whole = False
    for group in groups:
        body = _render(group)
        text = body
        if previous is not None and overlap_chars and not previous_ends_whole:
            room = max_chars - len(body) - len(group[0].joiner)
            tail = _tail(previous, min(overlap_chars, room))
            if tail:
                text = tail + group[0].joiner + body
        texts.append(text)
        # Half a code block or a table's last rows would open the next chunk as nonsense.
        previous, previous_ends_whole = body, group[-1].code or group[-1].table
    return texts


def _is_lead_in(unit: _Unit) -> bool:
    return not unit.code and introduces_next(unit.text)


def _carried(current: list[_Unit], nxt: _Unit, *, max_chars: int) -> int:
    """How many trailing units move to the next chunk so a lead-in stays with what it introduces.

    "Run the following command:" goes with the command, and an entry's name on its own line
    ("`--no-import`") with what it names; a code block followed by the prose explaining it goes
    with that prose (its own lead-in too when there is one).
    The chunk left behind keeps at least one unit, and what moves must fit.
    """
    last = current[-1]
    if names_entry(last.text) and not last.code:
        # "The following methods:" then "`open_spider()`": the lead-in goes with the name it gives.
        heads = _heads(current[:-1], names=False)
    elif _is_lead_in(last) and not last.code:
        heads = 0
    elif last.code and not nxt.code:
        # "`pyproject.toml`" then its file: the name (and a lead-in giving it) go with the code.
        heads = _heads(current[:-1], names=True)
    else:
        return 0
    if 1 + heads >= len(current):
        return 0
    return 1 + heads if len(_render([*current[-1 - heads:], nxt])) <= max_chars else 0


def _heads(units: list[_Unit], *, names: bool) -> int:
    """How many of the last ``units`` introduce what follows them: a lead-in, or a name and its lead-in."""
    if names and units and not units[-1].code and names_entry(units[-1].text):
        return 1 + _heads(units[:-1], names=False)
    return 1 if units and _is_lead_in(units[-1]) else 0


def _fits(first: list[_Unit], second: list[_Unit], max_chars: int) -> bool:
    return len(_render(first)) + len(second[0].joiner) + len(_render(second)) <= max_chars


def _render(group: list[_Unit]) -> str:
    parts = [group[0].text]
    for unit in group[1:]:
        parts.append(unit.joiner)
        parts.append(unit.text)
    return "".join(parts)


def _tail(text: str, limit: int) -> str:
    """The last ``limit`` characters of ``text``, starting at a sentence or at least a word."""
    if limit < 20:
        return ""
    tail = text[-limit:]
    if len(text) > limit:
        sentence = _SENTENCE_END.search(tail)
        if sentence and len(tail) - sentence.end() >= limit // 3:
            tail = tail[sentence.end() :]
        else:
            space = re.search(r"\s", tail)
            tail = tail[space.end() :] if space else ""
        if tail.count("`") % 2:  # it opens inside a code span: "'delayed'` flag on ..." from its middle
            after = tail.find("`") + 1
            space = re.search(r"\s", tail[after:])
            tail = tail[after + space.end() :] if space else ""
    if "```" in tail or "~~~" in tail:
        return ""  # never carry half a fence into the next chunk
    return tail.strip()
