"""Pure functions that turn ragbot's answers into Slack messages (Block Kit + mrkdwn).

Everything that comes from the knowledge base, a model or a user is escaped
before our own markup (links, emoji, bold) is added, so a document containing
``<!channel>`` or ``<@U123>`` can never ping anyone. Every message is a dict of
``chat.postMessage`` keyword arguments: ``text`` (the notification fallback) and,
for rich messages, ``blocks``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from bots.chat import text as text_rules
from bots.chat.asking import Answered, Help, Invalid, Outcome, Refusal, TooLong, problem_text, refusal_text
from bots.chat.feedback import Vote
from bots.chat.notices import Tone, answer_text, notice_for
from bots.chat.sources import listed_sources
from bots.chat.tables import tables_for_chat
from core.answer.citations import cited_indices, section_below_title, sub_citations
from core.ingest.fences import Fences
from core.ingest.spans import outside_code_spans
from core.models import AgentResponse, Source

#: Slack's limit for the text of one section block (and any text object).
SECTION_TEXT_LIMIT = 3000
#: Slack's limit for blocks in one message.
MAX_BLOCKS = 50
#: Keep the notification fallback well under Slack's 4000 characters.
FALLBACK_TEXT_LIMIT = 3000
ACTION_UP = "ragbot_feedback_up"
ACTION_DOWN = "ragbot_feedback_down"
FEEDBACK_BLOCK_ID = "ragbot_feedback"
PLACEHOLDER_TEXT = "Searching the docs..."

_MARKUP_RE = re.compile(r"<([^<>]+)>")
_SPACES_RE = re.compile(r"[ \t]+")


def escape(text: str) -> str:
    """Escape the three characters Slack treats as control sequences in mrkdwn.

    Args:
        text: untrusted text (knowledge base, model output, error messages).

    Returns:
        The text with ``&``, ``<`` and ``>`` replaced by entities.
    """
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _link_url(url: str) -> str:
    # A URL inside <url|label> must not close the link or start the label early.
    return (
        url.replace("&", "&amp;").replace("<", "%3C").replace(">", "%3E")
        .replace("|", "%7C").replace(" ", "%20")
    )


#: A link; ``\[docs\](url)`` is the text "[docs](url)".
_MD_LINK_RE = re.compile(r"(?<!\\)\[((?:\\.|[^\]\\\n]){1,200})\]\((https?://[^\s)|]+)\)")
_MD_BOLD_RE = re.compile(r"\*\*([^*\n]+)\*\*")


def markdown_to_mrkdwn(escaped: str) -> str:
    """Turn the Markdown that docs quote into Slack mrkdwn (input already escaped).

    ``[text](https://...)`` becomes ``<url|text>``, emphasis, bullets and fences are written as
    Slack reads them (``_emphasis_and_fences``) and a list numbered "1. 1. 1." reads "1. 2. 3."
    (Slack shows numbers as written).
    """
    text = _MD_LINK_RE.sub(lambda m: f"<{m.group(2).replace(' ', '%20')}|{m.group(1)}>", escaped)
    return _numbered(_emphasis_and_fences(text))


#: A list item's marker; Slack shows "* " and "- " as typed (a rule, "* * *", is no item).
_BULLET_RE = re.compile(r"^(?P<indent>[ \t]*)[*+-](?=[ \t]+\S)(?![ \t]*(?:[*+-][ \t]*)+$)")
#: ``*italics*``, not ``**bold**``, ``\*stars\*`` nor ``2 * 3 * 4``.
_MD_ITALIC_RE = re.compile(r"(?<![*\w\\])\*(?=[^\s*])([^*\n]*?[^\s*\\])\*(?![*\w])")


#: Stands for a bold marker while italics are rewritten (a private-use character, never typed).
_BOLD = "\ue001"


def _emphasis_and_fences(text: str) -> str:
    """Markdown's emphasis, bullets and fences as Slack writes them, in one pass over the lines.

    Outside code, ``*x*`` becomes ``_x_`` (Slack reads it as bold), ``**x**`` ``*x*`` and a list's
    ``*`` or ``-`` a bullet. Every fence's opening and closing line is a bare ```` ``` ````, the
    only fence Slack knows: it prints a language tag as the first code line, the fourth backtick
    of a fence showing a fence ("````md") as a stray backtick, and ``~~~`` as text. A fence shown
    inside the code would end Slack's block: a zero-width space parts its first two backticks.
    """
    lines = text.split("\n")
    fences = Fences()
    for k, line in enumerate(lines):
        inside = fences.fence is not None
        if fences.code(line):
            if not inside or fences.fence is None:
                indent = line[: len(line) - len(line.lstrip(" \t"))]
                lines[k] = f"{indent}```"
            elif "```" in line:
                lines[k] = line.replace("```", "`\u200b``")
            continue
        line = _BULLET_RE.sub(lambda m: f"{m['indent']}\u2022", line)
        # Bold may wrap code ("**`--frozen`**"); italics are read outside code only.
        line = _MD_BOLD_RE.sub(rf"{_BOLD}\1{_BOLD}", line)
        line = outside_code_spans(line, _prose_as_slack)
        lines[k] = line.replace(_BOLD, "*")
    return "\n".join(lines)


#: An escaped underscore inside a word ("MAX\_RETRIES"): Slack reads no emphasis there.
_WORD_UNDERSCORE = re.compile(r"(?<=\w)\\_(?=\w)")


def _prose_as_slack(prose: str) -> str:
    """Prose outside code with ``*italics*`` as Slack's ``_italics_``, escapes read but of Slack's markup."""
    prose = _WORD_UNDERSCORE.sub("_", _MD_ITALIC_RE.sub(r"_\1_", prose))
    return text_rules.unescaped(prose, keep="*_~`")


_ITEM_RE = re.compile(r"^(?P<indent>[ \t]*)(?P<number>\d{1,9})(?P<mark>[.)])(?=[ \t])")


def _numbered(text: str) -> str:
    """Number a list written "1. 1. 1." in order, as Markdown shows it; any other list, and code, as written.

    A list numbered by its author ("3. ... 1. ...", or two pages' steps one after the other)
    keeps its numbers.
    """
    lines = text.split("\n")
    runs: list[list[tuple[int, re.Match[str]]]] = []
    open_runs: dict[int, list[tuple[int, re.Match[str]]]] = {}  # by indentation
    fences = Fences()
    for k, line in enumerate(lines):
        if fences.code(line):
            continue
        item = _ITEM_RE.match(line)
        if item is None:
            if line.strip() and not line[:1].isspace():
                open_runs.clear()  # a paragraph ends the list
            continue
        depth = len(item["indent"])
        open_runs = {d: run for d, run in open_runs.items() if d <= depth}
        if depth not in open_runs:
            open_runs[depth] = []
            runs.append(open_runs[depth])
        open_runs[depth].append((k, item))
    for run in runs:
        if len(run) > 1 and len({item["number"] for _, item in run}) == 1:
            first = int(run[0][1]["number"])
            for n, (k, item) in enumerate(run):
                lines[k] = f"{item['indent']}{first + n}{item['mark']}{lines[k][item.end():]}"
    return "\n".join(lines)


def link(url: str, label: str) -> str:
    """Build a Slack link whose label is escaped.

    Args:
        url: target address (escaped for use inside ``<...>``).
        label: visible text, untrusted.

    Returns:
        ``<url|label>`` markup.
    """
    return f"<{_link_url(url)}|{escape(label)}>"


def _plain_markup(match: re.Match[str]) -> str:
    target, _, label = match.group(1).partition("|")
    if target.startswith("@"):
        # Other users' mentions stay, so the model can tell who was meant.
        return f"<{target}>"
    if target.startswith("#"):
        return f"#{label}" if label else target
    if target.startswith("!"):
        return label or "@" + target[1:].split("^")[0]
    return label or target


def question_from_text(text: str, *, bot_user_id: str | None) -> str:
    """Turn a Slack message's text into the plain question to ask.

    Args:
        text: the message text as Slack sends it (entities escaped, links in ``<...>``).
        bot_user_id: the bot's own user id; its mentions are removed.

    Returns:
        The question without the bot's mention, links reduced to their labels or
        addresses, entities decoded and whitespace collapsed (may be empty).
    """
    if bot_user_id:
        text = re.sub(rf"<@{re.escape(bot_user_id)}(\|[^>]*)?>", " ", text)
    text = _MARKUP_RE.sub(_plain_markup, text)
    text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    lines = [_SPACES_RE.sub(" ", line).strip() for line in text.splitlines()]
    return "\n".join(line for line in lines if line).strip()


def link_citations(escaped_text: str, sources: Sequence[Source]) -> str:
    """Turn citation markers into links to the sources they cite.

    Markers are read as ``core.answer.citations`` reads them (the same rules ``build_sources``
    uses to list the sources): ``[1]``, ``[1, 2]``, ``[1; 2]``, ``[1-3]`` and ``[1][2]``.

    Args:
        escaped_text: answer text already passed through ``escape``.
        sources: the response's sources; ``Source.index`` is the ``n``.

    Returns:
        The text with each marker citing a known source replaced by one ``<url|[n]>`` per
        number it cites (``[1-2]`` becomes two links); numbers without a source are kept
        as plain ``[n]``, and markers citing no known source stay as they are.
    """
    by_index = {s.index: s for s in sources}

    def _replace(match: re.Match[str]) -> str:
        numbers = cited_indices(match.group(0))
        if not any(n in by_index for n in numbers):
            return match.group(0)
        return "".join(
            f"<{_link_url(by_index[n].url)}|[{n}]>" if n in by_index else f"[{n}]" for n in numbers
        )

    return sub_citations(_replace, escaped_text)


def keep_whole(text: str, cut: int) -> int:
    """Move ``cut`` back so it falls outside any ``<url|label>`` link and ``&entity;``."""
    opened, closed = text.rfind("<", 0, cut), text.rfind(">", 0, cut)
    if opened > closed and opened > 0:
        cut = opened
    amp, semi = text.rfind("&", 0, cut), text.rfind(";", 0, cut)
    if amp > semi and cut - amp < 6 and amp > 0:
        cut = amp
    return cut


def split_text(text: str, *, limit: int = SECTION_TEXT_LIMIT) -> list[str]:
    """Split mrkdwn into pieces of at most ``limit`` characters, never inside a link or entity."""
    return [piece for piece in text_rules.split_text(text, limit, keep_whole=keep_whole) if piece]


def _truncate(text: str, limit: int) -> str:
    return text_rules.truncate(text, limit, keep_whole=keep_whole)


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def _context(text: str) -> dict[str, Any]:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": text}]}


#: Room under which the related pages' line is left out rather than cut to nothing.
_RELATED_MIN = 40


def sources_text(sources: Sequence[Source], related: Sequence[Source] = ()) -> str:
    """List sources as ``[n] <url|title> — section`` lines, then related pages, in one text object.

    Args:
        sources: the cited sources, in citation order.
        related: pages listed but not cited (``bots.chat.sources``): one "Related:" line.

    Returns:
        mrkdwn of at most ``SECTION_TEXT_LIMIT`` characters ("" when there are none).
    """
    if not sources and not related:
        return ""
    lines = ["*Sources*"] if sources else []
    used = len(lines[0]) if lines else 0
    for position, source in enumerate(sources):
        line = f"[{source.index}] {link(source.url, source.title or source.url)}"
        if section := section_below_title(source.title, source.section or ""):
            line += f" — {escape(section)}"
        more = f"… and {len(sources) - position} more"
        if used + 1 + len(line) + 1 + len(more) > SECTION_TEXT_LIMIT:
            lines.append(more)
            used += 1 + len(more)
            break
        lines.append(line)
        used += 1 + len(line)
    room = SECTION_TEXT_LIMIT - used - (1 if lines else 0)
    if related and room >= _RELATED_MIN:
        pages = " · ".join(link(s.url, s.title or s.url) for s in related)
        lines.append(_truncate(f"*Related:* {pages}", room))
    return "\n".join(lines)


def feedback_block(response_id: str) -> dict[str, Any]:
    """The :+1: / :-1: buttons; both carry the response id as their value.

    Args:
        response_id: ``AgentResponse.response_id`` the vote is about.

    Returns:
        An actions block.
    """
    return {
        "type": "actions",
        "block_id": FEEDBACK_BLOCK_ID,
        "elements": [
            {"type": "button", "action_id": ACTION_UP, "value": response_id,
             "text": {"type": "plain_text", "text": ":+1: Helpful", "emoji": True}},
            {"type": "button", "action_id": ACTION_DOWN, "value": response_id,
             "text": {"type": "plain_text", "text": ":-1: Not helpful", "emoji": True}},
        ],
    }


#: Slack's look for each tone of ``bots.chat.notices``.
TONE_EMOJI = {Tone.ANSWERED: "", Tone.CAUTION: ":warning:", Tone.NOT_FOUND: ":mag:", Tone.FAILED: ":x:"}


def notice_line(response: AgentResponse) -> str | None:
    """The notice of ``bots.chat.notices`` as mrkdwn, or None when the status has none."""
    notice = notice_for(response)
    if notice.text is None:
        return None
    return f"{TONE_EMOJI[notice.tone]} {escape(notice.text)}".strip()


def answer_message(response: AgentResponse, reference_id: str | None = None) -> dict[str, Any]:
    """Render a response as Block Kit: notice, answer sections, sources, feedback buttons.

    Args:
        response: the pipeline's response (any status).
        reference_id: the error entry of a failed search, quoted when the text does not yet.

    Returns:
        ``{"text": fallback, "blocks": [...]}`` within Slack's limits.
    """
    shown = tables_for_chat(answer_text(response, reference_id))
    body = link_citations(markdown_to_mrkdwn(escape(shown)), response.sources)
    notice = notice_line(response)
    sources = sources_text(*listed_sources(response))
    head = [_context(notice)] if notice else []
    tail = [_context(sources)] if sources else []
    if notice_for(response).feedback:
        tail.append(feedback_block(response.response_id))

    pieces = split_text(body)
    room = MAX_BLOCKS - len(head) - len(tail)
    if len(pieces) > room:
        pieces = pieces[:room]
        pieces[-1] = _truncate(pieces[-1], SECTION_TEXT_LIMIT - 40) + " _(answer truncated)_"
    blocks = [*head, *(_section(p) for p in pieces), *tail]

    fallback = f"{notice}\n{body}" if notice else body
    return {"text": _truncate(fallback, FALLBACK_TEXT_LIMIT), "blocks": blocks}


def _simple(text: str) -> dict[str, Any]:
    return {"text": text, "blocks": [_section(text)]}


def placeholder_message() -> dict[str, Any]:
    """The message posted while the answer is being worked out."""
    return {"text": PLACEHOLDER_TEXT}


def help_message() -> dict[str, Any]:
    """The reply to a mention without a question."""
    return _simple(
        "Hi! Ask me anything about the docs, for example "
        "`@ragbot how do I install it?`. I answer in a thread with links to the "
        "sources I used; reply in the thread to ask a follow-up, and use :+1: / :-1: "
        "to tell me whether the answer helped."
    )


def outcome_message(outcome: Outcome) -> dict[str, Any]:
    """The message that replaces the placeholder: the answer, or why there is none."""
    if isinstance(outcome, Answered):
        return answer_message(outcome.response, outcome.reference_id)
    emoji = ":pencil2:" if isinstance(outcome, Invalid) else ":x:"
    return _simple(f"{emoji} {escape(problem_text(outcome))}")


def refusal_message(refusal: Refusal) -> dict[str, Any]:
    """The reply to a question that was not asked: help, too long, or too fast."""
    if isinstance(refusal, Help):
        return help_message()
    emoji = ":pencil2:" if isinstance(refusal, TooLong) else ":hourglass:"
    return _simple(f"{emoji} {escape(refusal_text(refusal))}")


def vote_for_action(action_id: str) -> Vote | None:
    """Map a button's action id to a vote.

    Args:
        action_id: the clicked button's ``action_id``.

    Returns:
        +1, -1, or None for a button that is not ours.
    """
    votes: dict[str, Vote] = {ACTION_UP: 1, ACTION_DOWN: -1}
    return votes.get(action_id)
