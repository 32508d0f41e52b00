"""What an adapter receives: the answer service plus the stores it needs, in one bundle."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from bots.chat.ratelimit import RateLimiter
from core.errors import ConfigurationError
from core.fakes import FakeAnswerService, InMemoryStorage
from core.protocols import (
    ActivityLog,
    AnswerService,
    ConversationStore,
    EventLedger,
    FeedbackStore,
    QueryStore,
)
from core.settings import Settings

if TYPE_CHECKING:
    from bots.chat.export import ExportBundle, ExportFormat, ExportSource


@dataclass(kw_only=True)
class Services:
    """Everything an adapter (Slack, Discord, terminal) talks to.

    ``bots/runtime.py:build_services`` builds the real one; ``fake_services`` builds
    one over in-memory fakes for tests.

    Attributes:
        exports: builds the admin export files (injected: adapters never import storage).
        resources: what ``aclose`` closes, last opened first (the runtime's one exit stack).
    """

    settings: Settings
    answers: AnswerService
    conversations: ConversationStore
    queries: QueryStore
    activity: ActivityLog
    feedback: FeedbackStore
    events: EventLedger
    rate_limiter: RateLimiter
    exports: ExportSource
    resources: contextlib.AsyncExitStack = field(default_factory=contextlib.AsyncExitStack)

    async def aclose(self) -> None:
        """Close everything in reverse order of opening; one failure does not skip the rest."""
        await self.resources.aclose()


class NoExports:
    """The ExportSource of services without storage: every export says so."""

    def parse_when(self, text: str) -> datetime:
        """Refuse: there is nothing to export."""
        raise ConfigurationError("log exports need ragbot's storage")

    async def bundle(self, *, fmt: ExportFormat, since: datetime | None) -> ExportBundle:
        """Refuse: there is nothing to export."""
        raise ConfigurationError("log exports need ragbot's storage")


def fake_services(
    settings: Settings | None = None,
    *,
    answers: AnswerService | None = None,
    storage: InMemoryStorage | None = None,
    exports: ExportSource | None = None,
) -> Services:
    """Services over in-memory fakes (FakeAnswerService, InMemoryStorage); no exports unless given."""
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
        exports=exports or NoExports(),
    )
