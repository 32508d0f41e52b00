"""The one rule for failures users see: log an ``error`` entry and quote its id as the reference."""

from __future__ import annotations

import logging

from core.models import MAX_TEXT_LENGTH, AgentLogEntry, EventType
from core.protocols import ActivityLog

log = logging.getLogger(__name__)


def describe(exc: BaseException) -> str:
    """``Type: message``, the form every logged failure uses."""
    return f"{type(exc).__name__}: {exc}"


async def log_error(
    activity: ActivityLog,
    details: str,
    *,
    platform: str,
    thread_id: str | None = None,
    query_id: str | None = None,
    question: str | None = None,
) -> str:
    """Write an ``error`` entry ``"{platform}: {details}"`` and return its id, the user's reference.

    A log that cannot be written still yields a reference: the user gets an id either way,
    and the process log keeps the details under it.
    """
    entry = AgentLogEntry(
        event_type=EventType.ERROR, thread_id=thread_id, query_id=query_id,
        query_text=question[:MAX_TEXT_LENGTH] if question else None,
        error_details=f"{platform}: {details}"[:MAX_TEXT_LENGTH],
    )
    try:
        await activity.log(entry)
    except Exception:
        log.exception("could not write error entry %s: %s", entry.entry_id, entry.error_details)
    else:
        log.warning("%s error %s: %s", platform, entry.entry_id, details)
    return entry.entry_id


def reference_text(reference_id: str) -> str:
    """The sentence that hands a user the reference of an ``error`` entry."""
    return f"If it keeps happening, give an admin this reference: `{reference_id}`."


def failure_text(what: str, reference_id: str) -> str:
    """``Sorry, {what}.`` plus the reference: every failure reply on every platform."""
    return f"Sorry, {what}. {reference_text(reference_id)}"
