"""Citation markers ``[n]`` in answer text, the sources they cite, and mention defusing.

Pure functions used by every generator, by grounding and by the pipeline.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from core.ingest.spans import CODE_SPAN, outside_code_spans
from core.models import RetrievedChunk, Source

#: ``[1]``, ``[2, 3]``, ``[1;2]`` and ranges ``[1-3]``; each group is one marker.
CITATION_RE = re.compile(r"\[(\s*\d+(?:\s*[-–]\s*\d+)?(?:\s*[,;]\s*\d+(?:\s*[-–]\s*\d+)?)*\s*)\]")
_RANGE_LIMIT = 50

# A zero-width space after "@" keeps the word readable but stops Slack and Discord
# from treating it as a mass or user mention.
_ZWSP = "\u200b"
_SLACK_SPECIAL = re.compile(r"<!(channel|here|everyone)(?:\|[^>]*)?>", re.IGNORECASE)
_SLACK_SUBTEAM = re.compile(r"<!subteam\^[^>|]*(?:\|@?([^>]*))?>", re.IGNORECASE)
#: Slack's other commands (``<!date^...>``): not an HTML comment or ``<!DOCTYPE html>`` a page quotes.
_SLACK_OTHER = re.compile(r"<!(?!--|doctype\b)[^<>]*>", re.IGNORECASE)
_ROLE_MENTION = re.compile(r"<@&[^>\s]*>")
_USER_MENTION = re.compile(r"<@!?[A-Za-z0-9]+(?:\|([^>]*))?>")
_AT_WORD = re.compile(r"(?<![\w@])@(everyone|here|channel|all|room)\b", re.IGNORECASE)


#: Code is never read for citations: ``[1, 2, 3]`` in ``let a = [1, 2, 3];`` is a list. A fenced
#: block (its fence starting a line, with no backtick in a backtick fence's info; to a closing fence
#: at least as long, or the end of an unclosed one) or an inline span (``CODE_SPAN``).
_CODE_RE = re.compile(
    r"^[ \t]*(?:(?P<bt>`{3,})[^`\n]*|(?P<tl>~{3,})[^\n]*)"
    r"(?:\n[\s\S]*?(?:^[ \t]*(?:(?P=bt)`*|(?P=tl)~*)[ \t]*$|\Z)|\Z)"
    rf"|{CODE_SPAN.pattern}", re.MULTILINE)


def outside_code(text: str, rewrite: Callable[[str], str]) -> str:
    """``text`` with ``rewrite`` applied to its prose only, code blocks and spans left as they are."""
    return outside_code_spans(text, rewrite, code=_CODE_RE)


def without_code(text: str) -> str:
    """``text`` with its code blocks and spans left out (each becomes a space)."""
    return _CODE_RE.sub(" ", text)


def sub_citations(replace: Callable[[re.Match[str]], str], text: str) -> str:
    """Replace each citation marker of ``text``'s prose with ``replace(match)`` (code is left alone)."""
    return outside_code(text, lambda prose: CITATION_RE.sub(replace, prose))


def cited_indices(text: str) -> list[int]:
    """Return the citation numbers used in ``text``, in order of first appearance.

    Args:
        text: Answer text with markers such as ``[1]``, ``[2, 3]``, ``[1][2]`` or ``[1-3]``.

    Returns:
        Distinct numbers as written (0 or out-of-range numbers included, so that
        grounding can report them as invalid).
    """
    seen: dict[int, None] = {}

    def note(match: re.Match[str]) -> str:
        for n in _marker_numbers(match.group(1)):
            seen.setdefault(n, None)
        return match.group(0)

    sub_citations(note, text)
    return list(seen)


def _marker_numbers(body: str) -> list[int]:
    numbers: list[int] = []
    for part in re.split(r"[,;]", body):
        part = part.strip()
        if not part:
            continue
        bounds = re.split(r"\s*[-–]\s*", part)
        if len(bounds) == 2:
            lo, hi = int(bounds[0]), int(bounds[1])
            if lo <= hi and hi - lo <= _RANGE_LIMIT:
                numbers.extend(range(lo, hi + 1))
            else:
                numbers.extend((lo, hi))
        else:
            numbers.append(int(part))
    return numbers


def strip_citations(text: str) -> str:
    """Remove citation markers (for comparing a sentence's words with its sources)."""
    return re.sub(r"\s+", " ", sub_citations(lambda _: " ", text)).strip()


def build_sources(text: str, chunks: Sequence[RetrievedChunk]) -> list[Source]:
    """List the chunks actually cited in ``text``, in order of first citation.

    Args:
        text: Answer text whose ``[n]`` refer to ``chunks[n-1]``.
        chunks: The numbered chunks the generator was given.

    Returns:
        One Source per valid cited number; numbers outside ``1..len(chunks)`` are skipped.
    """
    sources: list[Source] = []
    for n in cited_indices(text):
        if 1 <= n <= len(chunks):
            chunk = chunks[n - 1]
            sources.append(
                Source(
                    index=n,
                    chunk_id=chunk.chunk_id,
                    url=chunk.url,
                    title=chunk.title,
                    section=chunk.section,
                    chunk_index=chunk.chunk_index,
                    score=chunk.score,
                )
            )
    return sources


