"""The admin export on any platform, in one order: refuse (and log), parse, bundle, deliver, log.

The export files are built by an ``ExportSource`` the composition root injects
(``bots/runtime.py`` wraps ``storage/export.py``), so adapters never import storage.
"Done" is logged only once the files have reached the admin, so a refused, too large or
failed export never shows up as one that happened.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol

from bots.chat.errors import describe, failure_text, log_error
from bots.chat.services import Services
from core.models import AgentLogEntry, EventType

log = logging.getLogger(__name__)

ExportFormat = Literal["jsonl", "csv"]
FORMATS: tuple[ExportFormat, ...] = ("jsonl", "csv")
#: How a start may be written, for usage messages.
SINCE_FORMS = "a date like 2025-01-31, a time like 2025-01-31T12:00Z, or an age like 24h, 7d or 2w"


class ExportBundle(Protocol):
    """The log and feedback exports of one request, ready to upload as two files."""

    @property
    def log_text(self) -> str: ...
    @property
    def feedback_text(self) -> str: ...
    @property
    def log_rows(self) -> int: ...
    @property
    def feedback_rows(self) -> int: ...
    @property
    def log_filename(self) -> str: ...
    @property
    def feedback_filename(self) -> str: ...


class ExportSource(Protocol):
    """Reads export starts and builds export files (``storage/export.py``, injected)."""

    def parse_when(self, text: str) -> datetime:
        """A date, ISO datetime or age (``7d``) as an aware datetime; ValueError names bad text."""
        ...

    async def bundle(self, *, fmt: ExportFormat, since: datetime | None) -> ExportBundle:
        """The log entries and votes since ``since`` (all when None), in memory."""
        ...


class ExportUsageError(ValueError):
    """An export argument that is neither a format nor a start; the message names it."""


@dataclass(frozen=True, slots=True)
class ExportRequest:
    """What an admin asked for."""

    fmt: ExportFormat
    since: datetime | None

    @property
    def window(self) -> str:
        """``since 2025-01-31T00:00:00+00:00`` or ``all time``."""
        return f"since {self.since.isoformat()}" if self.since else "all time"


@dataclass(frozen=True, slots=True)
class Exported:
    """The files reached the admin."""

    request: ExportRequest
    bundle: ExportBundle


@dataclass(frozen=True, slots=True)
class TooLarge:
    """The files are over the platform's upload limit and were not sent."""

    size: int
    limit: int


@dataclass(frozen=True, slots=True)
class ExportFailed:
    """Building or sending failed; ``reference_id`` names the logged error."""

    reference_id: str


ExportOutcome = Exported | TooLarge | ExportFailed
#: Sends the two files to the admin; raises when the platform refuses them.
Deliver = Callable[[ExportRequest, ExportBundle], Awaitable[None]]


def parse_since(source: ExportSource, text: str | None) -> datetime | None:
    """The start of an export (None for everything).

    Raises:
        ExportUsageError: naming the text, whatever the parser raised (it once let OverflowError out).
    """
    if text is None or not text.strip():
        return None
    try:
        return source.parse_when(text.strip())
    except Exception as exc:
        reason = str(exc).rstrip(".") or type(exc).__name__
        raise ExportUsageError(f"{text.strip()!r} is not a start: {reason}") from None


async def refuse(services: Services, *, platform: str, user: str, rule: str) -> None:
    """Log a refused export as ``admin_export`` with ``error_details`` starting ``refused``.

    The user id comes from the platform but is cut short anyway; a log that cannot be written
    leaves the refusal in the process log instead.
    """
    details = f"refused: {platform} user {user[:100]} may not export ({rule})"
    try:
        await services.activity.log(AgentLogEntry(event_type=EventType.ADMIN_EXPORT, error_details=details))
    except Exception as exc:
        log.error("could not log an export refusal (%s): %s", describe(exc), details)


async def send(
    services: Services, request: ExportRequest, *, platform: str, user: str, deliver: Deliver,
    max_bytes: int,
) -> ExportOutcome:
    """Bundle, check the size, deliver, then log what happened: done, not sent, or an error."""
    started = time.perf_counter()
    what = f"{platform}: user {user}'s export as {request.fmt} ({request.window})"
    try:
        bundle = await services.exports.bundle(fmt=request.fmt, since=request.since)
        size = len(bundle.log_text.encode()) + len(bundle.feedback_text.encode())
        counted = f"{bundle.log_rows} log entries and {bundle.feedback_rows} votes"
        if size > max_bytes:
            await services.activity.log(AgentLogEntry(
                event_type=EventType.ADMIN_EXPORT,
                error_details=f"not sent: {what} of {counted} is {size} bytes, over the "
                              f"{max_bytes}-byte upload limit",
            ))
            return TooLarge(size=size, limit=max_bytes)
        await deliver(request, bundle)
    except Exception as exc:
        reference = await log_error(
            services.activity, f"admin export for user {user} failed: {describe(exc)}", platform=platform)
        return ExportFailed(reference_id=reference)
    summary = f"{platform}: user {user} exported {counted} as {request.fmt} ({request.window})"
    try:
        await services.activity.log(AgentLogEntry(event_type=EventType.ADMIN_EXPORT, response_summary=summary,
                                                  execution_time=time.perf_counter() - started))
    except Exception as exc:  # the admin has the files; the record goes to the process log
        log.error("could not log a done export (%s): %s", describe(exc), summary)
    return Exported(request=request, bundle=bundle)


def refused_text(lists: str) -> str:
    """The reply to someone who may not export; ``lists`` names the settings that would allow it."""
    return f"Sorry, only ragbot admins can export the logs. An operator can add you to {lists}."


def usage_text(syntax: str, problem: ExportUsageError) -> str:
    """The reply to unreadable arguments: the problem, then how to write them."""
    return f"{str(problem).rstrip('.')}. Usage: {syntax}, since being {SINCE_FORMS}."


def summary_text(request: ExportRequest, bundle: ExportBundle) -> str:
    """The line sent with the files."""
    counted = f"{bundle.log_rows} log entries and {bundle.feedback_rows} votes"
    return f"ragbot export ({request.window}): {counted}."


def problem_text(outcome: TooLarge | ExportFailed) -> str:
    """The reply when the files were not sent."""
    if isinstance(outcome, TooLarge):
        return (f"The export is {outcome.size} bytes, over the {outcome.limit}-byte upload limit. "
                "Use a later start, or run `ragbot logs export` on the server.")
    return failure_text("the export failed", outcome.reference_id)
