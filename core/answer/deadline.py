"""One deadline per question (``RAGBOT_ANSWER_DEADLINE``, 30 s by default) over search and generation.

Each provider call has its own timeout and retries (30 s x 3 made a hanging provider keep
users waiting two minutes). The pipeline opens ``question_deadline`` around one answer; the
search and the generator are awaited through ``before_deadline``, which raises
``DeadlineExceeded`` (a ``ProviderTimeoutError``) once the question's time is up. A late
search becomes ``retrieval_failed`` with that reason, a late generation the extractive answer
(``core.answer.generators.fallback``). A context variable carries the deadline, so concurrent
questions each keep their own.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Iterator
from contextvars import ContextVar
from typing import TypeVar

from core.errors import ProviderTimeoutError

T = TypeVar("T")

#: ``time.monotonic()`` by which the current question must be answered, and its length in seconds.
_deadline: ContextVar[tuple[float, float] | None] = ContextVar("ragbot_question_deadline", default=None)


class DeadlineExceeded(ProviderTimeoutError):
    """The question's deadline passed while waiting for ``what``."""

    def __init__(self, what: str, seconds: float) -> None:
        self.seconds = seconds
        super().__init__(f"{what} did not finish within the {seconds:g} s per-question deadline",
                         provider="deadline")


@contextlib.contextmanager
def question_deadline(seconds: float) -> Iterator[None]:
    """Give the question answered inside the block ``seconds`` in all (nested blocks keep the outer one)."""
    if _deadline.get() is not None:
        yield
        return
    token = _deadline.set((time.monotonic() + seconds, seconds))
    try:
        yield
    finally:
        _deadline.reset(token)


def remaining() -> float | None:
    """Seconds left for the current question (0 when past), or None outside a question."""
    current = _deadline.get()
    return None if current is None else max(0.0, current[0] - time.monotonic())


async def before_deadline(awaitable: Awaitable[T], what: str) -> T:
    """Await ``awaitable``, cancelled when the current question's deadline passes.

    Raises:
        DeadlineExceeded: the deadline passed first (``what`` names the step in the message).
    """
    current = _deadline.get()
    if current is None:
        return await awaitable
    left = max(0.0, current[0] - time.monotonic())
    try:
        async with asyncio.timeout(left):
            return await awaitable
    except TimeoutError:
        raise DeadlineExceeded(what, current[1]) from None
