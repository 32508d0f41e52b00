"""A 👍 / 👎 click on any platform: store the vote, log it, and say so; a broken store gets a reference."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from bots.chat.errors import describe, failure_text, log_error
from bots.chat.services import Services
from core.models import AgentLogEntry, EventType, Feedback

Vote = Literal[1, -1]


@dataclass(frozen=True, slots=True)
class Recorded:
    """The vote is stored (a second click by the same user replaced the first)."""

    vote: Vote


@dataclass(frozen=True, slots=True)
class NotRecorded:
    """Storing the vote failed; ``reference_id`` names the logged error."""

    reference_id: str


async def record_vote(
    services: Services, *, platform: str, response_id: str, user: str, vote: Vote, thread_id: str | None
) -> Recorded | NotRecorded:
    """Store and log one vote; a failure is logged as an ``error`` and returned, never raised."""
    try:
        await services.feedback.record_feedback(
            Feedback(response_id=response_id, user_id=user, vote=vote, platform=platform))
        await services.activity.log(AgentLogEntry(
            event_type=EventType.FEEDBACK_RECEIVED, thread_id=thread_id,
            response_summary=f"{platform}: user {user} voted {vote:+d} on response {response_id}",
        ))
    except Exception as exc:  # a broken store must not leave the click unanswered
        reference = await log_error(
            services.activity, f"storing feedback on {response_id} failed: {describe(exc)}",
            platform=platform, thread_id=thread_id,
        )
        return NotRecorded(reference_id=reference)
    return Recorded(vote=vote)


def reply_text(outcome: Recorded | NotRecorded) -> str:
    """The private reply to the voter."""
    if isinstance(outcome, NotRecorded):
        return failure_text("I couldn't record your vote", outcome.reference_id)
    return "Thanks for the feedback! Click the other button to change your vote."
