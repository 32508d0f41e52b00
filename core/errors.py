"""Exceptions raised by ragbot, as one tree.

Expected outcomes are *not* exceptions: "no relevant documents", "the answer
could not be grounded" and "retrieval failed" reach users as an
``AgentResponse`` with a status. Exceptions are for bad input and broken
dependencies, and every wrapper keeps its cause (``raise ... from exc``).

::

    RagbotError
    ├── InputError                    bad input from a user or a file; exit code 2
    │   ├── QueryValidationError      empty or over-long question, bad user_context
    │   ├── CollectionNameError       not a valid Qdrant collection name
    │   ├── IngestSourceError         missing path, unsupported URL or file type, nothing to ingest
    │   └── IngestRefusedError        an ingest would remove most of a collection (--prune allows it)
    ├── ConfigurationError            settings that cannot work together; exit code 2
    ├── StoreError                    the vector store cannot serve the request
    │   ├── StoreUnavailableError     closed, locked, unreachable, damaged, folder deleted
    │   │   ├── StoreBusyError        the embedded store is open in another ragbot process
    │   │   └── StoreFullError        not enough free disk space to write safely
    │   ├── CollectionNotFoundError   nothing ingested yet under that name
    │   └── EmbeddingModelMismatchError  collection built with another model/dimension
    ├── ProviderError                 a remote model API (Cohere, Gemini) failed
    │   ├── RateLimitedError          429 after the bounded retries
    │   ├── ProviderTimeoutError      no answer in time after the bounded retries
    │   └── ProviderResponseError     5xx, malformed, empty or safety-blocked answer
    ├── StorageError                  the SQLite database failed
    └── RateLimitExceeded             a user asked too often (the adapters reply politely)
"""

from __future__ import annotations


class RagbotError(Exception):
    """Root of every error ragbot raises on purpose."""

    exit_code: int = 1


class InputError(RagbotError):
    """Bad input from a user or a file; the message names the bad value."""

    exit_code = 2


class QueryValidationError(InputError):
    """The question or its context breaks a validation rule."""


class CollectionNameError(InputError):
    """The collection name is not 1..255 letters, digits, '_' or '-'."""


class IngestSourceError(InputError):
    """The thing to ingest does not exist or cannot be read at all."""


class IngestRefusedError(InputError):
    """An ingest would remove more than half of a collection, or all of it, without ``--prune``."""


class ConfigurationError(RagbotError):
    """Settings that cannot work together (for example a token without its secret)."""

    exit_code = 2


class StoreError(RagbotError):
    """The vector store cannot serve the request."""


class StoreUnavailableError(StoreError):
    """The store is closed, locked by another process or unreachable."""


class StoreBusyError(StoreUnavailableError):
    """Another ragbot process has the embedded knowledge base open (one process at a time)."""


class StoreFullError(StoreUnavailableError):
    """The disk holding the store has too little free space; nothing was written."""


class CollectionNotFoundError(StoreError):
    """Nothing has been ingested under this collection name yet."""


class EmbeddingModelMismatchError(StoreError):
    """The collection was built with a different embedding model or dimension."""

    def __init__(
        self, *, collection: str, stored_model: str, stored_dim: int, model: str, dim: int
    ) -> None:
        self.collection = collection
        self.stored_model = stored_model
        self.stored_dim = stored_dim
        self.model = model
        self.dim = dim
        super().__init__(
            f"collection {collection!r} was built with embedding model {stored_model!r} "
            f"(dimension {stored_dim}) but this request uses {model!r} (dimension {dim}); "
            "re-ingest into a new collection or switch the embedding settings back"
        )


class ProviderError(RagbotError):
    """A remote model API failed; ``provider`` names it (cohere, gemini)."""

    def __init__(self, message: str, *, provider: str) -> None:
        self.provider = provider
        super().__init__(f"{provider}: {message}")


class RateLimitedError(ProviderError):
    """The provider kept answering 429 until the retries ran out."""


class ProviderTimeoutError(ProviderError):
    """The provider did not answer in time, even after retries."""


class ProviderResponseError(ProviderError):
    """5xx, malformed, empty or safety-blocked answer."""


class StorageError(RagbotError):
    """The SQLite database failed."""


class RateLimitExceeded(RagbotError):
    """A user asked more questions than the per-user limit allows."""

    def __init__(self, *, user_id: str, limit: int, window_seconds: float, retry_after: float):
        self.user_id = user_id
        self.limit = limit
        self.window_seconds = window_seconds
        self.retry_after = retry_after
        super().__init__(
            f"user {user_id!r} asked more than {limit} questions in {window_seconds:g} s; "
            f"retry in {retry_after:.0f} s"
        )
