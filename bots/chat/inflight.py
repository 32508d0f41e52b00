"""The handler tasks still working on an event, so shutdown can let them finish first."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Any

#: How long shutdown waits for answers in progress.
DRAIN_TIMEOUT = 30.0


class InFlight:
    """Tracks the tasks of event handlers (Slack listeners, Discord commands and buttons).

    Both SDKs run each handler as a task they keep no reference to; holding them here keeps
    them alive and lets ``drain`` wait for answers in progress before the connection and the
    stores close under them.
    """

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    @contextlib.contextmanager
    def track(self) -> Iterator[None]:
        """Count the current task as in flight until the block ends."""
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            yield
        finally:
            if task is not None:
                self._tasks.discard(task)

    async def drain(self, timeout: float = DRAIN_TIMEOUT) -> None:
        """Wait (up to ``timeout`` seconds in all) until no tracked task is left, new ones included."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        current = asyncio.current_task()
        while pending := {t for t in self._tasks if t is not current and not t.done()}:
            left = deadline - loop.time()
            if left <= 0:
                return
            await asyncio.wait(pending, timeout=left)
