"""A VectorStore on a Qdrant server (self-hosted or Qdrant Cloud), through ``AsyncQdrantClient``.

When ``QDRANT_URL`` is set this backend replaces the embedded engine of
``core/stores/qdrant_embedded.py``; both store the same things: a named dense vector
``"dense"`` (cosine), a named sparse vector ``"bm25"`` (IDF modifier, so the
server weights terms by how rare they are in the collection), the chunk's
payload, and point id = chunk id. The embedding model that built a collection
is recorded in the collection's metadata (needs Qdrant >= 1.16) and checked on
every ``ensure_collection`` and ``search``.

Cluster options (``RAGBOT_QDRANT_*``) apply only when a collection is created;
changing them later does not reshape an existing collection:

- ``shard_number``: how many shards the collection is split into. More shards
  spread points and search work over more nodes; on a single node one shard
  per CPU core at most is useful. Default (None): the server's default (1 per node).
- ``replication_factor``: copies of each shard on distinct nodes. 2 or more lets
  a cluster keep serving when a node is down; it needs at least that many nodes.
- ``write_consistency_factor``: how many replicas must confirm a write before
  it is acknowledged (at most ``replication_factor``). Higher is safer, slower.
- ``on_disk``: keep dense vectors, the sparse index and payloads on disk
  (memory-mapped) instead of in RAM, for corpora larger than memory, at some
  cost in query latency.

Keyword payload indexes on ``source_document``, ``section``, ``tags`` and ``url``
keep filtered searches fast on a server. ``url=":memory:"`` runs qdrant-client's
local in-process mode (exact search, no payload indexes), for tests.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from typing import Any, TypeVar

from pydantic import SecretStr
from qdrant_client import AsyncQdrantClient, models
from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse
from qdrant_client.local.async_qdrant_local import AsyncQdrantLocal

from core.errors import (
    CollectionNotFoundError,
    ConfigurationError,
    EmbeddingModelMismatchError,
    StoreError,
    StoreUnavailableError,
)
from core.models import DocumentChunk, EmbeddingResponse, RetrievalRequest
from core.protocols import CollectionInfo, DocumentState, Hit, HybridHits, StoreHealth
from core.settings import Settings
from core.stores.ids import collection_name, point_id
from core.stores.points import DOCUMENT_FIELDS, DocumentGroups, vector_embeddings

DENSE = "dense"
SPARSE = "bm25"
#: Key of ragbot's entry in the collection metadata.
META_KEY = "ragbot"
INDEXED_FIELDS = ("source_document", "section", "tags", "url")
#: Points per upsert request: keeps each request well under the server's 32 MB body limit.
UPSERT_BATCH = 256
SCROLL_PAGE = 1000
#: Seconds ``health()`` waits for the server.
HEALTH_TIMEOUT = 5.0
#: Namespace for turning chunk ids that are not UUIDs into stable point ids.

T = TypeVar("T")


def build_filter(filters: dict[str, Any] | None) -> models.Filter | None:
    """Translate ``RetrievalRequest.filters`` into a Qdrant filter (all fields must match).

    Args:
        filters: field -> value or list of values; a list matches any of them, and an
            array payload field (``tags``) matches when any element matches.

    Returns:
        The filter, or None when there is nothing to filter on.
    """
    if not filters:
        return None
    conditions: list[models.Condition] = []
    for key, wanted in filters.items():
        match: models.Match
        if isinstance(wanted, list):
            match = models.MatchAny(any=[str(v) for v in wanted])
        elif isinstance(wanted, bool):
            match = models.MatchValue(value=wanted)
        else:
            match = models.MatchAny(any=[wanted])
        conditions.append(models.FieldCondition(key=key, match=match))
    return models.Filter(must=conditions)


class QdrantServerStore:
    """VectorStore on a Qdrant server: named dense + sparse (IDF) vectors, model recorded.

    Raises:
        StoreUnavailableError: closed, unreachable, or the API key was refused.
        CollectionNotFoundError: the collection does not exist.
        EmbeddingModelMismatchError: model or dimension differs from the collection's.
    """

    def __init__(
        self,
        *,
        url: str,
        api_key: SecretStr | None = None,
        shard_number: int | None = None,
        replication_factor: int | None = None,
        write_consistency_factor: int | None = None,
        on_disk: bool = False,
        timeout: int | None = None,
        client: AsyncQdrantClient | None = None,
    ) -> None:
        """Connect lazily to the server (nothing is sent until the first call).

        Args:
            url: server URL such as ``http://localhost:6333``, or ``":memory:"``.
            api_key: Qdrant API key (Qdrant Cloud), or None.
            shard_number: shards per new collection (None: server default).
            replication_factor: copies of each shard (None: server default).
            write_consistency_factor: replicas that must confirm a write (None: server default).
            on_disk: keep vectors, sparse index and payloads on disk for new collections.
            timeout: request timeout in seconds (None: the client's default).
            client: an already built client (tests); the store closes it on ``close()``.

        Raises:
            ConfigurationError: an empty url, or a write consistency above the replication factor.
        """
        if not url.strip():
            raise ConfigurationError("QDRANT_URL is empty: set it to http(s)://host:6333 or ':memory:'")
        if (
            write_consistency_factor is not None
            and replication_factor is not None
            and write_consistency_factor > replication_factor
        ):
            raise ConfigurationError(
                f"qdrant_write_consistency_factor {write_consistency_factor} exceeds "
                f"qdrant_replication_factor {replication_factor}"
            )
        self.url = url
        self._shard_number = shard_number
        self._replication_factor = replication_factor
        self._write_consistency_factor = write_consistency_factor
        self._on_disk = on_disk
        if client is None:
            if url == ":memory:":
                client = AsyncQdrantClient(location=":memory:")
            else:
                # check_compatibility would probe the server from a background thread at
                # construction time and only warn; errors surface on the first real call.
                client = AsyncQdrantClient(
                    url=url,
                    api_key=api_key.get_secret_value() if api_key else None,
                    timeout=timeout,
                    check_compatibility=False,
                )
        self._client = client
        # Local mode ignores payload indexes and warns when asked to build them.
        self._local = url == ":memory:" or isinstance(getattr(client, "_client", None), AsyncQdrantLocal)
        self._identities: dict[str, tuple[str, int]] = {}
        self._closed = False

    @classmethod
    def from_settings(cls, settings: Settings) -> QdrantServerStore:
        """Build the store from ``QDRANT_URL``, ``QDRANT_API_KEY`` and ``RAGBOT_QDRANT_*``.

        Args:
            settings: the loaded settings; ``qdrant_url`` must be set.

        Returns:
            A store that connects on first use.

        Raises:
            ConfigurationError: ``QDRANT_URL`` is not set.
        """
        if not settings.qdrant_url:
            raise ConfigurationError("QDRANT_URL is not set: the Qdrant server backend needs it")
        return cls(
            url=settings.qdrant_url,
            api_key=settings.qdrant_api_key,
            shard_number=settings.qdrant_shard_number,
            replication_factor=settings.qdrant_replication_factor,
            write_consistency_factor=settings.qdrant_write_consistency_factor,
            on_disk=settings.qdrant_on_disk,
        )

    # ----------------------------------------------------------------- helpers

    async def _call(self, name: str, action: str, awaitable: Awaitable[T]) -> T:
        """Await one client call, translating its failures into the StoreError tree."""
        try:
            return await awaitable
        except UnexpectedResponse as exc:
            if exc.status_code == 404:
                self._identities.pop(name, None)
                raise CollectionNotFoundError(
                    f"collection {name!r} does not exist on {self.url}: run `ragbot ingest` first"
                ) from exc
            if exc.status_code in (401, 403):
                raise StoreUnavailableError(
                    f"Qdrant at {self.url} refused the API key ({exc.status_code}) during {action}: "
                    "check QDRANT_API_KEY"
                ) from exc
            if exc.status_code is not None and exc.status_code >= 500:
                raise StoreUnavailableError(
                    f"Qdrant at {self.url} failed during {action} on {name!r}: "
                    f"{exc.status_code} {exc.reason_phrase}"
                ) from exc
            raise StoreError(
                f"Qdrant at {self.url} rejected {action} on {name!r}: "
                f"{exc.status_code} {exc.content[:300]!r}"
            ) from exc
        except ResponseHandlingException as exc:
            raise StoreUnavailableError(
                f"Qdrant at {self.url} is unreachable during {action}: {exc.source!r}"
            ) from exc
        except ValueError as exc:
            # Local mode reports a missing collection as ValueError("Collection x not found").
            if self._local and "not found" in str(exc):
                self._identities.pop(name, None)
                raise CollectionNotFoundError(
                    f"collection {name!r} does not exist: run `ragbot ingest` first"
                ) from exc
            raise
        except RuntimeError as exc:
            if self._local and "closed" in str(exc):
                raise StoreUnavailableError("the Qdrant store is closed") from exc
            raise

    def _check_open(self) -> None:
        if self._closed:
            raise StoreUnavailableError(f"the Qdrant store for {self.url} is closed")

    async def _identity(self, name: str) -> tuple[str, int]:
        """Return the (model_id, dimension) recorded for ``name``, cached after the first read."""
        self._check_open()
        collection_name(name)
        cached = self._identities.get(name)
        if cached is not None:
            return cached
        info = await self._call(name, "get_collection", self._client.get_collection(name))
        identity = self._read_identity(name, info)
        self._identities[name] = identity
        return identity

    @staticmethod
    def _read_identity(name: str, info: models.CollectionInfo) -> tuple[str, int]:
        meta = (info.config.metadata or {}).get(META_KEY)
        vectors = info.config.params.vectors
        size = vectors[DENSE].size if isinstance(vectors, dict) and DENSE in vectors else None
        if not isinstance(meta, dict) or "model_id" not in meta or "dimension" not in meta:
            # Not created by ragbot, or by a server too old to keep collection metadata:
            # refusing is safer than mixing vectors from an unknown model.
            raise EmbeddingModelMismatchError(
                collection=name, stored_model="unknown (no ragbot metadata; Qdrant >= 1.16 needed)",
                stored_dim=size or 0, model="?", dim=0,
            )
        return str(meta["model_id"]), int(meta["dimension"])

    async def _create(self, name: str, model_id: str, dimension: int) -> None:
        created = await self._call(name, "create_collection", self._client.create_collection(
            name,
            vectors_config={
                DENSE: models.VectorParams(
                    size=dimension, distance=models.Distance.COSINE, on_disk=self._on_disk or None
                )
            },
            sparse_vectors_config={
                SPARSE: models.SparseVectorParams(
                    index=models.SparseIndexParams(on_disk=self._on_disk),
                    modifier=models.Modifier.IDF,
                )
            },
            shard_number=self._shard_number,
            replication_factor=self._replication_factor,
            write_consistency_factor=self._write_consistency_factor,
            on_disk_payload=self._on_disk or None,
            metadata={META_KEY: {"model_id": model_id, "dimension": dimension}},
        ))
        if not created:
            raise StoreError(f"Qdrant at {self.url} did not create collection {name!r}")
        if not self._local:
            for field in INDEXED_FIELDS:
                await self._call(name, "create_payload_index", self._client.create_payload_index(
                    name, field, field_schema=models.PayloadSchemaType.KEYWORD, wait=True
                ))

    @staticmethod
    def _mismatch(name: str, stored: tuple[str, int], model_id: str, dimension: int) -> None:
        if stored != (model_id, dimension):
            raise EmbeddingModelMismatchError(
                collection=name, stored_model=stored[0], stored_dim=stored[1],
                model=model_id, dim=dimension,
            )

    # ----------------------------------------------------------------- VectorStore

    async def ensure_collection(self, name: str, *, model_id: str, dimension: int) -> None:
        """Create the collection, or check that it was built by the same model.

        Args:
            name: collection name.
            model_id: the embedder's ``model_id``.
            dimension: the embedder's dense dimension.

        Raises:
            EmbeddingModelMismatchError: the collection exists with another model or dimension.
            StoreUnavailableError: closed or unreachable.
        """
        if dimension < 1:
            raise ValueError(f"dimension {dimension} must be positive")
        try:
            stored = await self._identity(name)
        except CollectionNotFoundError:
            try:
                await self._create(name, model_id, dimension)
            except StoreError as exc:
                # Another process created it first (409): fall through and compare models.
                cause = exc.__cause__
                if not (isinstance(cause, UnexpectedResponse) and cause.status_code == 409):
                    raise
                stored = await self._identity(name)
            else:
                stored = (model_id, dimension)
                self._identities[name] = stored
        self._mismatch(name, stored, model_id, dimension)

    async def collection_info(self, name: str) -> CollectionInfo | None:
        """Return the collection's identity and exact point count, or None when it does not exist.

        Raises:
            StoreUnavailableError: closed or unreachable.
        """
        try:
            model_id, dimension = await self._identity(name)
            counted = await self._call(name, "count", self._client.count(name, exact=True))
        except CollectionNotFoundError:
            return None
        return CollectionInfo(name=name, model_id=model_id, dimension=dimension, points=counted.count)

    async def upsert(
        self,
        name: str,
        chunks: Sequence[DocumentChunk],
        embeddings: Sequence[EmbeddingResponse],
    ) -> None:
        """Insert or replace chunks with their vectors, in batches of ``UPSERT_BATCH``.

        Raises:
            ValueError: chunks and embeddings differ in length, or a chunk breaks a VectorEmbedding rule.
            EmbeddingModelMismatchError: a dense vector has the wrong dimension.
            CollectionNotFoundError: the collection does not exist.
        """
        model_id, dimension = await self._identity(name)
        vector_embeddings(name, model_id=model_id, dimension=dimension, chunks=chunks, embeddings=embeddings)
        points: list[models.PointStruct] = []
        for chunk, emb in zip(chunks, embeddings, strict=True):
            vector: dict[str, Any] = {DENSE: emb.embedding_vector}
            if emb.sparse_vector is not None and emb.sparse_vector.indices:
                vector[SPARSE] = models.SparseVector(
                    indices=emb.sparse_vector.indices, values=emb.sparse_vector.values
                )
            points.append(models.PointStruct(id=point_id(chunk.chunk_id), vector=vector,
                                             payload=chunk.payload()))
        for start in range(0, len(points), UPSERT_BATCH):
            batch = points[start:start + UPSERT_BATCH]
            await self._call(name, "upsert", self._client.upsert(name, points=batch, wait=True))

    async def delete(self, name: str, chunk_ids: Sequence[str]) -> None:
        """Remove chunks by id; unknown ids are ignored.

        Raises:
            CollectionNotFoundError: the collection does not exist.
        """
        await self._identity(name)
        if not chunk_ids:
            return
        selector = models.PointIdsList(points=[point_id(c) for c in chunk_ids])
        await self._call(name, "delete", self._client.delete(name, points_selector=selector, wait=True))

    async def documents(self, name: str) -> dict[str, DocumentState]:
        """Map each stored source_document to its content hash and chunk ids, scrolling in pages.

        Raises:
            CollectionNotFoundError: the collection does not exist.
        """
        await self._identity(name)
        grouped = DocumentGroups()
        offset: models.ExtendedPointId | None = None
        while True:
            records, offset = await self._call(name, "scroll", self._client.scroll(
                name, limit=SCROLL_PAGE, offset=offset, with_vectors=False,
                with_payload=models.PayloadSelectorInclude(include=list(DOCUMENT_FIELDS)),
            ))
            for record in records:
                grouped.add(record.payload or {}, record.id)
            if offset is None:
                break
        return grouped.states()

    async def search(self, request: RetrievalRequest) -> HybridHits:
        """Return up to ``request.depth`` dense and sparse hits in one batch request, honouring filters.

        Raises:
            EmbeddingModelMismatchError: the request's model or dimension differs.
            CollectionNotFoundError: the collection does not exist.
        """
        name, candidates = request.collection_name, request.depth
        model_id, dimension = await self._identity(name)
        if (request.embedding_model and request.embedding_model != model_id) or (
            len(request.query_embedding) != dimension
        ):
            raise EmbeddingModelMismatchError(
                collection=name, stored_model=model_id, stored_dim=dimension,
                model=request.embedding_model or "?", dim=len(request.query_embedding),
            )
        query_filter = build_filter(request.filters)
        requests = [models.QueryRequest(
            query=request.query_embedding, using=DENSE, filter=query_filter,
            limit=candidates, with_payload=True,
        )]
        sparse = request.sparse_embedding
        if sparse is not None and sparse.indices:
            requests.append(models.QueryRequest(
                query=models.SparseVector(indices=sparse.indices, values=sparse.values),
                using=SPARSE, filter=query_filter, limit=candidates, with_payload=True,
            ))
        responses = await self._call(
            name, "query_batch_points", self._client.query_batch_points(name, requests=requests)
        )
        dense_hits = [_hit(p) for p in responses[0].points]
        sparse_hits = [_hit(p) for p in responses[1].points] if len(responses) > 1 else []
        return HybridHits(dense=dense_hits, sparse=sparse_hits)

    async def health(self) -> StoreHealth:
        """Whether the server answers a collection listing within ``HEALTH_TIMEOUT`` seconds."""
        if self._closed:
            return StoreHealth(ok=False, writable=False, detail=f"the Qdrant store for {self.url} is closed")
        try:
            await asyncio.wait_for(
                self._call("", "get_collections", self._client.get_collections()), HEALTH_TIMEOUT
            )
        except (StoreError, TimeoutError, ValueError, RuntimeError) as exc:
            reason = str(exc) or f"no answer in {HEALTH_TIMEOUT:g} s"
            return StoreHealth(ok=False, writable=False, detail=f"Qdrant at {self.url}: {reason}")
        return StoreHealth(ok=True, writable=True, detail=f"Qdrant at {self.url}")

    async def close(self) -> None:
        """Close the client's connections; later calls raise StoreUnavailableError."""
        if self._closed:
            return
        self._closed = True
        await self._client.close()


def _hit(point: models.ScoredPoint) -> Hit:
    payload = dict(point.payload or {})
    return Hit(chunk_id=str(payload.get("chunk_id", point.id)), score=float(point.score), payload=payload)
