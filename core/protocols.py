"""The seams of ragbot: one Protocol per dependency the core talks to.

The core (``core/answer/pipeline.py``) depends only on these; concrete classes live in
their own modules (``core/stores/qdrant_embedded.py``, ``core/embedders/local.py``,
``storage/sqlite.py`` ...) and deterministic fakes in ``core/fakes.py``.
Adapters in ``bots/`` depend on ``AnswerService`` and the storage protocols,
never on Qdrant or an LLM SDK.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from core.models import (
    AgentLogEntry,
    AgentResponse,
    ConversationTurn,
    DocumentChunk,
    EmbeddingRequest,
    EmbeddingResponse,
    EventType,
    Feedback,
    GroundingValidation,
    QueryStatus,
    ResponseState,
    RetrievalRequest,
    RetrievedChunk,
    StatusChange,
    UserQuery,
)

# --------------------------------------------------------------------------- embeddings


@runtime_checkable
class Embedder(Protocol):
    """Turns text into dense (and optionally sparse) vectors."""

    @property
    def model_id(self) -> str:
        """Identifies model and settings; a collection remembers it and refuses others."""
        ...

    @property
    def dimension(self) -> int:
        """Length of the dense vectors."""
        ...

    async def embed_query(self, request: EmbeddingRequest) -> EmbeddingResponse:
        """Embed one question (``input_type='search_query'``)."""
        ...

    async def embed_documents(self, texts: Sequence[str]) -> list[EmbeddingResponse]:
        """Embed many passages (``input_type='search_document'``), in order."""
        ...


# --------------------------------------------------------------------------- vector store


@dataclass(frozen=True, slots=True)
class Hit:
    """One stored chunk found by one retriever, with that retriever's raw score."""

    chunk_id: str
    score: float
    payload: dict[str, Any]


@dataclass(frozen=True, slots=True)
class HybridHits:
    """Candidates from the dense and the sparse retriever, each best first."""

    dense: list[Hit]
    sparse: list[Hit]

    @property
    def total_candidates(self) -> int:
        """Distinct chunks among both lists."""
        return len({h.chunk_id for h in self.dense} | {h.chunk_id for h in self.sparse})


@dataclass(frozen=True, slots=True)
class DocumentState:
    """What the store holds for one source document (for incremental ingest).

    ``title``, ``url`` and ``sections`` (the section paths of its chunks, in chunk order)
    let ``ragbot validate`` write sample questions from any collection's own pages.
    """

    content_hash: str
    chunk_ids: frozenset[str]
    title: str = ""
    url: str = ""
    sections: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CollectionInfo:
    """A collection's identity: which embedding model built it."""

    name: str
    model_id: str
    dimension: int
    points: int


@dataclass(frozen=True, slots=True)
class StoreHealth:
    """The vector store's state, cheap to ask for (``/healthz``, ``ragbot doctor``).

    ``ok``: searches can be served; ``writable``: an ingest can be saved (the folder is
    there and the disk has room); ``detail``: one line naming the problem, or the store.
    """

    ok: bool
    writable: bool
    detail: str
    free_bytes: int | None = None

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape ``/healthz`` and ``ragbot doctor --json`` show."""
        return {"ok": self.ok, "writable": self.writable, "detail": self.detail,
                "free_bytes": self.free_bytes}


@runtime_checkable
class VectorStore(Protocol):
    """Named dense + sparse (IDF) vectors with chunk payloads.

    Raises:
        StoreUnavailableError: closed, locked or unreachable.
        CollectionNotFoundError: search or delete on a collection never created.
        EmbeddingModelMismatchError: model or dimension differs from the collection's.
    """

    async def ensure_collection(self, name: str, *, model_id: str, dimension: int) -> None:
        """Create the collection, or check that it was built by the same model."""
        ...

    async def collection_info(self, name: str) -> CollectionInfo | None:
        """Return the collection's identity, or None when it does not exist."""
        ...

    async def upsert(
        self,
        name: str,
        chunks: Sequence[DocumentChunk],
        embeddings: Sequence[EmbeddingResponse],
    ) -> None:
        """Insert or replace chunks (ids are deterministic) with their vectors."""
        ...

    async def delete(self, name: str, chunk_ids: Sequence[str]) -> None:
        """Remove chunks by id; unknown ids are ignored."""
        ...

    async def documents(self, name: str) -> dict[str, DocumentState]:
        """Map each stored source_document to its content hash and chunk ids."""
        ...

    async def search(self, request: RetrievalRequest) -> HybridHits:
        """Search ``request.collection_name``: up to ``request.depth`` hits from each retriever.

        The request is the whole input: its embeddings, its collection, its filters, and
        ``top_k``/``candidates`` for how many hits. Its ``threshold`` applies to the calibrated
        relevance computed after fusion (core/retrieval/ranking.py), not to the raw cosine and
        BM25 scores a store sees, so ranking applies it.
        """
        ...

    async def health(self) -> StoreHealth:
        """Whether the store can serve searches and save writes; never raises."""
        ...

    async def close(self) -> None:
        """Flush and release files or connections; later calls raise StoreUnavailableError."""
        ...


# --------------------------------------------------------------------------- ranking & generation


@runtime_checkable
class Reranker(Protocol):
    """Reorders retrieved chunks with a stronger (cross-encoder) model."""

    @property
    def name(self) -> str:
        """Recorded in RankedResults.ranking_algorithm, e.g. 'cohere:rerank-v3.5'."""
        ...

    async def rerank(
        self, query: str, chunks: Sequence[RetrievedChunk], *, top_k: int
    ) -> list[RetrievedChunk]:
        """Return at most ``top_k`` chunks, best first, scores replaced by [0, 1] relevance."""
        ...


