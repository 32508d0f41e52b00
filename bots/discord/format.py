"""Pure formatting of answers for Discord: embeds within Discord's limits, mentions defused.

Nothing here talks to Discord; every function takes plain values (or an
``AgentResponse``) and returns strings or ``discord.Embed`` objects, so the limits
(6000 characters per embed, 4096 per description, 1024 per field ...) are
tested without a client.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate
from urllib.parse import quote

import discord
from discord.utils import escape_markdown, escape_mentions

from bots.chat.asking import Help, Refusal
from bots.chat.asking import refusal_text as refusal_text_of
from bots.chat.notices import Tone, answer_text, notice_for
from bots.chat.sources import listed_sources
from bots.chat.tables import tables_for_chat
from bots.chat.text import neutralize_mentions, split_text, truncate
from core.answer.citations import section_below_title
from core.models import AgentResponse, ResponseStatus, Source

TITLE_LIMIT = 256
DESCRIPTION_LIMIT = 4096
FIELD_NAME_LIMIT = 256
FIELD_VALUE_LIMIT = 1024
FIELDS_LIMIT = 25
FOOTER_LIMIT = 2048
AUTHOR_LIMIT = 256
EMBED_TOTAL_LIMIT = 6000
#: Discord refuses thread names longer than this.
THREAD_NAME_LIMIT = 100
#: Characters of page 1 kept for the sources so the answer itself keeps most of the 6000.
SOURCES_BUDGET = 2 * FIELD_VALUE_LIMIT
#: A masked link longer than this is shown as plain text; it could not fit a field line.
_URL_LIMIT = 700
_LINK_TEXT_LIMIT = 200

GREEN = discord.Colour(0x2EA043)
AMBER = discord.Colour(0xD29922)
GREY = discord.Colour(0x8B949E)
RED = discord.Colour(0xDA3633)

PLACEHOLDER = "Searching the docs…"


def defuse(text: str) -> str:
    """Make mentions inert text, so nothing can ping even where allowed_mentions is ignored.

    ``core.answer.citations.neutralize_mentions`` (through ``bots.chat.text``) does the work
    (``<@id>``, ``<@!id>``, ``<@&role>``, ``@everyone``, ``@here`` ... become ``@`` + zero-width
    space + a word); discord.py's ``escape_mentions`` then also breaks ``@everyone``/``@here``
    glued to a preceding word (``x@everyone``), which the core leaves alone and Discord may
    still read as a mention.

    Args:
        text: text from a user, the knowledge base or a model.

    Returns:
        The text with every mention broken by a zero-width space after its ``@``.
    """
    return escape_mentions(neutralize_mentions(text))


#: Discord's look for each tone of ``bots.chat.notices``.
TONE_COLOUR = {Tone.ANSWERED: GREEN, Tone.CAUTION: AMBER, Tone.NOT_FOUND: GREY, Tone.FAILED: RED}


def status_colour(response: AgentResponse) -> discord.Colour:
    """Colour of the embed: green answered, amber low confidence, grey not found, red failed."""
    return TONE_COLOUR[notice_for(response).tone]


def _link_text(text: str) -> str:
    # Brackets would end the masked link early; markdown would restyle titles.
    text = escape_markdown(defuse(text)).replace("[", "\\[").replace("]", "\\]")
    return truncate(text, _LINK_TEXT_LIMIT)


def source_line(source: Source) -> str:
    """One numbered source as ``[n] [title — section](url)``.

    Args:
        source: a cited source.

    Returns:
        The line; without a link when the URL is not http(s) or too long to fit.
    """
    return f"[{source.index}] {_source_link(source)}"


def _source_link(source: Source) -> str:
    """A source as ``[title — section](url)``, or its label alone when chat cannot link its URL."""
    label = source.title
    if section := section_below_title(source.title, source.section or ""):
        label = f"{source.title} — {section}" if source.title else section
    text = _link_text(label or source.url)
    url = quote(source.url, safe=":/?#@!$&'*+,;=%~-._")
    return f"[{text}]({url})" if url.startswith(("https://", "http://")) and len(url) <= _URL_LIMIT else text


def source_fields(sources: list[Source], *, budget: int = SOURCES_BUDGET, related: Sequence[Source] = ()
                  ) -> list[tuple[str, str]]:
    """Group numbered source lines into embed fields within Discord's limits, then related pages.

    Args:
        sources: the cited sources, in citation order.
        budget: most characters (names plus values) the fields may use together.
        related: pages listed but not cited (``bots.chat.sources``): a "Related" field, room allowing.

    Returns:
        ``(name, value)`` pairs; when not all fit, the last line says how many were left out.
    """
    fields = _numbered_fields(sources, budget=budget)
    room = min(FIELD_VALUE_LIMIT, budget - sum(len(n) + len(v) for n, v in fields) - len("Related"))
    if related and len(fields) < FIELDS_LIMIT and room > 0:
        lines = [_source_link(s) for s in related]  # unnumbered: never cited
        kept = [line for line, used in zip(lines, accumulate(len(x) + 1 for x in lines), strict=True)
                if used <= room]
        if kept:
            fields.append(("Related", "\n".join(kept)))
    return fields


def _numbered_fields(sources: list[Source], *, budget: int) -> list[tuple[str, str]]:
    """Numbered source lines in embed fields; when not all fit, the last says how many were left out."""
    lines = [source_line(s) for s in sorted(sources, key=lambda s: s.index)]
    fields: list[tuple[str, list[str]]] = []
    used = 0
    for i, line in enumerate(lines):
        # Room is kept for a closing "… and N more" line in case a later one does not fit.
        more = len(f"… and {len(lines) - i} more") + 1
        current = fields[-1][1] if fields else None
        if current is not None and sum(len(x) + 1 for x in current) + len(line) + more <= FIELD_VALUE_LIMIT:
            cost = len(line) + 1
        elif len(fields) < FIELDS_LIMIT and len(line) + more <= FIELD_VALUE_LIMIT:
            current = None
            cost = len(line) + len("More sources")
        else:
            break
        if used + cost + more > budget:
            break
        if current is None:
            fields.append(("Sources" if not fields else "More sources", [line]))
        else:
            current.append(line)
        used += cost
    else:
        return [(name, "\n".join(value)) for name, value in fields]
    left_out = len(lines) - sum(len(v) for _, v in fields)
    if not fields:
        fields.append(("Sources", []))
    fields[-1][1].append(f"… and {left_out} more")
    return [(name, "\n".join(value)) for name, value in fields]


def _footer(response: AgentResponse) -> str:
    # The status is the colour and the core's text; only the confidence adds something.
    if response.status is ResponseStatus.ANSWERED:
        return f"confidence {response.confidence_score:.0%}"
    return ""


def embed_size(embed: discord.Embed) -> int:
    """Characters Discord counts towards the 6000 limit of one embed.

    Args:
        embed: the embed.

    Returns:
        Sum of title, description, field names and values, footer text and author name.
    """
    return len(embed)


#: The longest "part N/M · " a page's footer gains.
_PART_MARK = "part 99/99 · "


def answer_embeds(
    response: AgentResponse, *, question: str, reference_id: str | None = None
) -> list[discord.Embed]:
    """Render an answer as one embed, or several when the text is over one embed's limits.

    Page 1 carries the question as title, the status line, the numbered sources and
    the footer; later pages carry the rest of the text. Every page is <= 6000 characters.

    Args:
        response: the answer from the AnswerService.
        question: the question as asked (used for the title).
        reference_id: id of the ``error`` entry of a failed search, quoted when the text does not yet;
            defaults to ``response.reference_id``.

    Returns:
        The embeds, one per message, in reading order.
    """
    notice = notice_for(response)
    colour = TONE_COLOUR[notice.tone]
    title = truncate(defuse(" ".join(question.split())) or "Question", TITLE_LIMIT)
    label = notice.text
    text = defuse(tables_for_chat(answer_text(response, reference_id or response.reference_id)))
    cited, related = listed_sources(response)
    fields = source_fields(cited, related=related)
    footer = _footer(response)
    # The footer of a long answer's first page gains "part 1/N · ": counted before the text is cut.
    fixed = (len(title) + len(label or "") + len(footer) + len(_PART_MARK)
             + sum(len(n) + len(v) for n, v in fields))
    first_limit = min(DESCRIPTION_LIMIT, EMBED_TOTAL_LIMIT - fixed)
    pages = [p for p in split_text(text, DESCRIPTION_LIMIT, first=first_limit) if p] or ["(empty answer)"]
    embeds: list[discord.Embed] = []
    for number, page in enumerate(pages, start=1):
        embed = discord.Embed(description=page, colour=colour)
        if number == 1:
            embed.title = title
            if label:
                embed.set_author(name=label)
            for name, value in fields:
                embed.add_field(name=name, value=value, inline=False)
        page_footer = footer if len(pages) == 1 else f"part {number}/{len(pages)} · {footer}".rstrip(" ·")
        if page_footer:
            embed.set_footer(text=truncate(page_footer, FOOTER_LIMIT))
        embeds.append(embed)
    return embeds


def refusal_text(refusal: Refusal) -> str:
    """The private reply to a question that was not asked: how to ask, too long, or too fast."""
    if isinstance(refusal, Help):
        return "Please type a question after `/ask`, for example `/ask question: How do I install ragbot?`"
    return refusal_text_of(refusal)


def thread_name(question: str) -> str:
    """Name of the thread started on an answer: the question, cut to Discord's 100 characters.

    Args:
        question: the question as asked.

    Returns:
        A non-empty thread name.
    """
    # Defused too: a thread name pings nobody, but it should not read as one that might.
    return truncate(" ".join(defuse(question).split()), THREAD_NAME_LIMIT) or "ragbot answer"
