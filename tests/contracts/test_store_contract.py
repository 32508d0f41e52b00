"""One VectorStore contract, run unchanged against every backend.

Backends: the reference ``InMemoryVectorStore`` (core/fakes.py), ``QdrantServerStore``
in qdrant-client's local ``:memory:`` mode, and the embedded ``EdgeVectorStore``.
Vectors come from ``FakeEmbedder`` so the tests need no model weights.
"""

from __future__ import annotations

import importlib
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from core.errors import (
    CollectionNameError,
    CollectionNotFoundError,
    EmbeddingModelMismatchError,
    StoreUnavailableError,
)
from core.fakes import FakeEmbedder, InMemoryVectorStore
from core.models import DocumentChunk, EmbeddingRequest, EmbeddingResponse, RetrievalRequest
from core.protocols import DocumentState, HybridHits, VectorStore
from core.stores.qdrant_server import QdrantServerStore

COLLECTION = "contract"
DIM = 32
MODEL = "fake-hash-32"


def _memory(tmp_path: Path) -> VectorStore:
    return InMemoryVectorStore()


def _qdrant_local(tmp_path: Path) -> VectorStore:
    return QdrantServerStore(url=":memory:")


def _edge(tmp_path: Path) -> VectorStore:
    try:
        module = importlib.import_module("core.stores.qdrant_embedded")
    except ModuleNotFoundError as exc:
        if exc.name != "core.stores.qdrant_embedded":
            raise
        pytest.skip("core/stores/qdrant_embedded.py (EdgeVectorStore) does not exist yet")
    store: VectorStore = module.EdgeVectorStore(root=tmp_path / "qdrant")
    return store


FACTORIES: dict[str, Callable[[Path], VectorStore]] = {
    "memory": _memory,
    "qdrant-local": _qdrant_local,
    "edge": _edge,
}


@pytest.fixture(params=list(FACTORIES))
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[VectorStore]:
    backend = FACTORIES[request.param](tmp_path)
    assert isinstance(backend, VectorStore)
    yield backend
    await backend.close()  # close() is idempotent: some tests closed it already


