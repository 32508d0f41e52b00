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
from collections.abc import Mapping
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


def check_filters(value: dict[str, Any] | None) -> dict[str, Any] | None:
    """Refuse filter fields the stores do not index; an empty filter is no filter."""
    if value:
        unknown = sorted(set(value) - FILTER_FIELDS)
        if unknown:
            raise ValueError(f"filter field(s) {unknown} are not supported; use {sorted(FILTER_FIELDS)}")
    return value or None


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
    """Lifecycle of a ``UserQuery``: PENDING -> PROCESSING -> COMPLETED | FAILED.

    Spec 004 names the failed end ``ERROR``; it is accepted on input and means FAILED.
    """

    PENDING = "PENDING"
    PROCESSING = "PROCESSING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"

    @classmethod
    def _missing_(cls, value: object) -> QueryStatus | None:
        return cls.FAILED if isinstance(value, str) and value.upper() == "ERROR" else None


class ChunkState(StrEnum):
    """Spec 004's RetrievedChunk lifecycle: RETRIEVED -> VALIDATED -> RETURNED.

    RETRIEVED: built from a stored payload the search found; VALIDATED: it passed the chunk
    rules and the relevance threshold; RETURNED: handed to the caller in a RetrievedContext
    or SearchResults.
    """

    RETRIEVED = "RETRIEVED"
    VALIDATED = "VALIDATED"
    RETURNED = "RETURNED"


class ResponseState(StrEnum):
    """Spec 004's AgentResponse lifecycle: PROCESSING -> COMPLETED | ERROR.

    A response is PROCESSING while retrieval and generation run (recorded in the status
    history); a built AgentResponse is COMPLETED, or ERROR when retrieval failed.
    """

    PROCESSING = "PROCESSING"
    COMPLETED = "COMPLETED"
    ERROR = "ERROR"


#: Allowed transitions; anything else is a bug and is refused by ``check_transition``.
QUERY_TRANSITIONS: dict[QueryStatus, frozenset[QueryStatus]] = {
    QueryStatus.PENDING: frozenset({QueryStatus.PROCESSING, QueryStatus.FAILED}),
    QueryStatus.PROCESSING: frozenset({QueryStatus.COMPLETED, QueryStatus.FAILED}),
    QueryStatus.COMPLETED: frozenset(),
    QueryStatus.FAILED: frozenset(),
}


CHUNK_TRANSITIONS: dict[ChunkState, frozenset[ChunkState]] = {
    ChunkState.RETRIEVED: frozenset({ChunkState.VALIDATED}),
    ChunkState.VALIDATED: frozenset({ChunkState.RETURNED}),
    ChunkState.RETURNED: frozenset(),
}
RESPONSE_TRANSITIONS: dict[ResponseState, frozenset[ResponseState]] = {
    ResponseState.PROCESSING: frozenset({ResponseState.COMPLETED, ResponseState.ERROR}),
    ResponseState.COMPLETED: frozenset(),
    ResponseState.ERROR: frozenset(),
}
_MACHINES: dict[type[StrEnum], tuple[str, Mapping[Any, frozenset[Any]]]] = {
    QueryStatus: ("query status", QUERY_TRANSITIONS),
    ChunkState: ("chunk state", CHUNK_TRANSITIONS),
    ResponseState: ("response state", RESPONSE_TRANSITIONS),
}


def check_transition(current: StrEnum, new: StrEnum) -> None:
    """Raise ValueError unless ``current -> new`` is allowed by its state machine.

    One function for the three machines: QueryStatus, ChunkState and ResponseState.
    """
    name, table = _MACHINES[type(current)]
    if type(new) is not type(current) or new not in table[current]:
        raise ValueError(f"{name} cannot go from {current.value} to {new.value}")


def check_response_state(current: ResponseState | None, new: ResponseState) -> None:
    """``check_transition`` for a response, whose first state (``current`` None) is PROCESSING."""
    if current is not None:
        check_transition(current, new)
    elif new is not ResponseState.PROCESSING:
        raise ValueError(f"response state cannot start at {new.value}: it starts at PROCESSING")


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
    state: ChunkState = ChunkState.RETRIEVED

    @model_validator(mode="before")
    @classmethod
    def _flatten_payload(cls, data: Any) -> Any:
        return spec_chunk_fields(data) if isinstance(data, dict) else data

    def advance(self, new: ChunkState) -> RetrievedChunk:
        """A copy in state ``new``; ValueError unless RETRIEVED -> VALIDATED -> RETURNED allows it."""
        check_transition(self.state, new)
        return self.model_copy(update={"state": new})

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


