"""The embedded default ``VectorStore``: Qdrant's own engine in-process (qdrant-edge-py).

Layout under ``root`` (``$RAGBOT_DATA_DIR/qdrant``)::

    <collection>/shard/            the Qdrant Edge shard (segments + WAL)
    <collection>/collection.json   which embedding model and dimension built it

Each collection has a named dense vector ``dense`` (cosine) and a named sparse
vector ``bm25`` with the IDF modifier, so sparse scores are BM25. qdrant-edge
locks a shard's WAL: one process at a time may open it. A second process gets
``StoreUnavailableError`` with a hint, never the raw lock error.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from core.errors import (
    CollectionNotFoundError,
    EmbeddingModelMismatchError,
    StoreUnavailableError,
)
from core.models import DocumentChunk, EmbeddingResponse, RetrievalRequest
from core.protocols import CollectionInfo, DocumentState, Hit, HybridHits
from core.stores.ids import collection_name, point_id
from core.stores.points import DOCUMENT_FIELDS, DocumentGroups, vector_embeddings

DENSE = "dense"
SPARSE = "bm25"
KEYWORD_FIELDS = ("source_document", "section", "tags", "url")
_SCROLL_PAGE = 1000


def build_filter(filters: dict[str, Any] | None) -> qe.Filter | None:
    """Translate ``{"field": value | [values]}`` into a Qdrant filter (all fields must match)."""
    if not filters:
        return None
    must: list[Any] = []
    for key, wanted in filters.items():
        if isinstance(wanted, list):
            must.append(qe.FieldCondition(key=key, match=qe.MatchAny(any=[str(v) for v in wanted])))
        else:
            must.append(qe.FieldCondition(key=key, match=qe.MatchValue(value=wanted)))
    return qe.Filter(must=must)


class EdgeVectorStore:
    """Collections stored as Qdrant Edge shards in folders under ``root``.

    Args:
        root: folder holding one sub-folder per collection.
    """

    def __init__(self, *, root: Path) -> None:
        self.root = Path(root)
        self._shards: dict[str, Any] = {}
        self._info: dict[str, tuple[str, int]] = {}
        # qdrant-edge serialises writes itself; this lock only guards opening shards
        # from several threads (ingest batches run in worker threads).
        self._open_lock = threading.Lock()
        self._closed = False

    # ------------------------------------------------------------------ internals
    def _dir(self, name: str) -> Path:
        return self.root / collection_name(name)

    def _check_open(self) -> None:
        if self._closed:
            raise StoreUnavailableError("the vector store is closed")

    def _read_meta(self, name: str) -> tuple[str, int] | None:
        if name in self._info:
            return self._info[name]
        meta_path = self._dir(name) / "collection.json"
        if not meta_path.exists():
            return None
        try:
            meta = json.loads(meta_path.read_text("utf-8"))
            info = (str(meta["model_id"]), int(meta["dimension"]))
        except (OSError, ValueError, KeyError) as exc:
            raise StoreUnavailableError(f"{meta_path} is unreadable: {exc}") from exc
        self._info[name] = info
        return info

    def _shard(self, name: str) -> Any:
        """Open (once) and return the shard of an existing collection."""
        self._check_open()
        shard = self._shards.get(name)
        if shard is not None:
            return shard
        with self._open_lock:
            if name in self._shards:
                return self._shards[name]
            if self._read_meta(name) is None:
                raise CollectionNotFoundError(
                    f"collection {name!r} does not exist in {self.root}: run `ragbot ingest PATH` first"
                )
            shard = self._load(self._dir(name) / "shard")
            self._shards[name] = shard
            return shard

    def _load(self, path: Path, config: Any = None) -> Any:
        try:
            if config is not None:
                return qe.EdgeShard.create(str(path), config)
            return qe.EdgeShard.load(str(path))
        except Exception as exc:  # qdrant-edge raises bare Exception for every failure
            if "WouldBlock" in str(exc):
                raise StoreUnavailableError(
                    f"the knowledge base in {path.parent} is open in another ragbot process "
                    "(is `ragbot serve` running? the CLI hands work to it when it is)"
                ) from exc
            raise StoreUnavailableError(f"cannot open the knowledge base in {path}: {exc}") from exc

    # ------------------------------------------------------------------ VectorStore
    async def ensure_collection(self, name: str, *, model_id: str, dimension: int) -> None:
        self._check_open()
        stored = self._read_meta(name)
        if stored is not None:
            if stored != (model_id, dimension):
                raise EmbeddingModelMismatchError(
                    collection=name, stored_model=stored[0], stored_dim=stored[1],
                    model=model_id, dim=dimension,
                )
            self._shard(name)
            return
        folder = self._dir(name)
        folder.mkdir(parents=True, exist_ok=True)
        config = qe.EdgeConfig(
            vectors={DENSE: qe.EdgeVectorParams(size=dimension, distance=qe.Distance.Cosine)},
            sparse_vectors={SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
        )
        with self._open_lock:
            shard = self._load(folder / "shard", config)
            for field in KEYWORD_FIELDS:
                shard.update(qe.UpdateOperation.create_field_index(field, qe.PayloadSchemaType.Keyword))
            self._shards[name] = shard
        # Written last: a folder without it is an interrupted create, and is not a collection.
        tmp = folder / "collection.json.tmp"
        tmp.write_text(json.dumps({"model_id": model_id, "dimension": dimension}), "utf-8")
        tmp.replace(folder / "collection.json")
        self._info[name] = (model_id, dimension)

    async def collection_info(self, name: str) -> CollectionInfo | None:
        self._check_open()
        stored = self._read_meta(name)
        if stored is None:
            return None
        points = self._shard(name).info().points_count
        return CollectionInfo(name=name, model_id=stored[0], dimension=stored[1], points=points)

    async def upsert(
        self, name: str, chunks: Sequence[DocumentChunk], embeddings: Sequence[EmbeddingResponse]
    ) -> None:
        shard = self._shard(name)
        model_id, dimension = self._info[name]
        vector_embeddings(name, model_id=model_id, dimension=dimension, chunks=chunks, embeddings=embeddings)
        points = []
        for chunk, emb in zip(chunks, embeddings, strict=True):
            vectors: dict[str, Any] = {DENSE: emb.embedding_vector}
            if emb.sparse_vector is not None and emb.sparse_vector.indices:
                vectors[SPARSE] = qe.SparseVector(
                    indices=emb.sparse_vector.indices, values=emb.sparse_vector.values
                )
            points.append(qe.Point(point_id(chunk.chunk_id), vectors, chunk.payload()))
        if points:
            # Upserting hundreds of points takes milliseconds: off the event loop so a
            # serving process keeps answering during an ingest.
            await asyncio.to_thread(shard.update, qe.UpdateOperation.upsert_points(points))

    async def delete(self, name: str, chunk_ids: Sequence[str]) -> None:
        shard = self._shard(name)
        if chunk_ids:
            await asyncio.to_thread(
                shard.update, qe.UpdateOperation.delete_points([point_id(c) for c in chunk_ids])
            )

    async def documents(self, name: str) -> dict[str, DocumentState]:
        shard = self._shard(name)
        grouped = DocumentGroups()
        offset: Any = None
        while True:
            records, offset = await asyncio.to_thread(
                shard.scroll,
                qe.ScrollRequest(offset=offset, limit=_SCROLL_PAGE, with_payload=list(DOCUMENT_FIELDS),
                                 with_vector=False)
            )
            for rec in records:
                grouped.add(rec.payload or {}, rec.id)
            if offset is None:
                break
        return grouped.states()

    async def search(self, request: RetrievalRequest) -> HybridHits:
        name = request.collection_name
        candidates = request.depth
        shard = self._shard(name)
        model_id, dimension = self._info[name]
        if (request.embedding_model and request.embedding_model != model_id) or len(
            request.query_embedding
        ) != dimension:
            raise EmbeddingModelMismatchError(
                collection=name, stored_model=model_id, stored_dim=dimension,
                model=request.embedding_model or "unknown", dim=len(request.query_embedding),
            )
        flt = build_filter(request.filters)
        queries = [
            qe.QueryRequest(
                limit=candidates, query=qe.Query.Nearest(request.query_embedding, using=DENSE),
                filter=flt, with_payload=True, with_vector=False,
            )
        ]
        sparse = request.sparse_embedding
        if sparse is not None and sparse.indices:
            queries.append(
                qe.QueryRequest(
                    limit=candidates,
                    query=qe.Query.Nearest(qe.SparseVector(sparse.indices, sparse.values), using=SPARSE),
                    filter=flt, with_payload=True, with_vector=False,
                )
            )
        try:
            # Off the event loop: on a large collection a search takes milliseconds, during which
            # Slack and Discord heartbeats and the control socket must keep being served.
            results = await asyncio.to_thread(shard.query_batch, qe.QueryBatchRequest(queries))
        except Exception as exc:
            raise StoreUnavailableError(f"search in collection {name!r} failed: {exc}") from exc
        dense_hits = [Hit(str(p.payload["chunk_id"]), p.score, p.payload) for p in results[0]]
        sparse_hits = (
            [Hit(str(p.payload["chunk_id"]), p.score, p.payload) for p in results[1]]
            if len(results) > 1 else []
        )
        return HybridHits(dense=dense_hits, sparse=sparse_hits)

    async def optimize(self, name: str) -> bool:
        """Merge segments and build indexes (worth it after a large ingest)."""
        return bool(await asyncio.to_thread(self._shard(name).optimize))

    async def flush(self) -> None:
        """Persist pending writes of every open collection."""
        for shard in list(self._shards.values()):
            await asyncio.to_thread(shard.flush)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        shards, self._shards = list(self._shards.values()), {}
        for shard in shards:
            shard.flush()
            shard.close()
