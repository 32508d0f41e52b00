"""QdrantServerStore beyond the shared contract: what it sends to a server, and its errors.

A small aiohttp server on 127.0.0.1 plays the Qdrant REST API so the tests see the
real requests ``AsyncQdrantClient`` makes (cluster options, payload indexes, the
batch query with filters) and how HTTP failures become StoreErrors.
"""

from __future__ import annotations

import json
import socket
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web
from pydantic import SecretStr
from qdrant_client import AsyncQdrantClient, models

from core.errors import (
    CollectionNameError,
    CollectionNotFoundError,
    ConfigurationError,
    EmbeddingModelMismatchError,
    StoreError,
    StoreUnavailableError,
)
from core.fakes import FakeEmbedder
from core.models import DocumentChunk, EmbeddingRequest, RetrievalRequest, SparseVector
from core.settings import Settings
from core.stores.qdrant_server import META_KEY, QdrantServerStore, build_filter, point_id
from tests.support.loopback import start_app


def chunk(chunk_id: str, content: str = "Slack needs a bot token.", **extra: Any) -> DocumentChunk:
    return DocumentChunk(
        chunk_id=chunk_id, content=content, url="https://ragbot.dev/docs/slack", title="Slack",
        section="Slack > Tokens", chunk_index=0, source_document="slack.md", content_hash="h1",
        **extra,
    )


