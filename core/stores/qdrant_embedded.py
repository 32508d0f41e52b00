"""The embedded default ``VectorStore``: Qdrant's own engine in-process (qdrant-edge-py).

Layout under ``root`` (``$RAGBOT_DATA_DIR/qdrant``)::

    <collection>/shard/            the Qdrant Edge shard (segments; older shards also a WAL)
    <collection>/collection.json   which embedding model and dimension built it
    <collection>/.lock             held (flock) by the process that has the collection open

Each collection has a named dense vector ``dense`` (cosine) and a named sparse
vector ``bm25`` with the IDF modifier, so sparse scores are BM25.
A collection is open in one process at a time (an ``flock`` on ``<collection>/.lock``;
shards with a WAL are locked by the engine too). A second process gets
``StoreUnavailableError`` with a hint, never the raw lock error.

Durability and size: new shards have no write-ahead log; every write is flushed
before ``upsert``/``delete`` return, so it is on disk when they do, and a steady
re-sync keeps the store near its clean size (a WAL kept up to 64 MB of segments
beside an 8 MB store). Shards made earlier keep their WAL and still work.

Faults (see ``core/stores/edge_guard.py``): every engine failure, a Rust panic
included, becomes a ``StoreError``; a write is refused with ``StoreFullError``
when the disk cannot take it; a write into a collection whose folder was deleted
under the running process fails instead of vanishing; a collection left half
made (shard present, ``collection.json`` absent: a kill or a full disk while it
was being created) is removed and made again by the next ``ensure_collection``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import shutil
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from core.errors import (
    CollectionNotFoundError,
    EmbeddingModelMismatchError,
    StoreError,
    StoreUnavailableError,
)
from core.models import DocumentChunk, EmbeddingResponse, RetrievalRequest
from core.protocols import CollectionInfo, DocumentState, Hit, HybridHits, StoreHealth
from core.stores.edge_guard import (
    LOCKED,
    MIB,
    NEW_SHARD_BYTES,
    FolderLock,
    SpaceCheck,
    engine_call,
    folder_identity,
    free_bytes,
    is_panic,
    rule_for,
    to_store_error,
    write_json_durably,
)
from core.stores.ids import collection_name, point_id
from core.stores.points import DOCUMENT_FIELDS, DocumentGroups, vector_embeddings

DENSE = "dense"
SPARSE = "bm25"
KEYWORD_FIELDS = ("source_document", "section", "tags", "url")
_SCROLL_PAGE = 1000

log = logging.getLogger(__name__)


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
        #: (device, inode) of each open shard's folder, to notice it being deleted under us.
        self._folders: dict[str, tuple[int, int] | None] = {}
        #: Open shards without a WAL: each write is flushed before it returns.
        self._no_wal: set[str] = set()
        self._space = SpaceCheck()
        self._locks: dict[str, FolderLock] = {}
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
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise StoreUnavailableError(
                f"{meta_path} is unreadable ({exc}): delete the folder {meta_path.parent} "
                "and run `ragbot ingest` again"
            ) from exc
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
            path = self._dir(name) / "shard"
            lock = self._lock(name)
            try:
                shard = engine_call("opening the knowledge base", path.parent, qe.EdgeShard.load, str(path))
            except BaseException:
                lock.release()
                raise
            self._opened(name, shard)
            return shard

    def _lock(self, name: str) -> FolderLock:
        """Hold the collection's lock (another process gets the "open in another process" error)."""
        lock = self._locks.setdefault(name, FolderLock(self._dir(name)))
        lock.acquire()
        return lock

    def _opened(self, name: str, shard: Any) -> None:
        path = self._dir(name) / "shard"
        self._shards[name] = shard
        self._folders[name] = folder_identity(path)
        if not (path / "wal").exists():
            self._no_wal.add(name)

    def _writable(self, name: str, action: str) -> Any:
        """The shard, once it is known that a write to it can persist.

        Raises:
            StoreUnavailableError: the collection's folder was deleted or replaced while open.
            StoreFullError: not enough free disk space.
        """
        shard = self._shard(name)
        self._check_folder(name, action)
        self._space.require(self._dir(name) / "shard", action=action)
        return shard

    def _check_folder(self, name: str, action: str) -> None:
        """Raise when the open collection's folder was deleted or replaced under this process."""
        path = self._dir(name) / "shard"
        if name in self._shards and folder_identity(path) != self._folders.get(name):
            error = StoreUnavailableError(
                f"{action} failed: the knowledge base folder {path.parent} was deleted or replaced while "
                "ragbot was running, so nothing can be saved in it. Restart ragbot (`ragbot serve`), "
                "then run `ragbot ingest` again"
            )
            log.error("%s", error)
            raise error

    async def _write(self, name: str, action: str, operation: Any) -> None:
        """Apply one update; on a shard without WAL it is flushed before this returns."""
        shard = self._writable(name, action)
        folder = self._dir(name)

        def apply() -> None:
            engine_call(action, folder, shard.update, operation)
            if name in self._no_wal:
                engine_call(action, folder, shard.flush)

        # Off the event loop: a serving process keeps answering during an ingest.
        await asyncio.to_thread(apply)

    def _create(self, name: str, dimension: int) -> Any:
        """Create the shard of a new collection, removing a half-made one first."""
        path = self._dir(name) / "shard"
        action = f"creating collection {name!r}"
        if path.exists():
            self._discard_unfinished(name, path)
        self._space.require(path, action=action, extra=NEW_SHARD_BYTES)
        config = qe.EdgeConfig(
            vectors={DENSE: qe.EdgeVectorParams(size=dimension, distance=qe.Distance.Cosine)},
            sparse_vectors={SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
            wal_enabled=False,
        )
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise to_store_error(exc, action=action, folder=path.parent) from exc
        shard = engine_call(action, path.parent, qe.EdgeShard.create, str(path), config)
        try:
            for field in KEYWORD_FIELDS:
                index = qe.UpdateOperation.create_field_index(field, qe.PayloadSchemaType.Keyword)
                engine_call(action, path.parent, shard.update, index)
            engine_call(action, path.parent, shard.flush)
        except BaseException:
            self._drop_shard(shard, path)
            raise
        self._space.forget(path)
        return shard

    def _discard_unfinished(self, name: str, path: Path) -> None:
        """Remove a shard left without ``collection.json`` by an interrupted create.

        Raises:
            StoreUnavailableError: another process holds it (it is being created right now),
                or it holds chunks, so it is not an interrupted create (the model is unknown).
        """
        try:
            shard = qe.EdgeShard.load(str(path))
        except BaseException as exc:
            if not (isinstance(exc, Exception) or is_panic(exc)):
                raise
            if rule_for(exc) is LOCKED:
                raise to_store_error(exc, action="creating the collection", folder=path.parent) from exc
            shard = None  # unreadable: certainly unfinished
        if shard is not None:
            points = engine_call("checking an unfinished collection", path.parent, shard.info).points_count
            shard.close()
            if points:
                raise StoreUnavailableError(
                    f"{path.parent} holds {points} chunks but no collection.json, so which embedding "
                    f"model built them is unknown: delete {path.parent} and run `ragbot ingest` again"
                )
        log.warning("removing the half-made collection %r in %s (its creation was interrupted) "
                    "and creating it again", name, path.parent)
        self._drop_shard(None, path)

    def _drop_shard(self, shard: Any, path: Path) -> None:
        if shard is not None:
            try:
                shard.close()
            except BaseException as exc:  # already failing: the first error is the one to report
                if not (isinstance(exc, Exception) or is_panic(exc)):
                    raise
        shutil.rmtree(path, ignore_errors=True)
        self._space.forget(path)

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
        await asyncio.to_thread(self._create_collection, name, model_id, dimension)

    def _create_collection(self, name: str, model_id: str, dimension: int) -> None:
        """Create the shard, then ``collection.json``, holding the collection's lock (worker thread)."""
        folder = self._dir(name)
        with self._open_lock:
            if name in self._shards:
                return  # created meanwhile by another task
            lock = self._lock(name)
            try:
                shard = self._create(name, dimension)
                try:
                    # Written last: a folder without it is an interrupted create, not a collection.
                    meta = {"model_id": model_id, "dimension": dimension}
                    write_json_durably(folder / "collection.json", meta)
                except OSError as exc:
                    self._drop_shard(shard, folder / "shard")
                    raise to_store_error(exc, action=f"creating collection {name!r}", folder=folder) from exc
            except BaseException:
                lock.release()
                raise
            self._opened(name, shard)
            self._info[name] = (model_id, dimension)

    async def collection_info(self, name: str) -> CollectionInfo | None:
        self._check_open()
        stored = self._read_meta(name)
        if stored is None:
            return None
        shard = self._shard(name)
        # /healthz and `ragbot doctor` ask this: a deleted folder must not look like a healthy one.
        self._check_folder(name, "reading the collection")
        points = engine_call("counting chunks", self._dir(name), shard.info).points_count
        return CollectionInfo(name=name, model_id=stored[0], dimension=stored[1], points=points)

    async def upsert(
        self, name: str, chunks: Sequence[DocumentChunk], embeddings: Sequence[EmbeddingResponse]
    ) -> None:
        self._shard(name)
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
            await self._write(name, f"saving {len(points)} chunks", qe.UpdateOperation.upsert_points(points))

    async def delete(self, name: str, chunk_ids: Sequence[str]) -> None:
        self._shard(name)
        if chunk_ids:
            operation = qe.UpdateOperation.delete_points([point_id(c) for c in chunk_ids])
            await self._write(name, f"removing {len(chunk_ids)} chunks", operation)

    async def documents(self, name: str) -> dict[str, DocumentState]:
        shard = self._shard(name)
        grouped = DocumentGroups()
        offset: Any = None
        while True:
            records, offset = await asyncio.to_thread(
                engine_call, "listing documents", self._dir(name), shard.scroll,
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
        # Off the event loop: on a large collection a search takes milliseconds, during which
        # Slack and Discord heartbeats and the control socket must keep being served.
        results = await asyncio.to_thread(
            engine_call, f"searching collection {name!r}", self._dir(name), shard.query_batch,
            qe.QueryBatchRequest(queries),
        )
        dense_hits = [self._hit(name, p) for p in results[0]]
        sparse_hits = [self._hit(name, p) for p in results[1]] if len(results) > 1 else []
        return HybridHits(dense=dense_hits, sparse=sparse_hits)

    def _hit(self, name: str, point: Any) -> Hit:
        payload = point.payload or {}
        if "chunk_id" not in payload:
            raise StoreUnavailableError(
                f"searching collection {name!r} failed: a stored chunk has lost its text, so the "
                f"knowledge base in {self._dir(name)} looks damaged; delete that folder and run "
                "`ragbot ingest` again"
            )
        return Hit(str(payload["chunk_id"]), point.score, payload)

    async def optimize(self, name: str) -> bool:
        """Merge segments and build indexes (worth it after a large ingest)."""
        shard = self._writable(name, "optimizing")
        return bool(await asyncio.to_thread(engine_call, "optimizing", self._dir(name), shard.optimize))

    async def flush(self) -> None:
        """Persist pending writes of every open collection."""
        for name, shard in list(self._shards.items()):
            await asyncio.to_thread(engine_call, "saving", self._dir(name), shard.flush)

    async def health(self) -> StoreHealth:
        """Whether the store folder is there, the open collections still on disk, and space left.

        Cheap (a few ``stat`` calls), for ``/healthz`` and ``ragbot doctor``.
        """
        if self._closed:
            return StoreHealth(ok=False, writable=False, detail="the vector store is closed")
        lost = [name for name in self._shards
                if folder_identity(self._dir(name) / "shard") != self._folders.get(name)]
        free = free_bytes(self.root)
        if lost:
            detail = (f"the folder of collection(s) {', '.join(map(repr, lost))} in {self.root} was deleted "
                      "while ragbot was running: answers come from memory and nothing new can be saved; "
                      "restart ragbot, then run `ragbot ingest` again")
            return StoreHealth(ok=False, writable=False, detail=detail, free_bytes=free)
        if not self.root.is_dir():
            detail = f"no knowledge base folder at {self.root}: run `ragbot ingest PATH`"
            return StoreHealth(ok=False, writable=True, detail=detail, free_bytes=free)
        if free < self._space.reserve:
            detail = (f"only {free / MIB:.0f} MB free on the disk holding {self.root}: answers work, "
                      "ingests are refused until space is freed")
            return StoreHealth(ok=True, writable=False, detail=detail, free_bytes=free)
        return StoreHealth(ok=True, writable=True, detail=f"embedded Qdrant in {self.root}", free_bytes=free)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        shards, self._shards = list(self._shards.items()), {}
        for name, shard in shards:
            # Failures are logged by engine_call; what was written is on disk already (flushed or in the WAL).
            with contextlib.suppress(StoreError):
                engine_call("saving at close", self._dir(name), shard.flush)
            with contextlib.suppress(StoreError):
                engine_call("closing", self._dir(name), shard.close)
        for lock in self._locks.values():
            lock.release()
