"""The one retry policy of the provider calls: bounded, jittered, honouring Retry-After."""

from __future__ import annotations

import pytest

from core.errors import ConfigurationError
from core.providers.errors import retry_after_seconds
from core.providers.retry import RetryPolicy


def test_backoff_is_bounded_and_jittered() -> None:
    policy = RetryPolicy(retries=5, base_delay=0.1, max_delay=1.0)
    for attempt, backoff in enumerate([0.1, 0.2, 0.4, 0.8, 1.0, 1.0]):
        delays = {policy.delay(attempt) for _ in range(50)}
        assert all(backoff / 2 <= d <= backoff for d in delays)
        assert len(delays) > 1, "jitter"
    assert policy.delay(0, retry_after=0.7) >= 0.7
    assert policy.delay(0, retry_after=30.0) == 1.0


def test_a_policy_that_cannot_work_is_refused() -> None:
    for bad in ({"retries": -1}, {"base_delay": -0.1}, {"base_delay": 2.0, "max_delay": 1.0}):
        with pytest.raises(ConfigurationError, match="retry policy"):
            RetryPolicy(**bad)  # type: ignore[arg-type]


def test_retry_after_is_read_in_seconds_only() -> None:
    assert retry_after_seconds({"Retry-After": "3"}) == 3.0
    assert retry_after_seconds({"retry-after": "-2"}) == 0.0
    assert retry_after_seconds({"Retry-After": "Wed, 21 Oct 2026 07:28:00 GMT"}) is None
    assert retry_after_seconds(None) is None
