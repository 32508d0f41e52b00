"""The Cohere client shared by ``CohereEmbedder`` (core/embedders/cohere.py) and
``CohereReranker`` (core/retrieval/rerankers.py), and how the Cohere SDK fails.

Both talk to the v2 API (``POST /v2/embed``, ``POST /v2/rerank``) through
``cohere.AsyncClientV2`` on an httpx client they own. The SDK's own retries are turned
off (``max_retries=0``) so that the one retry policy of core/providers/retry.py decides,
with the one error table of core/providers/errors.py (the same as Gemini's).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import cohere
import httpx
from cohere.core.api_error import ApiError
from cohere.core.parse_error import ParsingError
from pydantic import SecretStr

from core.errors import ConfigurationError
from core.providers.errors import Failure, retry_after_seconds, transport_failure
from core.providers.retry import Provider, RetryPolicy, call_with_retries

PROVIDER = "cohere"
T = TypeVar("T")


def describe(exc: Exception) -> Failure | None:
    """Read an exception raised by ``cohere.AsyncClientV2``.

    Returns:
        The Failure, or None for an exception that is not the API's doing.
    """
    if isinstance(exc, ApiError):
        return Failure(status=exc.status_code or 0, detail=str(exc.body)[:300],
                       retry_after=retry_after_seconds(exc.headers))
    if isinstance(exc, ParsingError):
        return Failure(malformed=True, detail=repr(str(exc.body)[:300]))
    if isinstance(exc, httpx.HTTPError):
        return transport_failure(exc)
    return None


COHERE = Provider(name=PROVIDER, key="COHERE_API_KEY", describe=describe)


class CohereClient:
    """Client, retries and shutdown shared by the Cohere embedder and reranker."""

    def __init__(
        self,
        *,
        api_key: SecretStr | None,
        base_url: str | None,
        timeout: float,
        retry: RetryPolicy,
        http_client: httpx.AsyncClient | None,
    ) -> None:
        """Build the SDK client on our httpx client (nothing is sent yet).

        Raises:
            ConfigurationError: no API key, or a timeout that is not positive.
        """
        if api_key is None or not api_key.get_secret_value().strip():
            raise ConfigurationError("COHERE_API_KEY is not set: the Cohere models need it")
        if timeout <= 0:
            raise ConfigurationError(f"provider timeout {timeout} must be positive")
        self._retry = retry
        self._http = http_client or httpx.AsyncClient(timeout=timeout)
        self.base_url = base_url
        self._client = cohere.AsyncClientV2(
            api_key=api_key.get_secret_value(),
            base_url=base_url,
            timeout=timeout,
            max_retries=0,  # call_with_retries retries; the SDK's own retries would multiply it
            httpx_client=self._http,
            log_warning_experimental_features=False,
        )

    async def _with_retries(self, what: str, call: Callable[[], Awaitable[T]]) -> T:
        return await call_with_retries(call, provider=COHERE, policy=self._retry, what=what)

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self._http.aclose()
