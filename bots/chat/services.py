"""What an adapter receives: the answer service plus the stores it needs, in one bundle."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from bots.chat.ratelimit import RateLimiter
from core.fakes import FakeAnswerService, InMemoryStorage
from core.models import AgentLogEntry, AgentResponse, EventType
from core.protocols import (
    ActivityLog,
    AnswerService,
    ConversationStore,
    EventLedger,
    FeedbackStore,
    QueryStore,
)
from core.settings import Settings


@dataclass(kw_only=True)
class Services:
    """Everything an adapter (Slack, Discord, terminal) talks to.

    ``bots/runtime.py:build_services`` builds the real one; ``fake_services`` builds
    one over in-memory fakes for tests.
    """

    settings: Settings
    answers: AnswerService
    conversations: ConversationStore
    queries: QueryStore
    activity: ActivityLog
    feedback: FeedbackStore
    events: EventLedger
    rate_limiter: RateLimiter
    _closers: list[Callable[[], Awaitable[None]]] = field(default_factory=list)

    def add_closer(self, close: Callable[[], Awaitable[None]]) -> None:
        """Register something to close with the services (closed in reverse order)."""
        self._closers.append(close)

    async def aclose(self) -> None:
        """Close everything in reverse order of opening; one failure does not skip the rest.

        Raises:
            Exception: the first closer's failure, after every closer has run.
        """
        closers, self._closers = list(reversed(self._closers)), []
        first: BaseException | None = None
        for close in closers:
            try:
                await close()
            except Exception as exc:  # the store must still flush if an HTTP client fails
                first = first or exc
        if first is not None:
            raise first


def fake_services(
    settings: Settings | None = None,
    *,
    answers: AnswerService | None = None,
    storage: InMemoryStorage | None = None,
) -> Services:
    """Services over in-memory fakes (FakeAnswerService, InMemoryStorage)."""
    settings = settings or Settings(_env_file=None)  # type: ignore[call-arg]
    storage = storage or InMemoryStorage()
    return Services(
        settings=settings,
        answers=answers or FakeAnswerService(),
        conversations=storage,
        queries=storage,
        activity=storage,
        feedback=storage,
        events=storage,
        rate_limiter=RateLimiter(limit=settings.rate_limit_per_minute),
    )


async def log_sent(
    activity: ActivityLog, response: AgentResponse, *, platform: str, execution_time: float | None = None
) -> None:
    """Write the ``response_sent`` entry once an adapter has delivered ``response``.

    The pipeline logs every step up to ``response_generated``; only the adapter knows
    when the answer actually reached the user, so it calls this right after posting.
    """
    await activity.log(
        AgentLogEntry(
            event_type=EventType.RESPONSE_SENT,
            thread_id=response.thread_id,
            query_id=response.query_id,
            query_text=response.query_text or None,
            response_summary=f"{platform}: {response.status.value}; {response.response_text[:200]}",
            execution_time=execution_time,
        )
    )
