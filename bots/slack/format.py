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
from typing import Any, Literal

from core.answer.citations import CITATION_RE, cited_indices
from core.models import AgentResponse, ResponseStatus, Source

#: Slack's limit for the text of one section block (and any text object).
SECTION_TEXT_LIMIT = 3000
#: Slack's limit for blocks in one message.
MAX_BLOCKS = 50
#: Keep the notification fallback well under Slack's 4000 characters.
FALLBACK_TEXT_LIMIT = 3000
#: Answers scoring below this get a "check the sources" notice.

ACTION_UP = "ragbot_feedback_up"
ACTION_DOWN = "ragbot_feedback_down"
FEEDBACK_BLOCK_ID = "ragbot_feedback"
PLACEHOLDER_TEXT = "Searching the docs..."

Vote = Literal[1, -1]

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

    return CITATION_RE.sub(_replace, escaped_text)


def _cut_point(text: str, limit: int) -> int:
    window = text[:limit]
    cut = limit
    for sep in ("\n\n", "\n", ". ", " "):
        at = window.rfind(sep)
        if at > limit // 2:
            cut = at + len(sep)
            break
    # Never cut a <url|label> link or an &entity; in two.
    opened, closed = text.rfind("<", 0, cut), text.rfind(">", 0, cut)
    if opened > closed and opened > 0:
        cut = opened
    amp, semi = text.rfind("&", 0, cut), text.rfind(";", 0, cut)
    if amp > semi and cut - amp < 6 and amp > 0:
        cut = amp
    return cut


def split_text(text: str, *, limit: int = SECTION_TEXT_LIMIT) -> list[str]:
    """Split mrkdwn into pieces of at most ``limit`` characters.

    Args:
        text: escaped mrkdwn, possibly with links.
        limit: maximum piece length.

    Returns:
        Non-empty pieces, cut at paragraph, line, sentence or word boundaries when
        possible and never inside a link or entity.
    """
    pieces: list[str] = []
    rest = text.strip()
    while len(rest) > limit:
        cut = _cut_point(rest, limit)
        piece = rest[:cut].rstrip()
        if piece:
            pieces.append(piece)
        rest = rest[cut:].lstrip()
    if rest:
        pieces.append(rest)
    return pieces


def _truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[: _cut_point(text, limit - 1)].rstrip() + "…"


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def _context(text: str) -> dict[str, Any]:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": text}]}


def sources_text(sources: Sequence[Source]) -> str:
    """List sources as ``[n] <url|title> — section`` lines within one text object.

    Args:
        sources: the cited sources, in citation order.

    Returns:
        mrkdwn of at most ``SECTION_TEXT_LIMIT`` characters ("" when there are none).
    """
    if not sources:
        return ""
    lines = ["*Sources*"]
    used = len(lines[0])
    for position, source in enumerate(sources):
        line = f"[{source.index}] {link(source.url, source.title or source.url)}"
        if source.section:
            line += f" — {escape(source.section)}"
        more = f"… and {len(sources) - position} more"
        if used + 1 + len(line) + 1 + len(more) > SECTION_TEXT_LIMIT:
            lines.append(more)
            break
        lines.append(line)
        used += 1 + len(line)
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


def notice_for(response: AgentResponse) -> str | None:
    """The warning shown above an answer, if its status or confidence calls for one.

    Args:
        response: the pipeline's response.

    Returns:
        mrkdwn notice, or None for a confident answer.
    """
    if response.status is ResponseStatus.NO_RELEVANT_DOCUMENTS:
        return (":mag: I couldn't find this in the docs, so I won't guess. "
                "Try rephrasing with the words the docs would use.")
    if response.status is ResponseStatus.VALIDATION_FAILED:
        return (":warning: I couldn't check every sentence of this answer against the docs; "
                "please verify it in the sources.")
    if response.status is ResponseStatus.RETRIEVAL_FAILED:
        return ":x: I couldn't search the docs just now."
    if response.low_confidence:
        return ":warning: Low confidence: the docs only partly cover this, so check the sources."
    return None


def answer_message(response: AgentResponse) -> dict[str, Any]:
    """Render a response as Block Kit: notice, answer sections, sources, feedback buttons.

    Args:
        response: the pipeline's response (any status).

    Returns:
        ``{"text": fallback, "blocks": [...]}`` within Slack's limits.
    """
    body = link_citations(escape(response.response_text), response.sources)
    notice = notice_for(response)
    sources = sources_text(response.sources)
    head = [_context(notice)] if notice else []
    tail = [_context(sources)] if sources else []
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


def failure_message(reason: str, reference_id: str | None) -> dict[str, Any]:
    """The reply when answering failed unexpectedly.

    Args:
        reason: short, user-facing reason (escaped here).
        reference_id: id of the ``error`` log entry an admin can look up.

    Returns:
        A message naming the reason and the reference id.
    """
    text = f":x: Sorry, I couldn't answer that: {escape(reason)}."
    if reference_id:
        text += f" If it keeps happening, give an admin this reference: `{escape(reference_id)}`."
    return _simple(text)


def invalid_question_message(problem: str) -> dict[str, Any]:
    """The reply to a question that breaks a validation rule.

    Args:
        problem: the validation error's message, naming the bad value.

    Returns:
        A polite message quoting the problem.
    """
    return _simple(f":pencil2: I can't take that question as it is: {escape(problem)}. "
                   "Could you shorten or rephrase it?")


def rate_limited_message(retry_after: float) -> dict[str, Any]:
    """The reply to a user over the per-user question limit.

    Args:
        retry_after: seconds until the user may ask again.

    Returns:
        A polite message with the waiting time.
    """
    seconds = max(1, round(retry_after))
    return _simple(f":hourglass: You're asking faster than I can keep up. "
                   f"Please try again in {seconds} s.")


def feedback_thanks(vote: int) -> str:
    """The ephemeral thanks after a feedback click.

    Args:
        vote: +1 or -1.

    Returns:
        Plain mrkdwn text.
    """
    emoji, other = (":+1:", ":-1:") if vote > 0 else (":-1:", ":+1:")
    return f"Thanks for the feedback ({emoji} recorded). Click {other} to change your vote."


def vote_for_action(action_id: str) -> Vote | None:
    """Map a button's action id to a vote.

    Args:
        action_id: the clicked button's ``action_id``.

    Returns:
        +1, -1, or None for a button that is not ours.
    """
    votes: dict[str, Vote] = {ACTION_UP: 1, ACTION_DOWN: -1}
    return votes.get(action_id)
