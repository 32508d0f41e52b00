"""Identifiers shared by the vector store backends."""

from __future__ import annotations

import uuid

from core.errors import CollectionNameError
from core.models import validate_collection_name

_ID_NAMESPACE = uuid.UUID("3f1d1a52-6c4b-4d5e-9a57-0c1f0f6b7a10")


def point_id(chunk_id: str) -> str:
    """Return the Qdrant point id of a chunk: the chunk id itself when it is a UUID.

    Qdrant accepts only UUIDs and unsigned integers as ids; other ids map to a
    stable uuid5, and the original id stays in the payload (``chunk_id``), which
    is what hits report.
    """
    try:
        return str(uuid.UUID(chunk_id))
    except ValueError:
        return str(uuid.uuid5(_ID_NAMESPACE, chunk_id))


def collection_name(name: str) -> str:
    """Return ``name`` if it is a valid Qdrant collection name.

    Raises:
        CollectionNameError: naming the bad value.
    """
    try:
        return validate_collection_name(name)
    except ValueError as exc:
        raise CollectionNameError(str(exc)) from exc