#: Runs the real retrieval pipeline for a tool call: (query, top_k, filters) -> chunks.
SearchFn = Callable[[str, int, dict[str, Any] | None], Awaitable[list[RetrievedChunk]]]


@dataclass(slots=True)
class GenerationRequest:
    """Everything a generator may use to write an answer."""

    query: UserQuery
    chunks: list[RetrievedChunk]
    history: list[ConversationTurn] = field(default_factory=list)
    #: The question as searched (chat noise dropped, spelling fixed, a follow-up's subject
    #: added); None when it is the question itself.
    search_text: str | None = None


@dataclass(slots=True)
class Generation:
    """A generator's answer; ``[n]`` in ``text`` refers to ``chunks[n-1]``."""

    text: str
    chunks: list[RetrievedChunk]
    model_used: str
    retrieval_used: bool = True
    tool_calls: int = 0
    #: Set when the generator fell back (e.g. Gemini failed -> extractive); logged as error.
    fallback_reason: str | None = None
    #: The primary's answer failed grounding and was replaced by quoted passages.
    validation_failed: bool = False
    #: The grounding verdict on ``text`` (set by the fallback generator).
    grounding: GroundingValidation | None = None
    grounding_confidence: float = 1.0


@runtime_checkable
class Generator(Protocol):
    """Writes the answer from numbered chunks; may search again through ``search``."""

    @property
    def name(self) -> str:
        """Model name recorded in AgentResponse.model_used."""
        ...

    async def generate(self, request: GenerationRequest, *, search: SearchFn) -> Generation:
        """Answer only from the chunks (and the user's own context), citing them as [n].

        Raises:
            ProviderError: the remote model failed after its bounded retries.
        """
        ...


# --------------------------------------------------------------------------- storage


@runtime_checkable
class ConversationStore(Protocol):
    """Turns of each thread's conversation, for follow-up questions."""

    async def add_turn(self, turn: ConversationTurn) -> None:
        """Append one turn."""
        ...

    async def recent_turns(self, thread_id: str, *, limit: int) -> list[ConversationTurn]:
        """The last ``limit`` turns of the thread, oldest first."""
        ...


#: The ``error`` text and AgentLogEntry ``error_details`` that ``QueryStore.fail_interrupted`` writes.
INTERRUPTED_ERROR = "interrupted: the process stopped before the answer was finished"


@runtime_checkable
class QueryStore(Protocol):
    """The query lifecycle PENDING -> PROCESSING -> COMPLETED | FAILED, and responses."""

    async def create_query(self, query: UserQuery) -> None:
        """Store a new query (status PENDING)."""
        ...

    async def set_query_status(
        self, query_id: str, status: QueryStatus, *, error: str | None = None
    ) -> None:
        """Move a query along its lifecycle; an illegal transition raises ValueError."""
        ...

    async def get_query_status(self, query_id: str) -> QueryStatus | None:
        """Current status, or None for an unknown id."""
        ...

    async def set_response_state(
        self, query_id: str, state: ResponseState, *, error: str | None = None
    ) -> None:
        """Record the query's response entering ``state`` (PROCESSING -> COMPLETED | ERROR).

        Raises:
            ValueError: unknown ``query_id`` or an illegal transition (nothing is recorded).
        """
        ...

    async def status_history(self, query_id: str) -> list[StatusChange]:
        """Every state the query and its response entered, oldest first (empty for an unknown id)."""
        ...

    async def save_response(self, response: AgentResponse) -> None:
        """Keep the response (status, text, sources) so feedback and exports can refer to it."""
        ...

    async def fail_interrupted(self) -> int:
        """Mark queries left PROCESSING by a crash as FAILED with an error entry; count them."""
        ...


@runtime_checkable
class ActivityLog(Protocol):
    """The AgentLogEntry log."""

    async def log(self, entry: AgentLogEntry, *, durable: bool = True) -> None:
        """Append one entry; ``durable=False`` for a step of work whose last write is durable."""
        ...

    def export(
        self,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        event_type: EventType | None = None,
        thread_id: str | None = None,
        query_id: str | None = None,
    ) -> AsyncIterator[AgentLogEntry]:
        """Stream matching entries oldest first, without loading the whole table."""
        ...


@runtime_checkable
class FeedbackStore(Protocol):
    """Thumbs up/down on responses."""

    async def record_feedback(self, feedback: Feedback) -> None:
        """Store a vote; the same user voting again on the same response replaces it."""
        ...

    def export_feedback(self, *, since: datetime | None = None) -> AsyncIterator[Feedback]:
        """Stream votes oldest first."""
        ...


@runtime_checkable
class EventLedger(Protocol):
    """Remembers platform event ids so a retried delivery is processed once."""

    async def first_delivery(self, platform: str, event_id: str) -> bool:
        """Record the id; True the first time it is seen, False ever after (across restarts)."""
        ...


# --------------------------------------------------------------------------- what adapters see


@runtime_checkable
class AnswerService(Protocol):
    """The core as the adapters see it: a question in, an AgentResponse out.

    It never raises for expected outcomes (nothing found, grounding failed,
    retrieval failed): those are statuses. It raises QueryValidationError for bad
    input, which adapters turn into a polite reply.
    """

    async def answer(
        self,
        question: str,
        *,
        thread_id: str | None = None,
        user_id: str | None = None,
        user_context: str | None = None,
    ) -> AgentResponse:
        """Answer one question, logging every step."""
        ...
