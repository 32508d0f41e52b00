"""One table from a response's status to the notice shown with it, for Slack, Discord and the terminal.

The core's own text already says when nothing was found (``NOT_FOUND_TEXT``), when the
answer could not be checked (``VALIDATION_NOTE``) and when the search failed (with the
reference), so those statuses carry no notice text: saying it again above the answer
would show it twice. Only a low-confidence answer, whose text reads like any other,
gets a sentence; every status gets a tone (Slack's emoji, Discord's colour).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from bots.chat.errors import reference_text
from core.models import AgentResponse, ResponseStatus


class Tone(StrEnum):
    """How an answer should look at a glance."""

    ANSWERED = "answered"
    CAUTION = "caution"
    NOT_FOUND = "not_found"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class Notice:
    """What a platform shows with an answer besides the core's text.

    Attributes:
        tone: the answer's look.
        text: a sentence to show above the answer, or None when the core's text says it.
        feedback: whether the answer gets 👍 / 👎 buttons (a failed search has nothing to rate).
    """

    tone: Tone
    text: str | None
    feedback: bool


LOW_CONFIDENCE = Notice(
    Tone.CAUTION, "Low confidence: the docs only partly cover this, so check the sources.", True
)

NOTICES: dict[ResponseStatus, Notice] = {
    ResponseStatus.ANSWERED: Notice(Tone.ANSWERED, None, True),
    ResponseStatus.VALIDATION_FAILED: Notice(Tone.CAUTION, None, True),
    ResponseStatus.NO_RELEVANT_DOCUMENTS: Notice(Tone.NOT_FOUND, None, True),
    ResponseStatus.RETRIEVAL_FAILED: Notice(Tone.FAILED, None, False),
}


def notice_for(response: AgentResponse) -> Notice:
    """The notice for ``response``: its status's row, or LOW_CONFIDENCE for a doubtful answer."""
    if response.status is ResponseStatus.ANSWERED and response.low_confidence:
        return LOW_CONFIDENCE
    return NOTICES[response.status]


def answer_text(response: AgentResponse, reference_id: str | None) -> str:
    """The core's text, plus the reference of a failed search when the text does not quote it yet."""
    text = response.response_text
    if response.status is ResponseStatus.RETRIEVAL_FAILED and reference_id and reference_id not in text:
        text = f"{text}\n\n{reference_text(reference_id)}"
    return text
