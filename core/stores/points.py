"""What every store checks before it writes: each chunk and its vector as spec 003's VectorEmbedding."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from core.errors import EmbeddingModelMismatchError
from core.models import DocumentChunk, EmbeddingResponse, VectorEmbedding
from core.protocols import DocumentState


def vector_embeddings(
    collection: str, *, model_id: str, dimension: int,
    chunks: Sequence[DocumentChunk], embeddings: Sequence[EmbeddingResponse],
) -> list[VectorEmbedding]:
    """Map each chunk and its embedding onto a VectorEmbedding, all checked before any write.

    Rules (spec 003): the vector's dimension is the collection's, the text is not empty and
    ``chunk_index`` is 0 or more.

    Raises:
        ValueError: chunks and embeddings differ in length, or a chunk breaks a rule.
        EmbeddingModelMismatchError: a vector's dimension is not the collection's.
    """
    if len(chunks) != len(embeddings):
        raise ValueError(f"{len(chunks)} chunks but {len(embeddings)} embeddings")
    points: list[VectorEmbedding] = []
    for chunk, emb in zip(chunks, embeddings, strict=True):
        if len(emb.embedding_vector) != dimension:
            raise EmbeddingModelMismatchError(
                collection=collection, stored_model=model_id, stored_dim=dimension,
                model=emb.model_used, dim=len(emb.embedding_vector),
            )
        try:
            points.append(VectorEmbedding.of(chunk, emb, dimension=dimension))
        except ValidationError as exc:
            first = exc.errors()[0]
            raise ValueError(f"chunk {chunk.source_document}#{chunk.chunk_index} cannot be stored: "
                             f"{first['loc'][0]}: {first['msg']}") from None
    return points


#: The payload fields ``VectorStore.documents`` reads.
DOCUMENT_FIELDS = ("source_document", "content_hash", "chunk_id", "title", "url", "section", "chunk_index")


class DocumentGroups:
    """Stored payloads grouped per source document, as ``VectorStore.documents`` returns them."""

    def __init__(self) -> None:
        self._docs: dict[str, tuple[str, set[str], dict[str, str], list[tuple[int, str]]]] = {}

    def add(self, payload: dict[str, Any], point_id: Any) -> None:
        """Count one stored point (its payload holds at least DOCUMENT_FIELDS)."""
        _, ids, page, sections = self._docs.setdefault(
            str(payload.get("source_document", "")), (str(payload.get("content_hash", "")), set(), {}, []))
        ids.add(str(payload.get("chunk_id", point_id)))
        page.setdefault("title", str(payload.get("title") or ""))
        page.setdefault("url", str(payload.get("url") or ""))
        sections.append((int(payload.get("chunk_index") or 0), str(payload.get("section") or "")))

    def states(self) -> dict[str, DocumentState]:
        """One DocumentState per document; ``sections`` in chunk order, each once."""
        return {
            name: DocumentState(
                content_hash, frozenset(ids), title=page["title"], url=page["url"],
                sections=tuple(dict.fromkeys(s for _, s in sorted(sections) if s)))
            for name, (content_hash, ids, page, sections) in self._docs.items()
        }
