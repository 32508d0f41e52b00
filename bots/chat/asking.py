"""Asking on any platform, as plain functions returning outcome values.

Every adapter takes the same steps in the same order: ``first_delivery`` (a retried
event is answered once), ``precheck`` (empty, too long, rate limited), ``ask`` (the
AnswerService's response, or why there is none, as an ``Outcome``), then, once the
platform has tried to show it, ``record_delivery`` (``response_sent``, or an ``error``
entry when the answer could not be delivered). How a platform shows things is its own
business: Slack edits a placeholder, Discord defers and follows up.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass

from bots.chat.errors import describe, failure_text, log_error
from bots.chat.services import Services
from core.errors import QueryValidationError, RateLimitExceeded
from core.models import AgentLogEntry, AgentResponse, EventType, ResponseStatus
from core.protocols import ActivityLog

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Help:
    """The message held no question: the platform shows how to ask."""


@dataclass(frozen=True, slots=True)
class TooLong:
    """The question is over ``RAGBOT_MAX_QUERY_LENGTH``."""

    length: int
    limit: int


@dataclass(frozen=True, slots=True)
class RateLimited:
    """The user asked more than ``limit`` questions in ``window`` seconds."""

    limit: int
    window: float
    retry_after: float


#: Why a question is not put to the AnswerService at all.
Refusal = Help | TooLong | RateLimited


@dataclass(frozen=True, slots=True)
class Answered:
    """The AnswerService's response; ``reference_id`` names the error entry of a failed search."""

    response: AgentResponse
    reference_id: str | None = None


@dataclass(frozen=True, slots=True)
class Invalid:
    """The question broke a validation rule; ``problem`` names it."""

    problem: str


@dataclass(frozen=True, slots=True)
class Failed:
    """Answering failed unexpectedly; ``reference_id`` names the logged error."""

    reference_id: str


#: What asking produced.
Outcome = Answered | Invalid | Failed


async def first_delivery(services: Services, platform: str, event_id: str | None) -> bool:
    """Whether this event is new; a platform retry of one already seen is answered once.

    When the ledger cannot be written (disk full, WAL not writable) the event counts as new:
    a user who may, rarely, get a retried question answered twice beats one who gets nothing.
    """
    if not event_id:
        return True  # nothing to deduplicate on; answering twice beats never answering
    try:
        return await services.events.first_delivery(platform, event_id)
    except Exception as exc:
        log.error("could not record %s delivery %s (%s); answering it anyway", platform, event_id,
                  describe(exc))
        return True


def precheck(services: Services, question: str, *, user: str) -> Refusal | None:
    """The refusal for an empty, too long or rate-limited question, or None to go ahead.

    Counts the question against the user's rate limit when it goes ahead.
    """
    text = question.strip()
    if not text:
        return Help()
    limit = services.settings.max_query_length
    if len(text) > limit:
        return TooLong(length=len(text), limit=limit)
    try:
        services.rate_limiter.check(user)
    except RateLimitExceeded as exc:
        return RateLimited(limit=exc.limit, window=exc.window_seconds, retry_after=exc.retry_after)
    return None


async def ask(services: Services, question: str, *, platform: str, thread_id: str, user: str) -> Outcome:
    """Ask the AnswerService; what it raises becomes an outcome, never silence."""
    try:
        response = await services.answers.answer(question, thread_id=thread_id, user_id=user or None)
    except QueryValidationError as exc:
        return Invalid(problem=str(exc))  # the pipeline logged it already
    except Exception as exc:
        log.exception("answering %r failed", question[:200])
        failure = await log_error(services.activity, f"answering failed: {describe(exc)}",
                                  platform=platform, thread_id=thread_id, question=question)
        return Failed(reference_id=failure)
    reference = response.reference_id
    if response.status is ResponseStatus.RETRIEVAL_FAILED and not reference:
        reference = await log_error(services.activity, "retrieval_failed without a reference id",
                                    platform=platform, thread_id=thread_id, query_id=response.query_id,
                                    question=question)
    return Answered(response=response, reference_id=reference)


async def log_sent(
    activity: ActivityLog, response: AgentResponse, *, platform: str, execution_time: float | None = None
) -> None:
    """Write the ``response_sent`` entry once ``response`` has reached the user.

    The pipeline logs every step up to ``response_generated``; only the adapter knows
    when the answer actually arrived, so it calls this right after posting.
    """
    await activity.log(AgentLogEntry(
        event_type=EventType.RESPONSE_SENT, thread_id=response.thread_id, query_id=response.query_id,
        query_text=response.query_text or None,
        response_summary=f"{platform}: {response.status.value}; {response.response_text[:200]}",
        execution_time=execution_time,
    ))


async def record_delivery(
    services: Services, outcome: Outcome, *, platform: str, delivered: bool, started: float, where: str
) -> None:
    """Log an answer as sent, or as an error when the platform refused it (``where`` names the place).

    Args:
        started: ``time.perf_counter()`` when the event arrived.
    """
    if not isinstance(outcome, Answered):
        return  # failures were logged when they happened; a validation error by the pipeline
    response = outcome.response
    if delivered:
        try:
            await log_sent(services.activity, response, platform=platform,
                           execution_time=time.perf_counter() - started)
        except Exception as exc:  # the user has the answer; the log line goes to the process log
            log.error("answer %s was delivered on %s but response_sent could not be logged: %s",
                      response.response_id, platform, describe(exc))
        return
    await log_error(services.activity, f"could not deliver response {response.response_id} to {where}",
                    platform=platform, thread_id=response.thread_id, query_id=response.query_id,
                    question=response.query_text or None)


def refusal_text(refusal: TooLong | RateLimited) -> str:
    """What to tell a user whose question was refused (``Help`` is worded per platform)."""
    if isinstance(refusal, TooLong):
        return (f"That question is {refusal.length} characters long; the limit is {refusal.limit}. "
                "Please shorten it and ask again.")
    return (f"You are asking faster than {refusal.limit} questions per {refusal.window:g} s. "
            f"Please try again in {max(1, math.ceil(refusal.retry_after))} s.")


def problem_text(outcome: Invalid | Failed) -> str:
    """What to tell a user when there is no answer to show."""
    if isinstance(outcome, Invalid):
        return f"I can't take that question as it is: {outcome.problem}. Could you shorten or rephrase it?"
    return failure_text("I couldn't answer that: something went wrong on my side", outcome.reference_id)
