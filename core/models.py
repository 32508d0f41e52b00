"""The specification's entities as pydantic v2 models.

Names follow ``../shared/spec``. Where the five documents disagree, one name
and one default is kept here and the other spelling is accepted on input
(``similarity_score`` for ``score``, ``limit`` for ``top_k``, ``min_score`` for
``threshold`` ...); ``docs/configuration.md`` and ``docs/data-model.md`` list each choice.
Models fed from outside (users, files, APIs) forbid unknown fields so a typo
is an error that names the field, never a silently ignored value.
"""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import (
    AliasChoices,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    computed_field,
    field_validator,
    model_validator,
)

#: An answer whose confidence_score is below this is shown with a "check the sources" notice.
LOW_CONFIDENCE = 0.4
#: Default maximum question length; Settings.max_query_length overrides it through
#: the validation context (``UserQuery.model_validate(data, context={...})``).
DEFAULT_MAX_QUERY_LENGTH = 1000
MAX_USER_CONTEXT_LENGTH = 10_000
#: Spec 002: "all string fields have maximum length of 50,000 characters".
MAX_TEXT_LENGTH = 50_000
#: The relevance a chunk needs to be used, when neither the request nor the settings give one.
#: Whether a question is answered at all is decided by core/retrieval/answerability.py
#: (see core/retrieval/ranking.py for what a score means).
DEFAULT_RELEVANCE_THRESHOLD = 0.15
COLLECTION_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,255}$")
FILTER_FIELDS = frozenset({"source_document", "section", "tags", "url", "title"})
_URL_RE = re.compile(r"^(https?|file)://\S+$")
_TOOL_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")

Score = Annotated[float, Field(ge=0.0, le=1.0)]
Seconds = Annotated[float, Field(ge=0.0)]
Text = Annotated[str, Field(max_length=MAX_TEXT_LENGTH)]


def new_id() -> str:
    """Return a fresh random identifier (uuid4 hex) for queries, responses and log entries."""
    return uuid.uuid4().hex


def utc_now() -> datetime:
    """Return the current time as an aware UTC datetime."""
    return datetime.now(UTC)


def _non_blank_content(value: str) -> str:
    """Chunk content must hold text (spec: "chunk content must be non-empty")."""
    if not value.strip():
        raise ValueError("content is empty: every chunk needs text")
    return value


def validate_collection_name(name: str) -> str:
    """Check Qdrant's collection name rule and return the name.

    Raises:
        ValueError: naming the bad value.
    """
    if not COLLECTION_NAME_RE.fullmatch(name):
        raise ValueError(
            f"collection name {name!r} is invalid: use 1 to 255 letters, digits, '_' or '-'"
        )
    return name


