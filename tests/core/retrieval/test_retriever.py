"""HybridRetriever: the RetrievalRequest as the store's input, the RetrievalResponse as its output."""

from __future__ import annotations

import re

import pytest

from core.fakes import FakeEmbedder, InMemoryVectorStore, _term_id
from core.models import ChunkState, DocumentChunk, RetrievedChunk
from core.protocols import Hit, HybridHits
from core.retrieval.ranking import NEAR_BEST, Fused
from core.retrieval.retriever import (
    HybridRetriever,
    Ranked,
    bad_chunk_reason,
    by_score,
    chunk_from_payload,
    holding_quoted,
    quoted_floor,
)

WORD = re.compile(r"[a-z0-9]+")
DOCS = {
    "install.md": ("Install", "Install ragbot with make demo; the demo ingests the user guide."),
    "slack.md": ("Slack", "Put the Slack bot token in SLACK_BOT_TOKEN and run ragbot serve."),
    "testing.md": ("Testing", "Run make test to lint and test ragbot."),
}


def terms(text: str) -> frozenset[int]:
    return frozenset(_term_id(w) for w in WORD.findall(text.lower()) if len(w) > 2)


def payload(name: str, **kw: object) -> dict[str, object]:
    title, text = DOCS.get(name, ("T", "some text here"))
    return {"chunk_id": name, "content": text, "url": f"https://ragbot.dev/docs/{name[:-3]}", "title": title,
            "section": title, "chunk_index": 0, "source_document": name, **kw}


async def retriever(collection: str = "docs") -> HybridRetriever:
    embedder = FakeEmbedder()
    store = InMemoryVectorStore()
    for name in ("docs", "other"):
        await store.ensure_collection(name, model_id=embedder.model_id, dimension=embedder.dimension)
    chunks = [DocumentChunk.model_validate({**payload(n), "content_hash": "h"}) for n in DOCS]
    await store.upsert("docs", chunks, await embedder.embed_documents([c.content for c in chunks]))
    await store.upsert("other", chunks[:1], await embedder.embed_documents([chunks[0].content]))
    return HybridRetriever(embedder=embedder, store=store, terms=terms, collection=collection, candidates=50,
                           dense_weight=0.35)


async def test_the_request_carries_collection_depth_and_options() -> None:
    r = await retriever()
    emb = await r.embed("slack bot token")
    assert emb.query_text == "slack bot token", "EmbeddingResponse.query_text is filled"
    request = r.build_request("slack bot token", emb, top_k=100, threshold=0.2, collection="other",
                              filters={"source_document": "install.md"})
    assert (request.top_k, request.depth, request.threshold) == (20, 100, 0.2)
    assert request.collection_name == "other"
    hits = await r.search(request)
    assert {h.chunk_id for h in hits.dense} == {"install.md"}, "the store searched the request's collection"


async def test_store_returns_depth_hits_per_retriever() -> None:
    r = await retriever()
    emb = await r.embed("ragbot")
    request = r.build_request("ragbot", emb, top_k=1).model_copy(update={"candidates": 2})
    hits = await r.search(request)
    assert len(hits.dense) == 2 and len(hits.sparse) <= 2


async def test_response_holds_validated_chunks_best_score_first() -> None:
    r = await retriever()
    text = "slack bot token ragbot"
    emb = await r.embed(text)
    request = r.build_request(text, emb, top_k=3, threshold=0.0)
    hits = await r.search(request)
    ranked = r.rank(text, hits, top_k=3, threshold=0.0)
    response = r.respond(request, hits, ranked)
    chunks = response.retrieved_chunks
    assert chunks and all(c.state is ChunkState.VALIDATED for c in chunks)
    assert [c.score for c in chunks] == sorted((c.score for c in chunks), reverse=True)
    stats = response.retrieval_stats
    assert (stats.total_candidates, stats.search_threshold, stats.collection_name) == (
        hits.total_candidates, 0.0, "docs")
    assert response.total_matches >= len(chunks) and response.dropped_chunks == []


