"""One table from a failed provider call to the ``ProviderError`` subclass ragbot raises.

Cohere and Gemini fail through different SDKs, but the same failure must become the
same error whichever provider it came from: a 429 is ``RateLimitedError``, a timeout
or an unreachable API is ``ProviderTimeoutError``, a 5xx, a refusal or a malformed
body is ``ProviderResponseError``. Each provider module only says what its SDK's
exception *was* (a ``Failure``: an HTTP status, a transport exception, a malformed
body); ``to_provider_error`` decides what it *means* and whether asking again can help.

Modelled on httpx's ``_transports/default.py``: transport exceptions are looked up in
a map where the most specific matching class wins.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import httpx

from core.errors import ProviderError, ProviderResponseError, ProviderTimeoutError, RateLimitedError


@dataclass(frozen=True, slots=True)
class Rule:
    """What one kind of failure means.

    Attributes:
        error: the ProviderError subclass raised.
        retry: whether another attempt can help (429, 5xx, timeouts, lost connections).
        says: what happened, after the call's description; ``{status}`` and ``{key}``
            are filled in.
    """

    error: type[ProviderError]
    retry: bool
    says: str


#: Statuses with a meaning of their own; the others fall into ``STATUS_CLASSES``.
STATUS_RULES: dict[int, Rule] = {
    408: Rule(ProviderTimeoutError, True, "timed out ({status})"),
    429: Rule(RateLimitedError, True, "was rate limited ({status})"),
    504: Rule(ProviderTimeoutError, True, "timed out ({status})"),
    401: Rule(ProviderResponseError, False, "was refused ({status}): check {key}"),
    403: Rule(ProviderResponseError, False, "was refused ({status}): check {key}"),
    498: Rule(ProviderResponseError, False, "was refused ({status}): check {key}"),  # Cohere: bad token
}

#: By the status's first digit: 5xx may pass, 4xx will not; a 2xx we could not use was malformed.
STATUS_CLASSES: dict[int, Rule] = {
    5: Rule(ProviderResponseError, True, "failed with a server error ({status})"),
    4: Rule(ProviderResponseError, False, "was refused ({status})"),
    2: Rule(ProviderResponseError, False, "returned a malformed body ({status})"),
}

#: Any other status (1xx, 3xx, none at all).
UNEXPECTED_STATUS = Rule(ProviderResponseError, False, "returned the unexpected status {status}")

#: Failures below HTTP, by exception class; the most specific match wins, as in httpx.
TRANSPORT_RULES: dict[type[BaseException], Rule] = {
    TimeoutError: Rule(ProviderTimeoutError, True, "got no answer in time"),
    httpx.TimeoutException: Rule(ProviderTimeoutError, True, "got no answer in time"),
    # Refused or dropped connections, DNS failures: no answer either, and worth retrying.
    httpx.TransportError: Rule(ProviderTimeoutError, True, "could not reach the API"),
    httpx.HTTPError: Rule(ProviderResponseError, False, "returned an unusable answer"),
}

#: The body could not be parsed (bad JSON, a shape the SDK does not know).
MALFORMED = Rule(ProviderResponseError, False, "returned a malformed body")


@dataclass(frozen=True, slots=True)
class Failure:
    """What a failed call was, in SDK-neutral terms; built by each provider's ``describe``.

    Exactly one of ``status`` (the provider answered with an HTTP error), ``transport``
    (the exception raised below HTTP) or ``malformed`` (the body was unusable) is set.
    """

    status: int | None = None
    transport: BaseException | None = None
    malformed: bool = False
    detail: str = ""
    retry_after: float | None = None


def transport_failure(exc: BaseException) -> Failure:
    """A failure below HTTP (timeout, refused connection, TLS), described by the exception."""
    return Failure(transport=exc, detail=f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)


def rule_for(failure: Failure) -> Rule:
    """Look the failure up in the tables above.

    Raises:
        TypeError: a transport exception no rule covers (a bug: describe() let it through).
    """
    if failure.malformed:
        return MALFORMED
    if failure.transport is not None:
        return _most_specific(failure.transport)
    status = failure.status or 0
    return STATUS_RULES.get(status) or STATUS_CLASSES.get(status // 100, UNEXPECTED_STATUS)


def _most_specific(exc: BaseException) -> Rule:
    best: type[BaseException] | None = None
    for cls in TRANSPORT_RULES:
        if isinstance(exc, cls) and (best is None or issubclass(cls, best)):
            best = cls
    if best is None:
        raise TypeError(f"no provider error rule for {type(exc).__name__}") from exc
    return TRANSPORT_RULES[best]


def to_provider_error(
    failure: Failure, *, provider: str, key: str, what: str, attempts: int
) -> ProviderError:
    """Build the error to raise for ``failure`` (the caller chains the SDK's exception).

    Args:
        failure: what went wrong.
        provider: ``cohere`` or ``gemini``; the error's ``provider``.
        key: the setting holding the API key, named when the key was refused.
        what: the call, e.g. ``embedding 2 text(s) with embed-v4.0``.
        attempts: how many attempts were made, named when the failure was retryable.

    Returns:
        An instance of the rule's ProviderError subclass.
    """
    rule = rule_for(failure)
    message = f"{what} {rule.says.format(status=failure.status, key=key)}"
    if rule.retry:
        message += f" after {attempts} attempt(s)"
    if failure.detail:
        message += f": {failure.detail}"
    return rule.error(message, provider=provider)


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """The Retry-After header in seconds, or None (absent, or an HTTP date)."""
    for name, value in (headers or {}).items():
        if name.lower() == "retry-after":
            try:
                return max(0.0, float(value))
            except ValueError:
                return None  # an HTTP date: rare from APIs, and the backoff still applies
    return None