def cid(name: str) -> str:
    """A deterministic uuid chunk id, like ingestion makes."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"ragbot-test/{name}"))


def make_chunk(
    doc: str, index: int, content: str, *, section: str, tags: list[str], content_hash: str = ""
) -> DocumentChunk:
    return DocumentChunk(
        chunk_id=cid(f"{doc}#{index}"),
        content=content,
        url=f"https://ragbot.dev/docs/{doc.removesuffix('.md')}",
        title=doc.removesuffix(".md").title(),
        section=section,
        headings=section.split(" > "),
        chunk_index=index,
        source_document=doc,
        tags=tags,
        content_hash=content_hash or f"hash-{doc}",
    )


CORPUS = [
    make_chunk("install.md", 0, "Install with pip and run the setup wizard once.",
               section="Install > Quick start", tags=["setup", "cli"]),
    make_chunk("slack.md", 0, "Slack needs a bot token and a signing secret from the app page.",
               section="Slack > Tokens", tags=["slack", "integration"]),
    make_chunk("discord.md", 0, "Discord wants its bot token plus the guild ids to register commands.",
               section="Discord > Setup", tags=["discord", "integration"]),
    make_chunk("ingest.md", 0, "Ingest markdown folders recursively; headings become sections.",
               section="Ingest > Files", tags=["cli"]),
    make_chunk("ingest.md", 1, "Unchanged documents are skipped by comparing their content hash.",
               section="Ingest > Incremental", tags=["cli"]),
]
BY_ID = {c.chunk_id: c for c in CORPUS}


@pytest.fixture
def embedder() -> FakeEmbedder:
    return FakeEmbedder(dimension=DIM, model_id=MODEL)


async def load(store: VectorStore, embedder: FakeEmbedder, chunks: list[DocumentChunk] = CORPUS) -> None:
    await store.ensure_collection(COLLECTION, model_id=embedder.model_id, dimension=embedder.dimension)
    await store.upsert(COLLECTION, chunks, await embedder.embed_documents([c.content for c in chunks]))


async def search(
    store: VectorStore, embedder: FakeEmbedder, text: str, *,
    filters: dict[str, Any] | None = None, candidates: int = 10, name: str = COLLECTION,
) -> HybridHits:
    emb = await embedder.embed_query(EmbeddingRequest(query_text=text))
    request = RetrievalRequest(
        query_embedding=emb.embedding_vector, sparse_embedding=emb.sparse_vector, query_text=text,
        embedding_model=embedder.model_id, filters=filters, collection_name=name, candidates=candidates,
        top_k=min(candidates, 20),
    )
    return await store.search(request)


def ids(hits: HybridHits) -> tuple[set[str], set[str]]:
    return {h.chunk_id for h in hits.dense}, {h.chunk_id for h in hits.sparse}


# ----------------------------------------------------------------------------- collections


async def test_ensure_collection_is_idempotent(store: VectorStore, embedder: FakeEmbedder) -> None:
    await store.ensure_collection(COLLECTION, model_id=MODEL, dimension=DIM)
    await store.ensure_collection(COLLECTION, model_id=MODEL, dimension=DIM)
    info = await store.collection_info(COLLECTION)
    assert info is not None
    assert (info.name, info.model_id, info.dimension, info.points) == (COLLECTION, MODEL, DIM, 0)
    await load(store, embedder)
    await store.ensure_collection(COLLECTION, model_id=MODEL, dimension=DIM)
    info = await store.collection_info(COLLECTION)
    assert info is not None and info.points == len(CORPUS), "ensure must not wipe the points"


async def test_collection_info_is_none_for_a_missing_collection(store: VectorStore) -> None:
    assert await store.collection_info("never-created") is None


async def test_collection_info_counts_points(store: VectorStore, embedder: FakeEmbedder) -> None:
    await load(store, embedder, CORPUS[:3])
    info = await store.collection_info(COLLECTION)
    assert info is not None and info.points == 3
    await load(store, embedder, CORPUS[3:])
    info = await store.collection_info(COLLECTION)
    assert info is not None and info.points == len(CORPUS)


@pytest.mark.parametrize(("model_id", "dimension"), [("other-model", DIM), (MODEL, DIM * 2)])
async def test_ensure_refuses_another_model_or_dimension(
    store: VectorStore, model_id: str, dimension: int
) -> None:
    await store.ensure_collection(COLLECTION, model_id=MODEL, dimension=DIM)
    with pytest.raises(EmbeddingModelMismatchError) as err:
        await store.ensure_collection(COLLECTION, model_id=model_id, dimension=dimension)
    assert (err.value.stored_model, err.value.stored_dim) == (MODEL, DIM)
    assert (err.value.model, err.value.dim) == (model_id, dimension)
    assert MODEL in str(err.value) and model_id in str(err.value)
    info = await store.collection_info(COLLECTION)
    assert info is not None and (info.model_id, info.dimension) == (MODEL, DIM), "refusal changed nothing"


async def test_collections_are_independent(store: VectorStore, embedder: FakeEmbedder) -> None:
    await load(store, embedder)
    await store.ensure_collection("other", model_id="another-model", dimension=8)
    other = await store.collection_info("other")
    assert other is not None and (other.model_id, other.dimension, other.points) == ("another-model", 8, 0)
    info = await store.collection_info(COLLECTION)
    assert info is not None and info.points == len(CORPUS)


async def test_search_refuses_another_model(store: VectorStore, embedder: FakeEmbedder) -> None:
    await load(store, embedder)
    emb = await embedder.embed_query(EmbeddingRequest(query_text="slack token"))
    request = RetrievalRequest(query_embedding=emb.embedding_vector, embedding_model="cohere:embed-v4.0",
                               collection_name=COLLECTION)
    with pytest.raises(EmbeddingModelMismatchError) as err:
        await store.search(request)
    assert err.value.stored_model == MODEL and err.value.model == "cohere:embed-v4.0"


async def test_search_refuses_another_dimension(store: VectorStore, embedder: FakeEmbedder) -> None:
    await load(store, embedder)
    request = RetrievalRequest(query_embedding=[0.1] * (DIM + 1), embedding_model=MODEL,
                               collection_name=COLLECTION)
    with pytest.raises(EmbeddingModelMismatchError) as err:
        await store.search(request)
    assert (err.value.stored_dim, err.value.dim) == (DIM, DIM + 1)


async def test_missing_collection_is_reported(store: VectorStore, embedder: FakeEmbedder) -> None:
    with pytest.raises(CollectionNotFoundError):
        await search(store, embedder, "slack token", name="never-created")
    with pytest.raises(CollectionNotFoundError):
        await store.delete("never-created", [cid("x")])
    with pytest.raises(CollectionNotFoundError):
        await store.documents("never-created")


async def test_closed_store_is_unavailable(store: VectorStore, embedder: FakeEmbedder) -> None:
    await load(store, embedder)
    await store.close()
    with pytest.raises(StoreUnavailableError):
        await search(store, embedder, "slack token")
    with pytest.raises(StoreUnavailableError):
        await store.ensure_collection(COLLECTION, model_id=MODEL, dimension=DIM)
    with pytest.raises(StoreUnavailableError):
        await store.collection_info(COLLECTION)
    with pytest.raises(StoreUnavailableError):
        await store.upsert(COLLECTION, CORPUS[:1], await embedder.embed_documents([CORPUS[0].content]))


# ----------------------------------------------------------------------------- search


@pytest.mark.parametrize("chunk", CORPUS, ids=lambda c: f"{c.source_document}#{c.chunk_index}")
async def test_each_chunk_is_found_first_by_its_own_text(
    store: VectorStore, embedder: FakeEmbedder, chunk: DocumentChunk
) -> None:
    await load(store, embedder)
    hits = await search(store, embedder, chunk.content)
    assert hits.dense and hits.dense[0].chunk_id == chunk.chunk_id
    assert hits.sparse and hits.sparse[0].chunk_id == chunk.chunk_id


async def test_search_returns_the_payload_and_orders_scores(
    store: VectorStore, embedder: FakeEmbedder
) -> None:
    await load(store, embedder)
    hits = await search(store, embedder, "bot token for slack signing secret")
    top = hits.dense[0]
    assert top.chunk_id == CORPUS[1].chunk_id
    assert top.payload == CORPUS[1].payload()
    assert hits.sparse[0].chunk_id == CORPUS[1].chunk_id
    for hit_list in (hits.dense, hits.sparse):
        scores = [h.score for h in hit_list]
        assert scores == sorted(scores, reverse=True)
        assert len({h.chunk_id for h in hit_list}) == len(hit_list), "no duplicate hits"


async def test_sparse_hits_share_a_term_with_the_query(store: VectorStore, embedder: FakeEmbedder) -> None:
    await load(store, embedder)
    hits = await search(store, embedder, "guild commands")
    assert [h.chunk_id for h in hits.sparse] == [CORPUS[2].chunk_id]
    assert all(h.score > 0 for h in hits.sparse)


async def test_candidates_bounds_each_list(store: VectorStore, embedder: FakeEmbedder) -> None:
    await load(store, embedder)
    hits = await search(store, embedder, "bot token", candidates=1)
    assert len(hits.dense) == 1 and len(hits.sparse) == 1
    hits = await search(store, embedder, "bot token", candidates=50)
    assert len(hits.dense) == len(CORPUS)


async def test_dense_only_request_gives_no_sparse_hits(store: VectorStore, embedder: FakeEmbedder) -> None:
    await load(store, embedder)
    emb = await embedder.embed_query(EmbeddingRequest(query_text="slack signing secret"))
    request = RetrievalRequest(query_embedding=emb.embedding_vector, embedding_model=MODEL,
                               collection_name=COLLECTION)
    hits = await store.search(request)
    assert hits.dense[0].chunk_id == CORPUS[1].chunk_id
    assert hits.sparse == []


# ----------------------------------------------------------------------------- filters


async def test_filter_on_source_document(store: VectorStore, embedder: FakeEmbedder) -> None:
    await load(store, embedder)
    hits = await search(store, embedder, "bot token hash", filters={"source_document": "ingest.md"})
    dense, sparse = ids(hits)
    assert dense == {CORPUS[3].chunk_id, CORPUS[4].chunk_id}
    assert sparse <= dense and CORPUS[4].chunk_id in sparse


async def test_filter_on_a_list_of_source_documents(store: VectorStore, embedder: FakeEmbedder) -> None:
    await load(store, embedder)
    hits = await search(store, embedder, "bot token", filters={"source_document": ["slack.md", "install.md"]})
    dense, sparse = ids(hits)
    assert dense == {CORPUS[0].chunk_id, CORPUS[1].chunk_id}
    assert sparse == {CORPUS[1].chunk_id}


async def test_filter_on_section(store: VectorStore, embedder: FakeEmbedder) -> None:
    await load(store, embedder)
    hits = await search(store, embedder, "content hash", filters={"section": "Ingest > Incremental"})
    assert ids(hits) == ({CORPUS[4].chunk_id}, {CORPUS[4].chunk_id})


async def test_filter_on_tags_matches_any_tag(store: VectorStore, embedder: FakeEmbedder) -> None:
    await load(store, embedder)
    hits = await search(store, embedder, "bot token", filters={"tags": ["slack", "discord"]})
    dense, sparse = ids(hits)
    assert dense == {CORPUS[1].chunk_id, CORPUS[2].chunk_id}
    assert sparse == {CORPUS[1].chunk_id, CORPUS[2].chunk_id}
    hits = await search(store, embedder, "bot token", filters={"tags": "cli"})
    assert ids(hits)[0] == {CORPUS[0].chunk_id, CORPUS[3].chunk_id, CORPUS[4].chunk_id}


async def test_filters_combine_with_and(store: VectorStore, embedder: FakeEmbedder) -> None:
    await load(store, embedder)
    hits = await search(
        store, embedder, "bot token", filters={"tags": ["integration"], "source_document": "discord.md"}
    )
    assert ids(hits)[0] == {CORPUS[2].chunk_id}
    hits = await search(store, embedder, "bot token", filters={"tags": "slack", "section": "Discord > Setup"})
    assert ids(hits) == (set(), set())


# ----------------------------------------------------------------------------- writes


async def test_upsert_same_id_replaces(store: VectorStore, embedder: FakeEmbedder) -> None:
    await load(store, embedder)
    changed = CORPUS[1].model_copy(update={
        "content": "Slack apps now use socket mode with an app-level token.", "content_hash": "hash-2",
    })
    await store.upsert(COLLECTION, [changed], await embedder.embed_documents([changed.content]))
    info = await store.collection_info(COLLECTION)
    assert info is not None and info.points == len(CORPUS)
    hits = await search(store, embedder, "socket mode app-level token")
    assert hits.dense[0].chunk_id == changed.chunk_id
    assert hits.dense[0].payload["content"] == changed.content
    assert [h.chunk_id for h in hits.dense].count(changed.chunk_id) == 1
    old = await search(store, embedder, "signing secret")
    assert changed.chunk_id not in ids(old)[1], "the old sparse vector must be gone"
    docs = await store.documents(COLLECTION)
    slack = docs["slack.md"]
    assert (slack.content_hash, slack.chunk_ids) == ("hash-2", frozenset({changed.chunk_id}))


async def test_delete_removes_and_ignores_unknown_ids(store: VectorStore, embedder: FakeEmbedder) -> None:
    await load(store, embedder)
    await store.delete(COLLECTION, [CORPUS[1].chunk_id, cid("never-stored")])
    info = await store.collection_info(COLLECTION)
    assert info is not None and info.points == len(CORPUS) - 1
    hits = await search(store, embedder, CORPUS[1].content)
    assert CORPUS[1].chunk_id not in ids(hits)[0] | ids(hits)[1]
    assert "slack.md" not in await store.documents(COLLECTION)
    await store.delete(COLLECTION, [])


async def test_documents_groups_chunk_ids_by_source(store: VectorStore, embedder: FakeEmbedder) -> None:
    await store.ensure_collection(COLLECTION, model_id=MODEL, dimension=DIM)
    assert await store.documents(COLLECTION) == {}
    await load(store, embedder)
    docs = await store.documents(COLLECTION)
    assert {name: (d.content_hash, d.chunk_ids) for name, d in docs.items()} == {
        "install.md": ("hash-install.md", frozenset({CORPUS[0].chunk_id})),
        "slack.md": ("hash-slack.md", frozenset({CORPUS[1].chunk_id})),
        "discord.md": ("hash-discord.md", frozenset({CORPUS[2].chunk_id})),
        "ingest.md": ("hash-ingest.md", frozenset({CORPUS[3].chunk_id, CORPUS[4].chunk_id})),
    }
    # What `ragbot validate` writes its sample queries from: title, URL, sections in chunk order.
    assert docs["ingest.md"] == DocumentState(
        "hash-ingest.md", frozenset({CORPUS[3].chunk_id, CORPUS[4].chunk_id}), title="Ingest",
        url=CORPUS[3].url, sections=("Ingest > Files", "Ingest > Incremental"))


async def test_documents_pages_through_many_chunks(store: VectorStore, embedder: FakeEmbedder) -> None:
    many = [
        make_chunk(f"doc{i % 7}.md", i, f"Paragraph {i} about topic {i % 13}.", section="S", tags=[])
        for i in range(1200)
    ]
    await load(store, embedder, many)
    docs = await store.documents(COLLECTION)
    assert sorted(docs) == [f"doc{i}.md" for i in range(7)]
    assert sum(len(d.chunk_ids) for d in docs.values()) == 1200
    assert docs["doc3.md"].chunk_ids == frozenset(c.chunk_id for c in many if c.source_document == "doc3.md")


# ----------------------------------------------------------------------------- identifiers


async def test_non_uuid_chunk_ids_are_stored_and_reported_as_given(
    store: VectorStore, embedder: FakeEmbedder
) -> None:
    odd = CORPUS[0].model_copy(update={"chunk_id": "install.md#0"})
    await load(store, embedder, [odd])
    hits = await search(store, embedder, "install setup wizard")
    assert [h.chunk_id for h in hits.dense] == ["install.md#0"]
    await store.delete(COLLECTION, ["install.md#0"])
    info = await store.collection_info(COLLECTION)
    assert info is not None and info.points == 0


@pytest.mark.parametrize("name", ["bad name", "a/b", ""])
async def test_invalid_collection_names_are_refused(store: VectorStore, name: str) -> None:
    with pytest.raises(CollectionNameError, match="collection name"):
        await store.ensure_collection(name, model_id=MODEL, dimension=DIM)


async def test_upsert_checks_each_point_as_a_vector_embedding(store: VectorStore,
                                                              embedder: FakeEmbedder) -> None:
    """Spec 003's rules before any write: the vector's dimension is the collection's."""
    await store.ensure_collection(COLLECTION, model_id=MODEL, dimension=DIM)
    short = EmbeddingResponse(embedding_vector=[0.5] * (DIM - 1), model_used=MODEL)
    good = (await embedder.embed_documents([CORPUS[1].content]))[0]
    with pytest.raises(EmbeddingModelMismatchError) as err:
        await store.upsert(COLLECTION, CORPUS[:2], [good, short])
    assert (err.value.stored_dim, err.value.dim) == (DIM, DIM - 1)
    info = await store.collection_info(COLLECTION)
    assert info is not None and info.points == 0, "nothing of the batch was written"
    with pytest.raises(ValueError, match="2 chunks but 1 embeddings"):
        await store.upsert(COLLECTION, CORPUS[:2], [good])
