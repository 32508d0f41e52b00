"""Local embeddings load offline and produce the vectors the store expects."""

from __future__ import annotations

import math
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from core.embedders import local as embeddings
from core.embedders.local import LOCAL_MODEL_ID, LocalEmbedder, load_wordllama
from core.errors import StoreUnavailableError
from core.models import DocumentChunk, EmbeddingRequest
from core.stores.qdrant_embedded import EdgeVectorStore
from tests.support.paths import ROOT


def test_wordllama_loads_without_opening_a_network_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    attempts: list[object] = []

    def refuse(self: socket.socket, address: object) -> None:
        attempts.append(address)
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    load_wordllama.cache_clear()
    try:
        model = load_wordllama()
        assert model.embed(["robot"]).shape == (1, embeddings.WORDLLAMA_DIM)
    finally:
        load_wordllama.cache_clear()
    assert attempts == []


async def test_query_embedding_is_unit_dense_plus_sparse() -> None:
    embedder = LocalEmbedder()
    response = await embedder.embed_query(EmbeddingRequest(query_text="How do ROS 2 nodes communicate?"))
    assert response.model_used == LOCAL_MODEL_ID == embedder.model_id
    assert response.dimension == embedder.dimension == 256
    assert math.isclose(sum(v * v for v in response.embedding_vector), 1.0, rel_tol=1e-3)
    assert response.sparse_vector is not None
    # Stopwords ("how", "do") are dropped; the query weighs each remaining term once.
    assert len(response.sparse_vector.indices) == 4
    assert set(response.sparse_vector.values) == {1.0}


async def test_documents_and_queries_share_term_ids() -> None:
    embedder = LocalEmbedder()
    [doc] = await embedder.embed_documents(["Nodes communicate over topics and services."])
    query = embedder.sparse_query("communicating nodes")
    assert doc.sparse_vector is not None
    assert set(query.indices) <= set(doc.sparse_vector.indices)  # stemming maps both forms together


def test_terms_are_the_query_term_ids_and_a_passage_is_read_once() -> None:
    embedder = LocalEmbedder()
    passage = "Nodes communicate over topics, services and actions. " * 5
    texts = ["Nodes communicate over topics.", passage]
    assert [embedder.terms(t) for t in texts] == [frozenset(embedder.sparse_query(t).indices) for t in texts]
    assert embedder.terms(passage) is embedder.terms(passage)  # kept for the next question
    assert embedder.terms(texts[0]) is not embedder.terms(texts[0])  # a short text is not kept


def test_similarity_orders_related_texts_first() -> None:
    embedder = LocalEmbedder()
    near = embedder.similarity("robot arm kinematics", "inverse kinematics of a robotic manipulator")
    far = embedder.similarity("robot arm kinematics", "sourdough bread recipe")
    assert near > far


async def test_second_process_gets_a_clear_lock_error(tmp_path: Path) -> None:
    store = EdgeVectorStore(root=tmp_path)
    await store.ensure_collection("kb", model_id="m", dimension=4)
    await store.upsert("kb", [DocumentChunk(chunk_id="00000000-0000-0000-0000-000000000001", content="x",
                                            url="file:///x", title="x", chunk_index=0,
                                            source_document="x.md", content_hash="h")],
                       [embeddings.EmbeddingResponse(embedding_vector=[1, 0, 0, 0], model_used="m")])
    script = textwrap.dedent(f"""
        import asyncio
        from pathlib import Path
        from core.stores.qdrant_embedded import EdgeVectorStore
        from core.errors import StoreUnavailableError
        async def main():
            try:
                await EdgeVectorStore(root=Path({str(tmp_path)!r})).collection_info("kb")
            except StoreUnavailableError as exc:
                print("refused:", exc)
        asyncio.run(main())
    """)
    try:
        out = subprocess.run(  # noqa: ASYNC221 - the point is a second process holding no lock
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                             cwd=ROOT)
    finally:
        await store.close()
    assert "refused:" in out.stdout and "ragbot serve" in out.stdout, out.stderr
    assert "WouldBlock" not in out.stdout
    with pytest.raises(StoreUnavailableError, match="closed"):
        await store.collection_info("kb")


def test_passage_vectors_are_cached_and_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from core.embedders import local as local_module

    monkeypatch.setattr(local_module, "_VECTOR_CACHE", 3)
    embedder = local_module.LocalEmbedder()
    texts = ["robots move joints", "gazebo simulates physics", "nodes publish topics"]
    first = embedder.cosines("how do robots move?", texts)
    assert embedder.cosines("how do robots move?", texts) == pytest.approx(first)
    assert first[0] == max(first)
    embedder.cosines("anything", ["a fourth passage about sensors"])
    assert len(embedder._vectors) == 3 and "robots move joints" not in embedder._vectors