def test_a_bad_stored_chunk_is_dropped_and_named() -> None:
    good, spaced, long = (payload("install.md"), payload("bad.md", url="https://ragbot.dev/my docs/bad"),
                          payload("long.md", content="x" * 50_001))
    missing = {k: v for k, v in payload("gone.md").items() if k != "source_document"}
    picked = [(Fused(str(p["chunk_id"]), 1.0, 0.5, None, p), 0.5) for p in (good, spaced, long, missing)]
    ranked = Ranked(picked=picked, algorithm="convex", seconds=0.0, relevances={})
    retriever_ = HybridRetriever(embedder=FakeEmbedder(), store=InMemoryVectorStore(), terms=terms,
                                 collection="docs", candidates=10, dense_weight=0.35)
    request = retriever_.build_request("x", FakeEmbedder()._vectors("x"), top_k=5, threshold=0.1)
    hits = HybridHits(dense=[Hit("install.md", 0.5, good)], sparse=[])
    response = retriever_.respond(request, hits, ranked)
    assert [c.chunk_id for c in response.retrieved_chunks] == ["install.md"]
    assert response.dropped_chunks == [
        "bad.md: url: url 'https://ragbot.dev/my docs/bad' is not an http(s):// or file:// URL",
        "long.md: content: String should have at most 50000 characters",
        "gone.md: the stored payload has no 'source_document'",
    ]


def test_chunk_from_payload_falls_back_to_the_document_for_a_title() -> None:
    chunk = chunk_from_payload(payload("install.md", title=""), 0.4)
    assert chunk.title == "install.md" and chunk.state is ChunkState.RETRIEVED
    with pytest.raises(KeyError) as err:
        chunk_from_payload({}, 0.4)
    assert bad_chunk_reason(err.value) == "the stored payload has no 'chunk_id'"


def test_by_score_is_stable() -> None:
    chunks = [RetrievedChunk.model_validate({**payload(n), "score": s})
              for n, s in (("a.md", 0.3), ("b.md", 0.9), ("c.md", 0.3))]
    assert [c.chunk_id for c in by_score(chunks)] == ["b.md", "a.md", "c.md"]


async def test_answerability_signals_read_the_same_matching_candidates() -> None:
    r = await retriever()
    text = "slack bot token ragbot serve"
    emb = await r.embed(text)
    request = r.build_request(text, emb, top_k=3, threshold=0.0)
    ranked = r.rank(text, await r.search(request), top_k=3, threshold=0.15)
    assert ranked.top_relevances and len(ranked.top_held) == len(ranked.top_relevances)
    query = terms(text)
    # Each candidate's relevance is its share of the question's terms (discounted by meaning),
    # so the count it holds can be no more than share x question terms allows.
    for relevance, held in zip(ranked.top_relevances, ranked.top_held, strict=True):
        assert 0 < held <= len(query) and relevance <= held / len(query) + 1e-9
    assert ranked.top_held[0] == len(query & terms(" ".join(DOCS["slack.md"])))


def test_a_chunk_holding_the_quoted_phrase_reaches_the_threshold() -> None:
    # Chat words around "'morphological computation'" keep its share of the question's terms
    # low; the chunk that holds the very phrase must still be quoted, not one holding "lol".
    question = "prof kept saying 'morphological computation' lol, what does it mean in plain english?"
    defining = Fused("def", 0.9, 0.3, 1.0, {"content": "Morphological  computation: the body does the work."})
    chatty = Fused("chat", 0.8, 0.3, 1.0, {"content": "What does it mean in plain English? Say it again."})
    relevances = {"def": 0.12, "chat": 0.2}
    assert holding_quoted(question, ["Morphological computation.", "morphological"]) == [True, False]
    assert quoted_floor(question, [defining, chatty], relevances, 0.15) == {"def": 0.15, "chat": 0.2}
    assert quoted_floor("what does it mean?", [defining, chatty], relevances, 0.15) == relevances
    assert relevances == {"def": 0.12, "chat": 0.2}  # the answerability's relevances are left as they were


async def test_a_quoted_phrase_lets_its_chunk_through_a_configured_floor_only() -> None:
    r = await retriever()
    text = "where does the 'slack bot token' go? my team lead asks and nobody here knows why"
    hits = await r.search(r.build_request(text, await r.embed(text), top_k=3, threshold=0.0))
    soft = r.rank(text, hits, top_k=3, threshold=0.9, near_best=NEAR_BEST)
    assert [f.chunk_id for f, _ in soft.picked] == ["slack.md"]
    assert soft.picked[0][1] == soft.relevances["slack.md"] < 0.9  # scored by its own relevance
    assert r.rank(text, hits, top_k=3, threshold=0.9).picked == []  # an asker's threshold is hard