#: Spec 002 nests these under a chunk's ``metadata``; spec 004 under ``payload``.
_NESTED_CHUNK_FIELDS = frozenset({
    "url", "source_url", "title", "page_title", "section", "section_hierarchy", "chunk_index",
    "source_document", "headings", "page_number", "tags", "chunk_id", "vector_id", "id",
})


def spec_chunk_fields(data: dict[str, Any]) -> dict[str, Any]:
    """Flatten the spec's chunk shapes onto RetrievedChunk's own fields.

    Spec 004 nests the stored fields under ``payload`` (``{"score": .., "payload": {..}}``);
    spec 002 nests ``url``, ``title``, ``section`` and ``chunk_index`` under ``metadata``.
    Fields given at the top level win. Neither spec names a chunk id or (002) a source
    document: the id defaults to a stable one derived from the URL and chunk index, and the
    source document to the URL.
    """
    if isinstance(data.get("payload"), dict):
        data = {**data["payload"], **{k: v for k, v in data.items() if k != "payload"}}
    meta = data.get("metadata")
    if isinstance(meta, dict) and _NESTED_CHUNK_FIELDS & set(meta):
        lifted = {k: v for k, v in meta.items() if k in _NESTED_CHUNK_FIELDS}
        rest = {k: v for k, v in meta.items() if k not in _NESTED_CHUNK_FIELDS}
        data = {**lifted, **{k: v for k, v in data.items() if k != "metadata"}, "metadata": rest}
    url = data.get("url", data.get("source_url"))
    if isinstance(url, str) and url:
        derived: dict[str, Any] = {}
        if not {"chunk_id", "vector_id", "id"} & set(data):
            derived["chunk_id"] = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{url}#{data.get('chunk_index', 0)}"))
        if "source_document" not in data:
            derived["source_document"] = url
        data = {**data, **derived}
    return data


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

    @classmethod
    def prepare(
        cls, chunks: list[RetrievedChunk], *, query_embedding: list[float] | None = None,
        **metadata: Any,
    ) -> RetrievedContext:
        """Hand chunks to their consumer: each moves VALIDATED -> RETURNED.

        ``success`` is whether anything was found; ``metadata`` says how (collection,
        ranking algorithm, threshold, source documents ...).
        """
        returned = [c.advance(ChunkState.RETURNED) for c in chunks]
        documents = list(dict.fromkeys(c.source_document for c in returned))
        return cls(chunks=returned, query_embedding=query_embedding, success=bool(returned),
                   metadata={**metadata, "source_documents": documents})

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
    #: Hits asked of each retriever (dense, sparse) before fusion; None: ``top_k``. Ranking
    #: needs more candidates than it keeps, so the store returns ``depth`` hits per retriever.
    candidates: int | None = Field(default=None, ge=1, le=1000)

    @property
    def depth(self) -> int:
        """Hits the store returns per retriever: ``candidates``, and never fewer than ``top_k``."""
        return max(self.candidates or self.top_k, self.top_k)

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

    _filter_fields = field_validator("filters")(check_filters)


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
    #: Stored chunks found but dropped because they break a chunk rule ("<chunk id>: <reason>").
    dropped_chunks: list[str] = Field(default_factory=list)
    #: How many scored candidates reached the threshold (``top_k`` of them are kept).
    total_matches: int = Field(default=0, ge=0)


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


# --------------------------------------------------------------------------- search requests

#: Every spelling of the question the specification uses.
_QUESTION = AliasChoices("query_text", "text", "question")


class SearchOptions(_Strict):
    """How deep and where to search; None means the setting (RAGBOT_TOP_K, ...)."""

    top_k: int | None = Field(default=None, ge=1, le=20, validation_alias=AliasChoices("top_k", "limit"))
    threshold: Score | None = Field(default=None, validation_alias=AliasChoices("threshold", "min_score"))
    collection_name: str | None = Field(
        default=None, validation_alias=AliasChoices("collection_name", "collection"))

    @field_validator("collection_name")
    @classmethod
    def _collection(cls, value: str | None) -> str | None:
        return None if value is None else validate_collection_name(value)


class QueryRequest(SearchOptions):
    """Spec 004's QueryRequest: a search, as ``ragbot search`` takes it.

    ``limit`` and ``min_score`` are accepted for ``top_k`` and ``threshold``; absent values
    come from the settings (5, the relevance threshold, the configured collection).
    """

    query_text: str = Field(max_length=MAX_TEXT_LENGTH, validation_alias=_QUESTION)
    filters: dict[str, FilterValue] | None = None

    @field_validator("query_text")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("query_text is empty: give the words to search for")
        return value.strip()

    _filter_fields = field_validator("filters")(check_filters)