class _RoundTrip(BaseModel):
    """Accepts its own ``model_dump()`` back: computed fields in the input are dropped.

    Without this a model that forbids unknown fields would refuse its own JSON
    (``vector_id``, ``sources_cited`` ... are computed, not stored).
    """

    @model_validator(mode="before")
    @classmethod
    def _drop_computed(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not cls.model_computed_fields:
            return data
        drop = set(cls.model_computed_fields) & set(data)
        for name, info in cls.model_fields.items():
            aliases = info.validation_alias.choices if isinstance(info.validation_alias, AliasChoices) else []
            # A computed name that is also an input spelling (RetrievedChunk.vector_id) is kept
            # when it is the only spelling given.
            if not ({name, *map(str, aliases)} - drop) & set(data):
                drop -= set(map(str, aliases))
        return {k: v for k, v in data.items() if k not in drop}


class _Strict(_RoundTrip):
    """Base for models fed from outside: unknown fields are errors."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, str_strip_whitespace=False)


# --------------------------------------------------------------------------- query lifecycle


class QueryStatus(StrEnum):
    """Lifecycle of a ``UserQuery``: PENDING -> PROCESSING -> COMPLETED | FAILED."""

    PENDING = "PENDING"
    PROCESSING = "PROCESSING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"


#: Allowed transitions; anything else is a bug and is refused by ``check_transition``.
QUERY_TRANSITIONS: dict[QueryStatus, frozenset[QueryStatus]] = {
    QueryStatus.PENDING: frozenset({QueryStatus.PROCESSING, QueryStatus.FAILED}),
    QueryStatus.PROCESSING: frozenset({QueryStatus.COMPLETED, QueryStatus.FAILED}),
    QueryStatus.COMPLETED: frozenset(),
    QueryStatus.FAILED: frozenset(),
}


def check_transition(current: QueryStatus, new: QueryStatus) -> None:
    """Raise ValueError unless ``current -> new`` is an allowed query transition."""
    if new not in QUERY_TRANSITIONS[current]:
        raise ValueError(f"query status cannot go from {current.value} to {new.value}")


class UserQuery(_Strict):
    """A question asked by a user (spec: User Query / AgentQuery / Query)."""

    query_id: str = Field(
        default_factory=new_id, min_length=1, validation_alias=AliasChoices("query_id", "id")
    )
    query_text: str = Field(validation_alias=AliasChoices("query_text", "text"))
    timestamp: AwareDatetime = Field(default_factory=utc_now)
    thread_id: str | None = Field(
        default=None, max_length=512, validation_alias=AliasChoices("thread_id", "session_id")
    )
    user_id: str | None = Field(default=None, max_length=512)
    user_context: str | None = Field(default=None, max_length=MAX_USER_CONTEXT_LENGTH)
    status: QueryStatus = QueryStatus.PENDING

    @field_validator("query_text")
    @classmethod
    def _text_rules(cls, value: str, info: ValidationInfo) -> str:
        limit = DEFAULT_MAX_QUERY_LENGTH
        if info.context and "max_query_length" in info.context:
            limit = int(info.context["max_query_length"])
        text = value.strip()
        if not text:
            raise ValueError("query_text is empty: ask a question in words")
        if len(text) > limit:
            raise ValueError(
                f"query_text is {len(text)} characters long; the limit is {limit}"
            )
        return text

    @field_validator("timestamp")
    @classmethod
    def _recent(cls, value: datetime) -> datetime:
        # Spec 003: a query's timestamp must lie within the last 24 hours. A little
        # clock skew into the future is tolerated; platforms' clocks differ.
        now = utc_now()
        if value > now + timedelta(minutes=5):
            raise ValueError(f"timestamp {value.isoformat()} is in the future")
        if value < now - timedelta(hours=24):
            raise ValueError(f"timestamp {value.isoformat()} is more than 24 hours old")
        return value


# --------------------------------------------------------------------------- retrieval


class RetrievedChunk(_Strict):
    """A passage returned by the vector search, with its source metadata."""

    chunk_id: str = Field(min_length=1, validation_alias=AliasChoices("chunk_id", "vector_id", "id"))
    content: Text = Field(validation_alias=AliasChoices("content", "text"))
    score: Score = Field(validation_alias=AliasChoices("score", "similarity_score"))
    url: str = Field(validation_alias=AliasChoices("url", "source_url"))
    title: str = Field(max_length=1000, validation_alias=AliasChoices("title", "page_title"))
    section: str = Field(
        default="", max_length=2000, validation_alias=AliasChoices("section", "section_hierarchy")
    )
    headings: list[str] = Field(default_factory=list)
    chunk_index: int = Field(ge=0)
    source_document: str = Field(min_length=1, max_length=2000)
    page_number: int | None = Field(default=None, ge=1)
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _flatten_payload(cls, data: Any) -> Any:
        # Spec 004 nests the stored fields under "payload" ({"score": .., "payload": {..}}).
        if isinstance(data, dict) and isinstance(data.get("payload"), dict):
            data = {**data["payload"], **{k: v for k, v in data.items() if k != "payload"}}
        return data

    @computed_field  # type: ignore[prop-decorator]
    @property
    def vector_id(self) -> str:
        """Spec 001's name for the stored vector's id."""
        return self.chunk_id

    _content_not_blank = field_validator("content")(_non_blank_content)

    @field_validator("url")
    @classmethod
    def _url_format(cls, value: str) -> str:
        if not _URL_RE.match(value):
            raise ValueError(f"url {value!r} is not an http(s):// or file:// URL")
        return value


class RetrievedContext(_RoundTrip):
    """The chunks retrieved for one query (spec 000: Retrieved Context)."""

    chunks: list[RetrievedChunk]
    query_embedding: list[float] | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    success: bool = True

    @model_validator(mode="after")
    def _non_empty_on_success(self) -> RetrievedContext:
        if self.success and not self.chunks:
            raise ValueError("a successful retrieval must contain at least one chunk")
        return self

    @computed_field  # type: ignore[prop-decorator]
    @property
    def document_chunks(self) -> list[str]:
        """The chunks' texts."""
        return [c.content for c in self.chunks]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def chunk_ids(self) -> list[str]:
        """The chunks' ids."""
        return [c.chunk_id for c in self.chunks]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def relevance_scores(self) -> list[float]:
        """The chunks' scores in [0, 1]."""
        return [c.score for c in self.chunks]


class SparseVector(_Strict):
    """Sparse term weights (BM25): parallel lists of term ids and weights."""

    indices: list[int]
    values: list[float]

    @model_validator(mode="after")
    def _same_length(self) -> SparseVector:
        if len(self.indices) != len(self.values):
            raise ValueError(
                f"sparse vector has {len(self.indices)} indices but {len(self.values)} values"
            )
        return self


InputType = Literal["search_query", "search_document"]


class EmbeddingRequest(_Strict):
    """Text to embed, as a query or as a document."""

    query_text: str = Field(max_length=MAX_TEXT_LENGTH)
    input_type: InputType = "search_query"

    @field_validator("query_text")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("query_text is empty: there is nothing to embed")
        return value


class EmbeddingResponse(_RoundTrip):
    """An embedding: a dense vector, optionally with a sparse one (spec 001: QueryEmbedding)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    embedding_vector: list[float] = Field(validation_alias=AliasChoices("embedding_vector", "vector"))
    sparse_vector: SparseVector | None = None
    model_used: str = Field(min_length=1, validation_alias=AliasChoices("model_used", "model"))
    query_text: str | None = None
    execution_time: Seconds = 0.0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def dimension(self) -> int:
        """Length of the dense vector."""
        return len(self.embedding_vector)

    @model_validator(mode="after")
    def _has_a_vector(self) -> EmbeddingResponse:
        if not self.embedding_vector and self.sparse_vector is None:
            raise ValueError("embedding_vector is empty and there is no sparse_vector")
        return self


FilterValue = str | int | bool | list[str]


class RetrievalRequest(_Strict):
    """A search against the knowledge base (spec: RetrievalRequest / QueryRequest)."""

    query_embedding: list[float]
    sparse_embedding: SparseVector | None = None
    query_text: str | None = Field(default=None, max_length=MAX_TEXT_LENGTH)
    embedding_model: str | None = None
    top_k: int = Field(default=5, ge=1, le=20, validation_alias=AliasChoices("top_k", "limit"))
    threshold: Score | None = Field(
        default=None, validation_alias=AliasChoices("threshold", "min_score")
    )
    filters: dict[str, FilterValue] | None = None
    collection_name: str = "ragbot"

    @field_validator("query_embedding")
    @classmethod
    def _embedding_not_empty(cls, value: list[float]) -> list[float]:
        if not value:
            raise ValueError("query_embedding is empty")
        return value

    @field_validator("collection_name")
    @classmethod
    def _collection(cls, value: str) -> str:
        return validate_collection_name(value)

    @field_validator("filters")
    @classmethod
    def _filter_fields(cls, value: dict[str, FilterValue] | None) -> dict[str, FilterValue] | None:
        if value:
            unknown = sorted(set(value) - FILTER_FIELDS)
            if unknown:
                raise ValueError(
                    f"filter field(s) {unknown} are not supported; use {sorted(FILTER_FIELDS)}"
                )
        return value or None


class RetrievalStats(BaseModel):
    """How a retrieval went."""

    total_candidates: int = Field(ge=0)
    search_threshold: Score
    collection_name: str


class RetrievalResponse(BaseModel):
    """Chunks that passed the threshold, with timing and statistics."""

    retrieved_chunks: list[RetrievedChunk]
    execution_time: Seconds
    retrieval_stats: RetrievalStats


class RankedResults(BaseModel):
    """Chunks after ranking, best first; ``ranking_algorithm`` says honestly how."""

    ranked_chunks: list[RetrievedChunk]
    ranking_algorithm: str = Field(min_length=1)
    execution_time: Seconds


class RetrievalQuery(_Strict):
    """Spec 001's Query: the text, its embedding and where it was searched."""

    text: str = Field(min_length=1, max_length=MAX_TEXT_LENGTH)
    embedding: list[float] = Field(default_factory=list)
    collection_name: str = "ragbot"
    top_k: int = Field(default=5, ge=1)

    @field_validator("text")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("text is empty")
        return value

    @field_validator("collection_name")
    @classmethod
    def _collection(cls, value: str) -> str:
        return validate_collection_name(value)


class ValidationResult(BaseModel):
    """Outcome of a retrieval validation check (spec 001)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    success: bool
    message: str = ""
    metrics: dict[str, Any] = Field(default_factory=dict)
    retrieved_chunks: list[RetrievedChunk] = Field(default_factory=list)
    query: RetrievalQuery | None = None

    @model_validator(mode="after")
    def _rules(self) -> ValidationResult:
        if not self.success and not self.message.strip():
            raise ValueError("message must not be empty when success is false")
        expected = self.metrics.get("expected_count")
        if self.success and expected is not None and len(self.retrieved_chunks) != expected:
            raise ValueError(
                f"success with {len(self.retrieved_chunks)} retrieved_chunks but "
                f"expected_count is {expected}"
            )
        return self


# --------------------------------------------------------------------------- responses


class ResponseStatus(StrEnum):
    """What happened to a question; expected outcomes are statuses, not exceptions."""

    ANSWERED = "answered"
    NO_RELEVANT_DOCUMENTS = "no_relevant_documents"
    RETRIEVAL_FAILED = "retrieval_failed"
    VALIDATION_FAILED = "validation_failed"


class Source(BaseModel):
    """A cited chunk: ``index`` is the ``[n]`` used in the answer text (1-based)."""

    index: int = Field(ge=1)
    chunk_id: str
    url: str
    title: str
    section: str = ""
    chunk_index: int = Field(ge=0)
    score: Score


class GroundingValidation(BaseModel):
    """How the answer was checked against the retrieved chunks."""

    method: str = Field(min_length=1)
    supported_sentences: int = Field(default=0, ge=0)
    unsupported_sentences: int = Field(default=0, ge=0)
    unsupported: list[str] = Field(default_factory=list)
    invalid_citations: list[int] = Field(default_factory=list)
    passed: bool = True


class AgentResponse(_RoundTrip):
    """The answer returned to the user (spec: Agent Response)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    response_id: str = Field(default_factory=new_id, validation_alias=AliasChoices("response_id", "id"))
    query_id: str = Field(min_length=1)
    query_text: str = Field(default="", validation_alias=AliasChoices("query_text", "query"))
    thread_id: str | None = None
    response_text: Text = Field(validation_alias=AliasChoices("response_text", "answer", "content"))
    status: ResponseStatus
    sources: list[Source] = Field(default_factory=list)
    retrieved_chunks: list[RetrievedChunk] = Field(default_factory=list)
    confidence_score: Score = Field(
        default=0.0, validation_alias=AliasChoices("confidence_score", "confidence")
    )
    grounding_confidence: Score = 0.0
    grounding_validation: GroundingValidation | None = None
    retrieval_used: bool = True
    ranking_algorithm: str | None = None
    model_used: str | None = None
    #: Id of the ``error`` AgentLogEntry when something failed, shown to users so that
    #: an admin can find the cause in the log export.
    reference_id: str | None = None
    execution_time: Seconds = Field(
        default=0.0, validation_alias=AliasChoices("execution_time", "processing_time")
    )
    timestamp: AwareDatetime = Field(default_factory=utc_now)

    @field_validator("response_text")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("response_text is empty: every response must say something")
        return value

    @model_validator(mode="after")
    def _sources_are_retrieved(self) -> AgentResponse:
        by_id = {c.chunk_id: c for c in self.retrieved_chunks}
        for source in self.sources:
            chunk = by_id.get(source.chunk_id)
            if chunk is None:
                raise ValueError(
                    f"source [{source.index}] cites chunk {source.chunk_id!r}, "
                    "which was not retrieved"
                )
            if chunk.url != source.url:
                raise ValueError(
                    f"source [{source.index}] url {source.url!r} differs from its chunk's url {chunk.url!r}"
                )
        if self.status is ResponseStatus.ANSWERED and not self.sources:
            raise ValueError("an answered response must cite at least one source")
        return self

    @property
    def low_confidence(self) -> bool:
        """Whether users should be told to check the sources: one rule for every adapter.

        True for ``validation_failed``, and for an answer whose grounding check did not pass
        or whose confidence_score is below LOW_CONFIDENCE.
        """
        if self.status is ResponseStatus.VALIDATION_FAILED:
            return True
        if self.status is not ResponseStatus.ANSWERED:
            return False
        failed = self.grounding_validation is not None and not self.grounding_validation.passed
        return failed or self.confidence_score < LOW_CONFIDENCE

    @computed_field  # type: ignore[prop-decorator]
    @property
    def sources_cited(self) -> list[str]:
        """Spec 002: the URLs cited, in citation order."""
        return [s.url for s in self.sources]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def source_chunks(self) -> list[str]:
        """Spec 000: ids of the chunks cited."""
        return [s.chunk_id for s in self.sources]


# --------------------------------------------------------------------------- agent


class AgentConfig(_Strict):
    """Generation settings for the LLM agent (spec 004)."""

    model_name: str = Field(default="gemini-2.5-flash", min_length=1)
    max_tokens: int = Field(default=1024, ge=1, le=65_536)
    temperature: float = Field(default=0.2, ge=0.0, le=1.0)
    context_window: int = Field(default=8192, ge=256)

    @model_validator(mode="after")
    def _fits(self) -> AgentConfig:
        if self.max_tokens >= self.context_window:
            raise ValueError(
                f"max_tokens ({self.max_tokens}) must be smaller than "
                f"context_window ({self.context_window})"
            )
        return self


class RetrievalTool(_Strict):
    """A function the model may call; ``parameters`` is its JSON schema."""

    tool_name: str
    description: str = Field(min_length=1)
    parameters: dict[str, Any]

    @field_validator("tool_name")
    @classmethod
    def _identifier(cls, value: str) -> str:
        if not _TOOL_NAME_RE.fullmatch(value):
            raise ValueError(f"tool_name {value!r} must be an identifier of at most 64 characters")
        return value

    @field_validator("parameters")
    @classmethod
    def _object_schema(cls, value: dict[str, Any]) -> dict[str, Any]:
        if value.get("type") != "object" or not isinstance(value.get("properties"), dict):
            raise ValueError("parameters must be a JSON schema with type 'object' and properties")
        return value

    @computed_field  # type: ignore[prop-decorator]
    @property
    def function_schema(self) -> dict[str, Any]:
        """The whole function declaration as sent to a model."""
        return {"name": self.tool_name, "description": self.description,
                "parameters": self.parameters}


# --------------------------------------------------------------------------- logging & memory


class EventType(StrEnum):
    """Kinds of AgentLogEntry; the first seven follow a question through the pipeline."""

    QUERY_RECEIVED = "query_received"
    EMBEDDING_GENERATED = "embedding_generated"
    RETRIEVAL_PERFORMED = "retrieval_performed"
    RESULTS_RANKED = "results_ranked"
    RESPONSE_GENERATED = "response_generated"
    RESPONSE_SENT = "response_sent"
    ERROR = "error"
    FEEDBACK_RECEIVED = "feedback_received"
    ADMIN_EXPORT = "admin_export"
    #: An ingest run finished (source, collection and counts in the summary; bots/runtime.py).
    INGEST_COMPLETED = "ingest_completed"


class AgentLogEntry(BaseModel):
    """One step of the bot's activity, as stored in SQLite and exported to admins."""

    model_config = ConfigDict(extra="forbid")

    entry_id: str = Field(default_factory=new_id)
    timestamp: AwareDatetime = Field(default_factory=utc_now)
    event_type: EventType
    thread_id: str | None = None
    query_id: str | None = None
    query_text: Text | None = None
    response_summary: Text | None = None
    error_details: Text | None = None
    execution_time: Seconds | None = None


class TurnRole(StrEnum):
    """Who spoke in a conversation turn."""

    USER = "user"
    ASSISTANT = "assistant"


class ConversationTurn(BaseModel):
    """One message of a thread's conversation, for follow-up questions."""

    thread_id: str = Field(min_length=1)
    role: TurnRole
    content: Text
    query_id: str | None = None
    response_id: str | None = None
    timestamp: AwareDatetime = Field(default_factory=utc_now)


class Feedback(BaseModel):
    """A thumbs up (+1) or down (-1) on a response; a second click replaces the first."""

    response_id: str = Field(min_length=1)
    user_id: str = Field(min_length=1)
    vote: Literal[1, -1]
    platform: str = Field(min_length=1)
    timestamp: AwareDatetime = Field(default_factory=utc_now)


# --------------------------------------------------------------------------- ingestion


class DocumentChunk(BaseModel):
    """A chunk made by ingestion, before it is embedded and stored."""

    chunk_id: str
    content: str = Field(min_length=1)
    url: str
    title: str
    section: str = ""
    headings: list[str] = Field(default_factory=list)
    chunk_index: int = Field(ge=0)
    source_document: str = Field(min_length=1)
    page_number: int | None = None
    tags: list[str] = Field(default_factory=list)
    content_hash: str = Field(min_length=1, description="hash of the whole source document")

    _content_not_blank = field_validator("content")(_non_blank_content)

    def payload(self) -> dict[str, Any]:
        """The payload stored beside the vectors."""
        return self.model_dump()


class IngestSummary(BaseModel):
    """What one ingest run did."""

    files: int = 0
    chunks_added: int = 0
    chunks_updated: int = 0
    chunks_removed: int = 0
    chunks_skipped: int = 0
    files_failed: list[str] = Field(default_factory=list)
    seconds: float = 0.0

    def line(self) -> str:
        """One-line human summary."""
        text = (
            f"{self.files} files: {self.chunks_added} chunks added, {self.chunks_updated} updated, "
            f"{self.chunks_removed} removed, {self.chunks_skipped} unchanged "
            f"in {self.seconds:.1f} s"
        )
        if self.files_failed:
            text += f"; {len(self.files_failed)} file(s) skipped with errors"
        return text
