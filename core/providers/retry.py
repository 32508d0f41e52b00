"""The one retry policy of the provider calls (Cohere embed and rerank, Gemini generate).

The SDKs' own retries are turned off; ``call_with_retries`` decides, with the error
table of core/providers/errors.py: what may pass (429, 5xx, timeouts, lost
connections) is retried with bounded exponential backoff and jitter, then raised as
a ``ProviderError`` whose ``__cause__`` is the SDK's last exception.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from core.errors import ConfigurationError
from core.providers.errors import Failure, rule_for, to_provider_error

T = TypeVar("T")

#: Turns an exception raised by a provider's SDK into a Failure, or None when it is not
#: a provider failure at all (a bug of ours), which then propagates unchanged.
Describe = Callable[[Exception], Failure | None]


@dataclass(frozen=True, kw_only=True, slots=True)
class RetryPolicy:
    """Bounded exponential backoff with jitter.

    Attributes:
        retries: extra attempts after the first one.
        base_delay: delay before the first retry, in seconds (doubles each time).
        max_delay: upper bound of any single delay, including a server's Retry-After.
    """

    retries: int = 3
    base_delay: float = 0.5
    max_delay: float = 8.0

    def __post_init__(self) -> None:
        if self.retries < 0 or self.base_delay < 0 or self.max_delay < self.base_delay:
            raise ConfigurationError(
                f"invalid retry policy: retries={self.retries}, base_delay={self.base_delay}, "
                f"max_delay={self.max_delay}"
            )

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Return how long to wait before retry number ``attempt`` (0-based).

        Args:
            attempt: how many retries happened before this one.
            retry_after: the server's Retry-After in seconds, if it sent one.

        Returns:
            Seconds in [backoff / 2, backoff], raised to Retry-After, never above max_delay.
        """
        backoff = min(self.max_delay, self.base_delay * 2**attempt)
        # "Equal jitter": half fixed so retries still back off, half random so many
        # clients hitting the same 429 do not come back in lockstep.
        wait = backoff / 2 + random.uniform(0, backoff / 2)
        if retry_after is not None:
            wait = max(wait, retry_after)
        return min(wait, self.max_delay)


@dataclass(frozen=True, kw_only=True, slots=True)
class Provider:
    """A remote model API as the retry loop sees it.

    Attributes:
        name: ``cohere`` or ``gemini``, recorded in ``ProviderError.provider``.
        key: the setting of its API key, named when the key is refused.
        describe: reads its SDK's exceptions.
    """

    name: str
    key: str
    describe: Describe


async def call_with_retries(
    call: Callable[[], Awaitable[T]], *, provider: Provider, policy: RetryPolicy, what: str
) -> T:
    """Await ``call()``, retrying what may pass, and map the final failure to a ProviderError.

    Args:
        call: makes one fresh request each time it is called.
        provider: whose SDK raises, and how to read its exceptions.
        policy: how often and how long to wait.
        what: the call in words, for the error message.

    Returns:
        What ``call()`` returned.

    Raises:
        ProviderError: the subclass core/providers/errors.py maps the last failure to,
            from the SDK's exception.
    """
    attempt = 0
    while True:
        try:
            return await call()
        except Exception as exc:
            failure = provider.describe(exc)
            if failure is None:
                raise
            if not rule_for(failure).retry or attempt >= policy.retries:
                raise to_provider_error(
                    failure, provider=provider.name, key=provider.key, what=what, attempts=attempt + 1
                ) from exc
            await asyncio.sleep(policy.delay(attempt, failure.retry_after))
            attempt += 1
