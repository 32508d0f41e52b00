"""Deterministic in-memory implementations of the Protocols, for tests and examples.

They behave like the real ones where tests can observe it (ordering, model
checks, one vote per user, first delivery only) and need no files, network or
model weights.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import defaultdict
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from core.errors import (
    CollectionNotFoundError,
    EmbeddingModelMismatchError,
    StoreUnavailableError,
)
from core.models import (
    AgentLogEntry,
    AgentResponse,
    ConversationTurn,
    DocumentChunk,
    EmbeddingRequest,
    EmbeddingResponse,
    EventType,
    Feedback,
    QueryStatus,
    ResponseState,
    ResponseStatus,
    RetrievalRequest,
    SparseVector,
    StatusChange,
    UserQuery,
    check_response_state,
    check_transition,
    utc_now,
)
from core.processes import OwnerAlive, current_owner, owner_alive
from core.protocols import (
    INTERRUPTED_ERROR,
    CollectionInfo,
    DocumentState,
    Generation,
    GenerationRequest,
    Hit,
    HybridHits,
    SearchFn,
    StoreHealth,
)
from core.stores.ids import collection_name
from core.stores.points import DocumentGroups, vector_embeddings

_WORD = re.compile(r"[a-z0-9]+")


def _term_id(term: str) -> int:
    return int.from_bytes(hashlib.blake2b(term.encode(), digest_size=4).digest(), "little")


class FakeEmbedder:
    """Hashes words into a small dense vector and a bag-of-words sparse vector."""

    def __init__(self, *, dimension: int = 32, model_id: str = "fake-hash-32") -> None:
        self._dimension = dimension
        self._model_id = model_id
        self.calls = 0

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dimension(self) -> int:
        return self._dimension

    def _vectors(self, text: str) -> EmbeddingResponse:
        words = _WORD.findall(text.lower()) or ["empty"]
        dense = [0.0] * self._dimension
        counts: dict[int, float] = defaultdict(float)
        for word in words:
            tid = _term_id(word)
            dense[tid % self._dimension] += 1.0
            counts[tid] += 1.0
        norm = math.sqrt(sum(v * v for v in dense)) or 1.0
        return EmbeddingResponse(
            embedding_vector=[v / norm for v in dense],
            sparse_vector=SparseVector(indices=list(counts), values=list(counts.values())),
            model_used=self._model_id,
        )

    async def embed_query(self, request: EmbeddingRequest) -> EmbeddingResponse:
        self.calls += 1
        return self._vectors(request.query_text)

    async def embed_documents(self, texts: Sequence[str]) -> list[EmbeddingResponse]:
        self.calls += 1
        return [self._vectors(t) for t in texts]


class InMemoryVectorStore:
    """A VectorStore over dicts: cosine for dense, dot product for sparse."""

    def __init__(self) -> None:
        self._collections: dict[str, CollectionInfo] = {}
        self._points: dict[str, dict[str, tuple[EmbeddingResponse, dict[str, Any]]]] = {}
        self.closed = False

    def _check_open(self) -> None:
        if self.closed:
            raise StoreUnavailableError("the vector store is closed")

    def _collection(self, name: str) -> dict[str, tuple[EmbeddingResponse, dict[str, Any]]]:
        self._check_open()
        if name not in self._points:
            raise CollectionNotFoundError(f"collection {name!r} does not exist: run `ragbot ingest` first")
        return self._points[name]

    async def ensure_collection(self, name: str, *, model_id: str, dimension: int) -> None:
        self._check_open()
        collection_name(name)
        info = self._collections.get(name)
        if info is None:
            self._collections[name] = CollectionInfo(name, model_id, dimension, 0)
            self._points[name] = {}
        elif (info.model_id, info.dimension) != (model_id, dimension):
            raise EmbeddingModelMismatchError(
                collection=name, stored_model=info.model_id, stored_dim=info.dimension,
                model=model_id, dim=dimension,
            )

    async def collection_info(self, name: str) -> CollectionInfo | None:
        self._check_open()
        info = self._collections.get(name)
        if info is None:
            return None
        return CollectionInfo(info.name, info.model_id, info.dimension, len(self._points[name]))

    async def upsert(
        self, name: str, chunks: Sequence[DocumentChunk], embeddings: Sequence[EmbeddingResponse]
    ) -> None:
        points = self._collection(name)
        info = self._collections[name]
        vector_embeddings(name, model_id=info.model_id, dimension=info.dimension, chunks=chunks,
                          embeddings=embeddings)
        for chunk, emb in zip(chunks, embeddings, strict=True):
            points[chunk.chunk_id] = (emb, chunk.payload())

    async def delete(self, name: str, chunk_ids: Sequence[str]) -> None:
        points = self._collection(name)
        for cid in chunk_ids:
            points.pop(cid, None)

    async def documents(self, name: str) -> dict[str, DocumentState]:
        grouped = DocumentGroups()
        for cid, (_, payload) in self._collection(name).items():
            grouped.add(payload, cid)
        return grouped.states()

    async def search(self, request: RetrievalRequest) -> HybridHits:
        name, candidates = request.collection_name, request.depth
        points = self._collection(name)
        info = self._collections[name]
        if (request.embedding_model and request.embedding_model != info.model_id) or (
            len(request.query_embedding) != info.dimension
        ):
            raise EmbeddingModelMismatchError(
                collection=name, stored_model=info.model_id, stored_dim=info.dimension,
                model=request.embedding_model or "?", dim=len(request.query_embedding),
            )
        dense: list[Hit] = []
        sparse: list[Hit] = []
        q_sparse = dict(
            zip(request.sparse_embedding.indices, request.sparse_embedding.values, strict=True)
        ) if request.sparse_embedding else {}
        for cid, (emb, payload) in points.items():
            if not _matches(payload, request.filters):
                continue
            cos = sum(a * b for a, b in zip(request.query_embedding, emb.embedding_vector, strict=True))
            dense.append(Hit(cid, cos, payload))
            if emb.sparse_vector and q_sparse:
                dot = sum(q_sparse.get(i, 0.0) * v
                          for i, v in zip(emb.sparse_vector.indices, emb.sparse_vector.values, strict=True))
                if dot > 0:
                    sparse.append(Hit(cid, dot, payload))
        dense.sort(key=lambda h: (-h.score, h.chunk_id))
        sparse.sort(key=lambda h: (-h.score, h.chunk_id))
        return HybridHits(dense=dense[:candidates], sparse=sparse[:candidates])

    async def health(self) -> StoreHealth:
        if self.closed:
            return StoreHealth(ok=False, writable=False, detail="the in-memory store is closed")
        detail = f"in memory, {len(self._collections)} collection(s)"
        return StoreHealth(ok=True, writable=True, detail=detail)

    async def close(self) -> None:
        self.closed = True


def _matches(payload: dict[str, Any], filters: dict[str, Any] | None) -> bool:
    for key, wanted in (filters or {}).items():
        have = payload.get(key)
        wanted_set = set(wanted) if isinstance(wanted, list) else {wanted}
        have_set = set(have) if isinstance(have, list) else {have}
        if not wanted_set & have_set:
            return False
    return True


class ScriptedGenerator:
    """A Generator that answers with scripted texts, citing ``[1]`` by default.

    ``script`` items are strings (the answer) or exceptions (raised). When the
    script runs out the last item repeats. ``search_queries`` makes it call the
    search tool first, like an LLM deciding to search.
    """

    def __init__(
        self,
        script: Sequence[str | BaseException] = ("The answer is in the docs [1].",),
        *,
        search_queries: Sequence[str] = (),
        name: str = "scripted",
    ) -> None:
        self.script = list(script)
        self.search_queries = list(search_queries)
        self.requests: list[GenerationRequest] = []
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    async def generate(self, request: GenerationRequest, *, search: SearchFn) -> Generation:
        self.requests.append(request)
        chunks = list(request.chunks)
        for q in self.search_queries:
            chunks.extend(c for c in await search(q, 5, None) if c not in chunks)
        item = self.script.pop(0) if len(self.script) > 1 else self.script[0]
        if isinstance(item, BaseException):
            raise item
        return Generation(text=item, chunks=chunks, model_used=self._name,
                          tool_calls=len(self.search_queries))


@dataclass(slots=True)
class StoredQuery:
    """One query as InMemoryStorage keeps it: the question, its status, its error and history."""

    query: UserQuery
    status: QueryStatus = QueryStatus.PENDING
    error: str | None = None
    history: list[StatusChange] = field(default_factory=list)
    response_state: ResponseState | None = None
    #: The process that created it (pid, start time), as SQLite's migration 0003 records.
    owner: tuple[int, str | None] = field(default_factory=current_owner)

    def enter(self, machine: Literal["query", "response"], status: str, error: str | None = None) -> None:
        """Append one history entry, now (``entered_at`` never goes backwards, as row ids in SQLite)."""
        at = max([utc_now(), *(c.entered_at for c in self.history)])
        self.history.append(StatusChange(machine=machine, status=status, entered_at=at, error=error))


def _check_aware(value: datetime | None, name: str) -> None:
    """Refuse a naive datetime as SqliteStore does: its instant would be a guess."""
    if value is not None and value.utcoffset() is None:
        raise ValueError(f"{name} {value.isoformat()} has no time zone; pass an aware datetime")


class InMemoryStorage:
    """ConversationStore, QueryStore, ActivityLog, FeedbackStore and EventLedger in dicts.

    Behaves like ``storage/sqlite.py:SqliteStore`` wherever a caller can tell (order,
    validation, error texts): tests/contracts/test_storage_contract.py runs both.
    """

    def __init__(self) -> None:
        self.turns: list[ConversationTurn] = []
        self.queries: dict[str, StoredQuery] = {}
        self.responses: dict[str, AgentResponse] = {}
        self.entries: list[AgentLogEntry] = []
        self._entry_ids: set[str] = set()
        self.votes: dict[tuple[str, str], Feedback] = {}
        #: (platform, event id) -> when it was first delivered.
        self.events: dict[tuple[str, str], datetime] = {}

    async def add_turn(self, turn: ConversationTurn) -> None:
        self.turns.append(turn)

    async def recent_turns(self, thread_id: str, *, limit: int) -> list[ConversationTurn]:
        if limit < 0:
            raise ValueError(f"limit {limit} must be 0 or more")
        mine = [t for t in self.turns if t.thread_id == thread_id]
        return mine[-limit:] if limit else []

    async def create_query(self, query: UserQuery) -> None:
        if query.query_id in self.queries:
            raise ValueError(f"query {query.query_id!r} already exists")
        stored = StoredQuery(query)
        stored.history.append(StatusChange(machine="query", status=QueryStatus.PENDING.value,
                                           entered_at=query.timestamp))
        self.queries[query.query_id] = stored

    async def set_query_status(
        self, query_id: str, status: QueryStatus, *, error: str | None = None
    ) -> None:
        stored = self.queries.get(query_id)
        if stored is None:
            raise ValueError(f"unknown query id {query_id!r}")
        new = QueryStatus(status)
        check_transition(stored.status, new)
        stored.status = new
        stored.enter("query", new.value, error)
        if error is not None:  # None keeps the error already stored, as SQLite's COALESCE does
            stored.error = error

    async def set_response_state(
        self, query_id: str, state: ResponseState, *, error: str | None = None
    ) -> None:
        stored = self.queries.get(query_id)
        if stored is None:
            raise ValueError(f"unknown query id {query_id!r}")
        new = ResponseState(state)
        check_response_state(stored.response_state, new)
        stored.response_state = new
        stored.enter("response", new.value, error)

    async def status_history(self, query_id: str) -> list[StatusChange]:
        stored = self.queries.get(query_id)
        return list(stored.history) if stored else []

    async def get_query_status(self, query_id: str) -> QueryStatus | None:
        stored = self.queries.get(query_id)
        return stored.status if stored else None

    async def get_query_error(self, query_id: str) -> str | None:
        stored = self.queries.get(query_id)
        return stored.error if stored else None

    async def save_response(self, response: AgentResponse) -> None:
        # Like the SQLite store's foreign key: a response belongs to a stored query.
        if response.query_id not in self.queries:
            raise ValueError(
                f"response {response.response_id!r} refers to query {response.query_id!r}, "
                "which was never stored: call create_query first"
            )
        self.responses[response.response_id] = response

    async def fail_interrupted(self, *, is_alive: OwnerAlive = owner_alive) -> int:
        open_ = (QueryStatus.PENDING, QueryStatus.PROCESSING)
        stuck = sorted((s for s in self.queries.values() if s.status in open_ and not is_alive(*s.owner)),
                       key=lambda s: s.query.timestamp)
        now = utc_now()
        for stored in stuck:
            stored.status, stored.error = QueryStatus.FAILED, INTERRUPTED_ERROR
            if stored.response_state is ResponseState.PROCESSING:
                stored.response_state = ResponseState.ERROR
                stored.enter("response", ResponseState.ERROR.value, INTERRUPTED_ERROR)
            stored.enter("query", QueryStatus.FAILED.value, INTERRUPTED_ERROR)
            await self.log(AgentLogEntry(
                timestamp=now, event_type=EventType.ERROR, query_id=stored.query.query_id,
                thread_id=stored.query.thread_id, query_text=stored.query.query_text,
                error_details=INTERRUPTED_ERROR,
            ))
        return len(stuck)

    async def log(self, entry: AgentLogEntry, *, durable: bool = True) -> None:
        if entry.entry_id in self._entry_ids:
            raise ValueError(f"log entry {entry.entry_id!r} already exists")
        self._entry_ids.add(entry.entry_id)
        self.entries.append(entry)

    async def export(
        self,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        event_type: EventType | None = None,
        thread_id: str | None = None,
        query_id: str | None = None,
    ) -> AsyncIterator[AgentLogEntry]:
        _check_aware(since, "since")
        _check_aware(until, "until")
        kind = EventType(event_type) if event_type is not None else None
        for e in sorted(self.entries, key=lambda e: (e.timestamp, e.entry_id)):
            if (since and e.timestamp < since) or (until and e.timestamp >= until):
                continue
            if (kind is not None and e.event_type is not kind) or (
                thread_id is not None and e.thread_id != thread_id
            ) or (query_id is not None and e.query_id != query_id):
                continue
            yield e

    async def record_feedback(self, feedback: Feedback) -> None:
        self.votes[(feedback.response_id, feedback.user_id)] = feedback

    async def export_feedback(self, *, since: datetime | None = None) -> AsyncIterator[Feedback]:
        _check_aware(since, "since")
        for f in sorted(self.votes.values(), key=lambda f: (f.timestamp, f.response_id, f.user_id)):
            if since is None or f.timestamp >= since:
                yield f

    async def first_delivery(self, platform: str, event_id: str) -> bool:
        key = (platform, event_id)
        if key in self.events:
            return False
        self.events[key] = utc_now()
        return True

    async def prune_events(self, *, before: datetime) -> int:
        _check_aware(before, "before")
        old = [key for key, received in self.events.items() if received < before]
        for key in old:
            del self.events[key]
        return len(old)


class FakeAnswerService:
    """An AnswerService returning canned responses; records what it was asked."""

    def __init__(self, *, text: str = "Ragbot answers from your docs [1].",
                 status: ResponseStatus = ResponseStatus.ANSWERED) -> None:
        self.text = text
        self.status = status
        self.calls: list[dict[str, Any]] = []
        self.error: BaseException | None = None

    async def answer(
        self,
        question: str,
        *,
        thread_id: str | None = None,
        user_id: str | None = None,
        user_context: str | None = None,
    ) -> AgentResponse:
        from core.models import RetrievedChunk, Source

        self.calls.append({"question": question, "thread_id": thread_id, "user_id": user_id,
                           "user_context": user_context})
        if self.error is not None:
            raise self.error
        query = UserQuery(query_text=question, thread_id=thread_id)
        chunk = RetrievedChunk(
            chunk_id="c1", content="Ragbot answers from your docs.", score=0.9,
            url="https://ragbot.dev/docs/install", title="Install", section="Install > Quick start",
            chunk_index=0, source_document="install.md",
        )
        answered = self.status is ResponseStatus.ANSWERED
        return AgentResponse(
            query_id=query.query_id, query_text=question, thread_id=thread_id,
            response_text=self.text, status=self.status,
            sources=[Source(index=1, chunk_id="c1", url=chunk.url, title=chunk.title,
                            section=chunk.section, chunk_index=0, score=0.9)] if answered else [],
            retrieved_chunks=[chunk] if answered else [],
            confidence_score=0.9 if answered else 0.0,
        )