def renumber_citations(text: str, chunks: Sequence[RetrievedChunk]) -> tuple[str, list[Source]]:
    """Number the cited sources 1..n in order of first citation, one per page.

    Generators cite ``[n]`` as the n-th chunk they were given, so numbers skip
    ("[1] [4]") and two chunks of one page would be listed as two sources.
    Users should see ``[1]``, ``[2]`` ... each resolving to one listed source.

    Args:
        text: answer text whose ``[n]`` refer to ``chunks[n-1]``.
        chunks: the numbered chunks the generator was given.

    Returns:
        (the text with markers rewritten, out-of-range numbers dropped; its sources).
    """
    new_number: dict[int, int] = {}
    by_page: dict[str, int] = {}
    sources: list[Source] = []
    for n in cited_indices(text):
        if not 1 <= n <= len(chunks):
            continue
        chunk = chunks[n - 1]
        # One source per page: two sections of a page share its URL, and a list naming the
        # same link twice reads as a duplicate.
        key = chunk.url
        if key not in by_page:
            by_page[key] = len(sources) + 1
            sources.append(Source(index=len(sources) + 1, chunk_id=chunk.chunk_id, url=chunk.url,
                                  title=chunk.title, section=chunk.section,
                                  chunk_index=chunk.chunk_index, score=chunk.score))
        else:
            # Quoted from two sections of the page, the source is named by what they share
            # ("Deploying > GitHub Pages" and "Deploying > Firebase" are "Deploying").
            source = sources[by_page[key] - 1]
            shared = _shared_path(source.section, chunk.section)
            if shared != source.section:
                sources[by_page[key] - 1] = source.model_copy(update={"section": shared})
        new_number[n] = by_page[key]

    def rewrite(match: re.Match[str]) -> str:
        numbers = dict.fromkeys(new_number[n] for n in _marker_numbers(match.group(1)) if n in new_number)
        return "".join(f"[{n}]" for n in numbers)

    rewritten = sub_citations(rewrite, text)
    # A marker that only named duplicates of the one before it ("[1][1]") is said once.
    rewritten = outside_code(rewritten, lambda prose: re.sub(r"(\[\d+\])(?:\s*\1)+", r"\1", prose))
    return rewritten, sources


def _shared_path(a: str, b: str) -> str:
    """The heading path two sections share (``A > B`` and ``A > C`` share ``A``)."""
    shared: list[str] = []
    for x, y in zip(a.split(" > "), b.split(" > "), strict=False):
        if x.strip() != y.strip():
            break
        shared.append(x)
    return " > ".join(shared)


def with_related(sources: Sequence[Source], chunks: Sequence[RetrievedChunk], *, limit: int) -> list[Source]:
    """Add the other retrieved page sections, best first, after the cited sources.

    The answer quotes one or two passages; the pages ranked next are often what
    the user reads next, so they are listed too (numbered after the cited ones,
    never cited in the text), one per page not listed yet, ``limit`` sources in all.
    """
    out = list(sources)
    seen = {s.url for s in out}
    for chunk in chunks:
        if len(out) >= limit:
            break
        if chunk.url in seen:
            continue  # a page already listed is not listed again under another section
        seen.add(chunk.url)
        out.append(Source(index=len(out) + 1, chunk_id=chunk.chunk_id, url=chunk.url, title=chunk.title,
                          section=chunk.section, chunk_index=chunk.chunk_index, score=chunk.score))
    return out


def neutralize_mentions(text: str) -> str:
    """Defuse Slack and Discord mentions so generated text can never ping people.

    Args:
        text: Any generated text.

    Returns:
        The text with ``<!channel>``, ``<!here>``, ``<!everyone>``, ``<!subteam^..>``,
        ``<@U123>``, ``<@!123>``, ``<@&role>``, ``@everyone``, ``@here`` and ``@channel``
        turned into inert look-alikes (``@`` followed by a zero-width space).
    """
    text = _SLACK_SPECIAL.sub(lambda m: f"@{_ZWSP}{m.group(1).lower()}", text)
    text = _SLACK_SUBTEAM.sub(lambda m: f"@{_ZWSP}{m.group(1) or 'group'}", text)
    text = _SLACK_OTHER.sub("", text)
    text = _ROLE_MENTION.sub(f"@{_ZWSP}role", text)
    text = _USER_MENTION.sub(lambda m: f"@{_ZWSP}{m.group(1) or 'user'}", text)
    return _AT_WORD.sub(lambda m: f"@{_ZWSP}{m.group(1)}", text)


def source_label(title: str, section: str) -> str:
    """How a source is named to users: ``Title > Section``, without repeating the title.

    The section path starts with the page's own ``# Title`` heading in most docs,
    which would otherwise read "Install > Install > Quick start".
    """
    rest = section_below_title(title, section)
    return " > ".join(part for part in (title.strip(), rest) if part)


def section_below_title(title: str, section: str) -> str:
    """A source's section path without the page title it opens with ("" when nothing is left)."""
    parts = [p.strip() for p in section.split(" > ") if p.strip()] if section else []
    if parts and parts[0].casefold() == title.strip().casefold():
        parts = parts[1:]
    return " > ".join(parts)