class FakeQdrant:
    """Enough of Qdrant's REST API for one collection's lifecycle; records every request."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, dict[str, Any] | None, dict[str, str]]] = []
        self.collections: dict[str, dict[str, Any]] = {}
        #: (method, path suffix) -> (status, body) answered instead of the normal reply.
        self.fail: dict[tuple[str, str], tuple[int, dict[str, Any]]] = {}
        self.query_points: list[list[dict[str, Any]]] = []
        #: Collections whose next GET answers 404 although they exist (a creation race).
        self.hide_once: set[str] = set()
        self._runner: web.AppRunner | None = None
        self.url = ""

    async def start(self) -> FakeQdrant:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner, port = await start_app(app)
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    def bodies(self, method: str, path: str) -> list[dict[str, Any] | None]:
        return [b for m, p, b, _ in self.requests if m == method and p == path]

    @staticmethod
    def _ok(result: Any, status: int = 200) -> web.Response:
        return web.json_response({"result": result, "status": "ok", "time": 0.0}, status=status)

    @staticmethod
    def _error(status: int, message: str) -> web.Response:
        return web.json_response({"status": {"error": message}, "time": 0.0}, status=status)

    async def _handle(self, request: web.Request) -> web.Response:
        body = await request.json() if request.can_read_body else None
        path = request.path
        self.requests.append((request.method, path, body, dict(request.headers)))
        for (method, suffix), (status, answer) in self.fail.items():
            if request.method == method and path.endswith(suffix):
                return web.json_response(answer, status=status)
        parts = path.strip("/").split("/")
        name = parts[1] if len(parts) > 1 else ""
        if request.method == "GET" and len(parts) == 2:
            if name not in self.collections or name in self.hide_once:
                self.hide_once.discard(name)
                return self._error(404, f"Not found: Collection `{name}` doesn't exist!")
            return self._ok(self.collections[name])
        if request.method == "PUT" and len(parts) == 2:
            if name in self.collections:
                return self._error(409, f"Wrong input: Collection `{name}` already exists!")
            assert body is not None
            self.collections[name] = await _collection_info(body)
            return self._ok(True)
        if request.method == "PUT" and parts[2:] == ["index"]:
            return self._ok({"operation_id": 1, "status": "completed"})
        if request.method == "POST" and parts[2:] == ["points", "query", "batch"]:
            return self._ok([{"points": p} for p in self.query_points])
        if request.method == "POST" and parts[2:] == ["points", "count"]:
            return self._ok({"count": 7})
        return self._error(500, f"FakeQdrant does not implement {request.method} {path}")


async def _collection_info(create_body: dict[str, Any]) -> dict[str, Any]:
    """The GET /collections/{name} result the server would give for a create request."""
    local = AsyncQdrantClient(location=":memory:")
    try:
        vectors = create_body["vectors"]
        await local.create_collection(
            "c",
            vectors_config={k: models.VectorParams(**v) for k, v in vectors.items()},
            sparse_vectors_config={
                k: models.SparseVectorParams(**v) for k, v in create_body["sparse_vectors"].items()
            },
            metadata=create_body.get("metadata"),
        )
        info = await local.get_collection("c")
        return json.loads(info.model_dump_json(exclude_none=True))
    finally:
        await local.close()


@pytest.fixture
async def fake_qdrant() -> AsyncIterator[FakeQdrant]:
    server = await FakeQdrant().start()
    yield server
    await server.close()


@pytest.fixture
async def server_store(fake_qdrant: FakeQdrant) -> AsyncIterator[QdrantServerStore]:
    store = QdrantServerStore(
        url=fake_qdrant.url, shard_number=3, replication_factor=2, write_consistency_factor=2, on_disk=True,
    )
    yield store
    await store.close()


# ----------------------------------------------------------------------------- construction


def test_from_settings_needs_a_url() -> None:
    with pytest.raises(ConfigurationError, match="QDRANT_URL"):
        QdrantServerStore.from_settings(Settings(_env_file=None))  # type: ignore[call-arg]


async def test_from_settings_passes_cluster_options() -> None:
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None, qdrant_url=":memory:", qdrant_shard_number=2, qdrant_replication_factor=3,
        qdrant_write_consistency_factor=2, qdrant_on_disk=True,
    )
    store = QdrantServerStore.from_settings(settings)
    try:
        assert store.url == ":memory:"
        assert (store._shard_number, store._replication_factor, store._write_consistency_factor,
                store._on_disk) == (2, 3, 2, True)
    finally:
        await store.close()


def test_write_consistency_cannot_exceed_replication() -> None:
    with pytest.raises(ConfigurationError, match="write_consistency_factor 3"):
        QdrantServerStore(url=":memory:", replication_factor=2, write_consistency_factor=3)


async def test_invalid_collection_name_is_an_input_error() -> None:
    store = QdrantServerStore(url=":memory:")
    with pytest.raises(CollectionNameError, match="bad name!"):
        await store.ensure_collection("bad name!", model_id="m", dimension=4)
    await store.close()


# ----------------------------------------------------------------------------- requests sent


async def test_create_sends_vectors_cluster_options_metadata_and_indexes(
    fake_qdrant: FakeQdrant, server_store: QdrantServerStore
) -> None:
    await server_store.ensure_collection("docs", model_id="cohere:embed-v4.0", dimension=1536)
    (create,) = fake_qdrant.bodies("PUT", "/collections/docs")
    assert create is not None
    assert create["vectors"] == {"dense": {"size": 1536, "distance": "Cosine", "on_disk": True}}
    assert create["sparse_vectors"] == {"bm25": {"index": {"on_disk": True}, "modifier": "idf"}}
    assert (create["shard_number"], create["replication_factor"], create["write_consistency_factor"]) == (
        3, 2, 2)
    assert create["on_disk_payload"] is True
    assert create["metadata"] == {META_KEY: {"model_id": "cohere:embed-v4.0", "dimension": 1536}}
    indexes = fake_qdrant.bodies("PUT", "/collections/docs/index")
    assert [(b or {}).get("field_name") for b in indexes] == ["source_document", "section", "tags", "url"]
    assert all((b or {}).get("field_schema") == "keyword" for b in indexes)
    # A second store (another process) finds the collection and checks the model from metadata.
    other = QdrantServerStore(url=fake_qdrant.url)
    await other.ensure_collection("docs", model_id="cohere:embed-v4.0", dimension=1536)
    with pytest.raises(EmbeddingModelMismatchError, match=r"cohere:embed-v4\.0.*local:bm25"):
        await other.ensure_collection("docs", model_id="local:bm25", dimension=256)
    await other.close()
    assert len(fake_qdrant.bodies("PUT", "/collections/docs")) == 1


async def test_create_race_compares_models(fake_qdrant: FakeQdrant, server_store: QdrantServerStore) -> None:
    # Another process created the collection between our GET (404) and our PUT (409).
    fake_qdrant.collections["docs"] = await _collection_info({
        "vectors": {"dense": {"size": 8, "distance": "Cosine"}},
        "sparse_vectors": {"bm25": {"modifier": "idf"}},
        "metadata": {META_KEY: {"model_id": "m", "dimension": 8}},
    })
    fake_qdrant.hide_once.add("docs")
    await server_store.ensure_collection("docs", model_id="m", dimension=8)
    with pytest.raises(EmbeddingModelMismatchError):
        await server_store.ensure_collection("docs", model_id="m2", dimension=8)
    methods = [(m, p) for m, p, _, _ in fake_qdrant.requests]
    assert methods == [
        ("GET", "/collections/docs"), ("PUT", "/collections/docs"), ("GET", "/collections/docs"),
    ]


async def test_search_sends_one_batch_with_filters(
    fake_qdrant: FakeQdrant, server_store: QdrantServerStore
) -> None:
    await server_store.ensure_collection("docs", model_id="m", dimension=4)
    cid = str(uuid.uuid4())
    payload = chunk(cid).payload()
    fake_qdrant.query_points = [
        [{"id": cid, "version": 1, "score": 0.9, "payload": payload}],
        [{"id": cid, "version": 1, "score": 3.5, "payload": payload}],
    ]
    request = RetrievalRequest(
        query_embedding=[1.0, 0.0, 0.0, 0.0], embedding_model="m",
        sparse_embedding=SparseVector(indices=[7, 9], values=[1.0, 1.0]),
        filters={"tags": ["slack", "discord"], "section": "Slack > Tokens"},
        collection_name="docs", candidates=25,
    )
    hits = await server_store.search(request)
    assert [h.chunk_id for h in hits.dense] == [cid] and hits.dense[0].score == pytest.approx(0.9)
    assert [h.chunk_id for h in hits.sparse] == [cid] and hits.sparse[0].payload == payload
    (batch,) = fake_qdrant.bodies("POST", "/collections/docs/points/query/batch")
    assert batch is not None
    dense_q, sparse_q = batch["searches"]
    assert dense_q["using"] == "dense" and dense_q["query"] == {"nearest": [1.0, 0.0, 0.0, 0.0]}
    assert sparse_q["using"] == "bm25"
    assert sparse_q["query"] == {"nearest": {"indices": [7, 9], "values": [1.0, 1.0]}}
    for q in (dense_q, sparse_q):
        assert q["limit"] == 25 and q["with_payload"] is True
        assert q["filter"]["must"] == [
            {"key": "tags", "match": {"any": ["slack", "discord"]}},
            {"key": "section", "match": {"any": ["Slack > Tokens"]}},
        ]


async def test_api_key_is_sent_as_header(fake_qdrant: FakeQdrant) -> None:
    with pytest.warns(UserWarning, match="insecure connection"):
        store = QdrantServerStore(url=fake_qdrant.url, api_key=SecretStr("test-key"))
    with pytest.raises(CollectionNotFoundError):
        await store.documents("docs")
    assert fake_qdrant.requests[0][3].get("api-key") == "test-key"
    await store.close()


# ----------------------------------------------------------------------------- failures


async def test_unreachable_server_is_unavailable() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    store = QdrantServerStore(url=f"http://127.0.0.1:{port}", timeout=2)
    with pytest.raises(StoreUnavailableError, match=f"127.0.0.1:{port} is unreachable") as err:
        await store.ensure_collection("docs", model_id="m", dimension=4)
    assert err.value.__cause__ is not None
    await store.close()


@pytest.mark.parametrize(
    ("status", "error", "match"),
    [(401, StoreUnavailableError, "QDRANT_API_KEY"), (503, StoreUnavailableError, "503"),
     (400, StoreError, "rejected get_collection")],
)
async def test_http_errors_are_store_errors(
    fake_qdrant: FakeQdrant, server_store: QdrantServerStore, status: int, error: type[Exception], match: str
) -> None:
    fake_qdrant.fail[("GET", "/collections/docs")] = (status, {"status": {"error": "nope"}, "time": 0})
    with pytest.raises(error, match=match) as err:
        await server_store.collection_info("docs")
    assert err.value.__cause__ is not None


async def test_missing_collection_on_server(fake_qdrant: FakeQdrant, server_store: QdrantServerStore) -> None:
    assert await server_store.collection_info("docs") is None
    with pytest.raises(CollectionNotFoundError, match="'docs'"):
        await server_store.delete("docs", [str(uuid.uuid4())])


# ----------------------------------------------------------------------------- local-mode details


async def test_collection_without_ragbot_metadata_is_refused() -> None:
    client = AsyncQdrantClient(location=":memory:")
    await client.create_collection(
        "foreign", vectors_config={"dense": models.VectorParams(size=4, distance=models.Distance.COSINE)}
    )
    store = QdrantServerStore(url=":memory:", client=client)
    with pytest.raises(EmbeddingModelMismatchError, match="no ragbot metadata"):
        await store.ensure_collection("foreign", model_id="m", dimension=4)
    await store.close()


async def test_non_uuid_chunk_ids_round_trip() -> None:
    store = QdrantServerStore(url=":memory:")
    embedder = FakeEmbedder(dimension=8, model_id="m")
    await store.ensure_collection("docs", model_id="m", dimension=8)
    chunks = [chunk("slack.md#0"), chunk("slack.md#1", content="Signing secrets verify requests.")]
    await store.upsert("docs", chunks, await embedder.embed_documents([c.content for c in chunks]))
    await store.upsert("docs", chunks[:1], await embedder.embed_documents([chunks[0].content]))
    docs = await store.documents("docs")
    assert docs["slack.md"].chunk_ids == frozenset({"slack.md#0", "slack.md#1"})
    emb = await embedder.embed_query(EmbeddingRequest(query_text="signing secrets"))
    hits = await store.search(RetrievalRequest(query_embedding=emb.embedding_vector, collection_name="docs"))
    assert hits.dense[0].chunk_id == "slack.md#1"
    await store.delete("docs", ["slack.md#1"])
    info = await store.collection_info("docs")
    assert info is not None and info.points == 1
    await store.close()


def test_point_ids_and_filters() -> None:
    cid = str(uuid.uuid4())
    assert point_id(cid) == cid
    assert point_id(cid.replace("-", "")) == cid
    assert point_id("a.md#0") == point_id("a.md#0") != point_id("a.md#1")
    uuid.UUID(point_id("a.md#0"))
    assert build_filter(None) is None and build_filter({}) is None
    flt = build_filter({"tags": ["a", "b"], "source_document": "x.md", "page_number": True})
    assert flt is not None and flt.must == [
        models.FieldCondition(key="tags", match=models.MatchAny(any=["a", "b"])),
        models.FieldCondition(key="source_document", match=models.MatchAny(any=["x.md"])),
        models.FieldCondition(key="page_number", match=models.MatchValue(value=True)),
    ]
