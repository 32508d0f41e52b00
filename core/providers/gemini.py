"""How the Gemini SDK (google-genai) fails, in the terms of core/providers/errors.py.

The generator itself is ``core/answer/generators/gemini.py``; it calls the API through
``call_with_retries(..., provider=GEMINI)`` so its failures map exactly as Cohere's do.
"""

from __future__ import annotations

import httpx
from google.genai import errors as genai_errors

from core.providers.errors import Failure, retry_after_seconds, transport_failure
from core.providers.retry import Provider


def describe(exc: Exception) -> Failure | None:
    """Read an exception raised by ``client.aio.models.generate_content``.

    Returns:
        The Failure, or None for an exception that is not the API's doing.
    """
    if isinstance(exc, genai_errors.APIError):
        headers = getattr(exc.response, "headers", None)
        return Failure(
            status=int(exc.code or 0),
            detail=f"{exc.status or ''}: {exc.message or ''}".strip(": "),
            retry_after=retry_after_seconds(headers),
        )
    if isinstance(exc, httpx.HTTPError | TimeoutError):
        return transport_failure(exc)
    if isinstance(exc, ValueError):  # malformed JSON, or a response shape the SDK cannot parse
        return Failure(malformed=True, detail=str(exc)[:300])
    return None


GEMINI = Provider(name="gemini", key="GEMINI_API_KEY", describe=describe)