class AskRequest(SearchOptions):
    """One line of ``ragbot ask --batch``: a question, its thread and search options.

    The question's own rules (not empty, length) are checked when it is asked, so one
    empty question is reported on its line while the others are answered.
    """

    query_text: str = Field(validation_alias=_QUESTION)
    thread_id: str | None = Field(
        default=None, max_length=512, validation_alias=AliasChoices("thread_id", "session_id"))
    user_context: str | None = Field(default=None, max_length=MAX_USER_CONTEXT_LENGTH)


class SearchResults(_RoundTrip):
    """Spec 004's SearchResults: what ``ragbot search`` returns.

    ``total_results`` counts every scored candidate that reached the threshold; ``results``
    holds the ``top_k`` best of them, ordered by score.
    """

    model_config = ConfigDict(extra="forbid")

    results: list[RetrievedChunk]
    query_time: Seconds
    total_results: int = Field(ge=0)
    request: QueryRequest | None = None
    #: The text searched: the request's, with chat noise dropped and spelling fixed.
    searched_text: str | None = None
    ranking_algorithm: str | None = None
    retrieval_stats: RetrievalStats | None = None
    dropped_chunks: list[str] = Field(default_factory=list)
    #: The query's embedding (``ragbot validate`` reports its dimension); never serialised.
    embedding: EmbeddingResponse | None = Field(default=None, exclude=True)

    @model_validator(mode="after")
    def _counts(self) -> SearchResults:
        if self.total_results < len(self.results):
            raise ValueError(f"total_results {self.total_results} is below the {len(self.results)} results")
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


def _sources_from_urls(sources: list[Any], chunks: list[Any]) -> list[Any]:
    """Spec 004's ``sources`` (URLs) as Source entries: each URL names the first retrieved chunk
    with that URL; a URL no retrieved chunk has is refused (spec: sources correspond to them)."""
    retrieved = [c if isinstance(c, RetrievedChunk) else RetrievedChunk.model_validate(c) for c in chunks]
    resolved: list[Any] = []
    for index, source in enumerate(sources, start=1):
        if not isinstance(source, str):
            resolved.append(source)
            continue
        chunk = next((c for c in retrieved if c.url == source), None)
        if chunk is None:
            raise ValueError(f"source {source!r} is not the url of any retrieved chunk")
        resolved.append(Source(index=index, chunk_id=chunk.chunk_id, url=chunk.url, title=chunk.title,
                               section=chunk.section, chunk_index=chunk.chunk_index, score=chunk.score))
    return resolved


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
    #: Spec 004's response has no query id: one is generated when the input has none.
    query_id: str = Field(default_factory=new_id, min_length=1)
    query_text: str = Field(default="", validation_alias=AliasChoices("query_text", "query"))
    thread_id: str | None = None
    response_text: Text = Field(validation_alias=AliasChoices("response_text", "answer", "content"))
    status: ResponseStatus
    #: COMPLETED, or ERROR when retrieval failed (PROCESSING lives in the status history only).
    state: ResponseState = ResponseState.COMPLETED
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

    @model_validator(mode="before")
    @classmethod
    def _spec_shapes(cls, data: Any) -> Any:
        """Accept spec 004's response: ``sources`` as URLs, no ``status`` and no ``state``."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        sources = data.get("sources")
        if isinstance(sources, list) and any(isinstance(s, str) for s in sources):
            data["sources"] = _sources_from_urls(sources, data.get("retrieved_chunks") or [])
        if "status" not in data:
            data["status"] = (ResponseStatus.ANSWERED if data.get("sources")
                              else ResponseStatus.NO_RELEVANT_DOCUMENTS)
        if "state" not in data:
            failed = data["status"] == ResponseStatus.RETRIEVAL_FAILED
            data["state"] = ResponseState.ERROR if failed else ResponseState.COMPLETED
        return data

    @model_validator(mode="after")
    def _state_matches(self) -> AgentResponse:
        expected = (ResponseState.ERROR if self.status is ResponseStatus.RETRIEVAL_FAILED
                    else ResponseState.COMPLETED)
        if self.state is not expected:
            raise ValueError(f"state {self.state.value} does not fit status {self.status.value}: "
                             f"a built response is {expected.value}")
        return self

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
    #: Spec 000's "Retrieval Triggered": the pipeline (or the model, through its tool) searches.
    RETRIEVAL_TRIGGERED = "retrieval_triggered"
    #: Spec 002's RESULTS_FILTERED: candidates scored, bad stored chunks dropped, threshold applied;
    #: also a follow-up dropped for holding too little of its own words in what was found, and
    #: a message aimed at the assistant, searched alone and only quoted.
    RESULTS_FILTERED = "results_filtered"
    #: Spec 002's CONTEXT_PREPARED: the chunks handed to the generator (RetrievedContext).
    CONTEXT_PREPARED = "context_prepared"


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


class StatusChange(BaseModel):
    """One entry of a question's status history: which state machine entered which state, when."""

    machine: Literal["query", "response"]
    status: str
    entered_at: AwareDatetime
    error: str | None = None


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


