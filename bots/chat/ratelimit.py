"""Per-user sliding-window rate limit for questions asked through any adapter."""

from __future__ import annotations

import time
from collections import defaultdict, deque
from collections.abc import Callable

from core.errors import RateLimitExceeded

#: Users tracked before the idle ones are forgotten (memory stays flat however many ask).
_FORGET_AFTER_USERS = 10_000

class RateLimiter:
    """Allow at most ``limit`` questions per user in any ``window`` seconds.

    Args:
        limit: questions allowed per window; 0 disables the limit.
        window: window length in seconds.
        clock: monotonic clock, replaceable in tests.
    """

    def __init__(
        self, *, limit: int, window: float = 60.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limit = limit
        self.window = window
        self._clock = clock
        self._seen: dict[str, deque[float]] = defaultdict(deque)

    def check(self, user_id: str) -> None:
        """Count one question for ``user_id``.

        Raises:
            RateLimitExceeded: with ``retry_after`` seconds, when over the limit.
        """
        if self.limit <= 0:
            return
        now = self._clock()
        if len(self._seen) > _FORGET_AFTER_USERS:
            self._forget_idle(now)
        seen = self._seen[user_id]
        while seen and seen[0] <= now - self.window:
            seen.popleft()
        if len(seen) >= self.limit:
            raise RateLimitExceeded(
                user_id=user_id, limit=self.limit, window_seconds=self.window,
                retry_after=max(0.0, seen[0] + self.window - now),
            )
        seen.append(now)

    def _forget_idle(self, now: float) -> None:
        """Drop users with nothing in the window: a long-running bot meets many users once."""
        for user in [u for u, seen in self._seen.items() if not seen or seen[-1] <= now - self.window]:
            del self._seen[user]