class VectorEmbedding(_Strict):
    """Spec 003's Vector Embedding: one stored point, as the stores write it.

    ``id`` is the chunk id (the Qdrant point id is derived from it), ``text_content`` the
    chunk's text (the embedded text adds its ``title > section`` line), ``vector`` the dense
    vector named ``dense`` and ``document_id`` the chunk's ``source_document``. Validate with
    ``context={"dimension": n}`` to check the vector against the collection's dimension.
    """

    id: str = Field(min_length=1)
    text_content: Text
    vector: list[float] = Field(min_length=1)
    document_id: str = Field(min_length=1)
    chunk_index: int = Field(ge=0)

    _text_not_blank = field_validator("text_content")(_non_blank_content)

    @field_validator("vector")
    @classmethod
    def _consistent_dimension(cls, value: list[float], info: ValidationInfo) -> list[float]:
        expected = (info.context or {}).get("dimension")
        if expected is not None and len(value) != expected:
            raise ValueError(f"vector has {len(value)} dimensions; the collection's vectors have {expected}")
        return value

    @classmethod
    def of(cls, chunk: DocumentChunk, embedding: EmbeddingResponse, *, dimension: int) -> VectorEmbedding:
        """Map a chunk and its embedding onto the spec's entity, checking the rules.

        Raises:
            ValidationError: empty text or vector, a negative chunk_index, or a vector whose
                length is not ``dimension``.
        """
        return cls.model_validate(
            {"id": chunk.chunk_id, "text_content": chunk.content, "vector": embedding.embedding_vector,
             "document_id": chunk.source_document, "chunk_index": chunk.chunk_index},
            context={"dimension": dimension})


class IngestSummary(BaseModel):
    """What one ingest run did."""

    files: int = 0
    chunks_added: int = 0
    chunks_updated: int = 0
    chunks_removed: int = 0
    chunks_skipped: int = 0
    files_failed: list[str] = Field(default_factory=list)
    #: Chunks not stored because they break a chunk rule: "<document>#<index>: <reason>".
    chunks_invalid: list[str] = Field(default_factory=list)
    #: Chunks stored after a repair (a URL with spaces percent-encoded).
    chunks_repaired: int = 0
    #: Files left out for safety or size: "<path>: <reason>" (a symbolic link, a FIFO ...).
    files_skipped: list[str] = Field(default_factory=list)
    #: A dry run: nothing was written; ``changes`` lists what a real run would do.
    dry_run: bool = False
    #: "add|update|remove <document> (<n> chunks)", filled by a dry run.
    changes: list[str] = Field(default_factory=list)
    #: Pages that look like instructions to an AI assistant (core/ingest/injection.py).
    instructions: list[str] = Field(default_factory=list)
    #: What the operator may want to change, nothing wrong with the files ("every page is under docs/").
    notices: list[str] = Field(default_factory=list)
    seconds: float = 0.0

    def line(self) -> str:
        """One-line human summary."""
        text = (
            f"{self.files} files: {self.chunks_added} chunks added, {self.chunks_updated} updated, "
            f"{self.chunks_removed} removed, {self.chunks_skipped} unchanged "
            f"in {self.seconds:.1f} s"
        )
        if self.dry_run:
            text = "dry run, nothing written: " + text.replace(" chunks added", " chunks to add").replace(
                " updated,", " to update,").replace(" removed,", " to remove,")
        if self.files_failed:
            text += f"; {len(self.files_failed)} file(s) skipped with errors"
        if self.files_skipped:
            text += f"; {len(self.files_skipped)} file(s) left out (links, special files, too large)"
        if self.chunks_repaired:
            text += f"; {self.chunks_repaired} chunk URL(s) repaired"
        if self.chunks_invalid:
            text += f"; {len(self.chunks_invalid)} invalid chunk(s) skipped"
        if self.instructions:
            text += f"; {len(self.instructions)} page(s) look like instructions to an assistant"
        return text
