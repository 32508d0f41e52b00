"""Retrieval evaluation on BEIR-format datasets (``ragbot eval retrieval``).

A BEIR dataset is a folder with ``corpus.jsonl`` (``_id``, ``title``, ``text``),
``queries.jsonl`` (``_id``, ``text``) and ``qrels/<split>.tsv`` (a header, then
``query-id  corpus-id  score``). The corpus is ingested once, one chunk per
document, into a throw-away embedded collection under a cache folder keyed by
everything that decides the index; every query of the split then goes through
the bot's own ``HybridRetriever`` (embed -> search -> fuse -> relevance), with
``top_k`` up to 100 and no threshold. Metrics are the usual BEIR ones,
computed here as pure functions: nDCG@10 (linear gains), Recall@10,
Recall@100 and MRR@10, plus per-query latency percentiles.

``bm25s`` (PyStemmer English stemmer, English stopwords, its default Lucene
BM25) is the optional baseline, run over the same corpus in the same process.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from core.errors import InputError
from core.eval.beir import BeirDataset, load_beir
from core.eval.metrics import Row, ratio, score_run
from core.models import DocumentChunk
from core.protocols import Embedder
from core.retrieval.retriever import HybridRetriever
from core.settings import Settings

#: Bump when the way the corpus is indexed changes, so stale caches are not reused.
INDEX_VERSION = "1"
_NAMESPACE = uuid.UUID("9d7c2f4e-58b1-4c61-a0c3-2b9e41d3f7aa")
_COMPLETE = "complete.json"
_BATCH = 512


# --------------------------------------------------------------------------- indexing


def document_text(title: str, text: str, *, title_repeat: int) -> str:
    """The text a corpus document is embedded from: its title ``title_repeat`` times, then its text."""
    lines = [title] * title_repeat if title.strip() else []
    return "\n".join([*lines, text]).strip()


def index_key(corpus_path: Path, *, model_id: str, title_repeat: int) -> str:
    """Hash of everything that decides the index: corpus file, embedding model, indexing settings."""
    stat = corpus_path.stat()
    parts = (INDEX_VERSION, str(corpus_path.resolve()), str(stat.st_size), str(stat.st_mtime_ns),
             model_id, str(title_repeat))
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:16]


def corpus_chunks(dataset: BeirDataset) -> list[DocumentChunk]:
    """One DocumentChunk per corpus document (chunk id = uuid5 of the document id)."""
    base = dataset.corpus_path.resolve().as_uri()
    chunks = []
    for doc_id, (title, text) in dataset.corpus.items():
        content = text if text.strip() else title
        if not content.strip():
            continue
        chunks.append(DocumentChunk(
            chunk_id=str(uuid.uuid5(_NAMESPACE, doc_id)), content=content, url=f"{base}#{doc_id}",
            title=title, chunk_index=0, source_document=doc_id, content_hash=doc_id,
        ))
    return chunks


@dataclass(slots=True)
class EvalIndex:
    """An opened evaluation index."""

    store: Any
    collection: str
    folder: Path
    built_seconds: float | None  # None: reused from the cache


async def open_index(
    dataset: BeirDataset, *, embedder: Embedder, settings: Settings, cache_dir: Path,
    progress: Callable[[str], None] | None = None,
) -> EvalIndex:
    """Open the cached index of the corpus, building it first when missing or incomplete.

    Args:
        dataset: the loaded dataset.
        embedder: embeds documents (its model_id is part of the key).
        settings: ``title_repeat`` is part of the key.
        cache_dir: parent folder of the cached indexes.
        progress: called with a one-line status while building.

    Returns:
        The open index; close it with ``await index.store.close()``.
    """
    from core.stores.qdrant_embedded import EdgeVectorStore

    key = index_key(dataset.corpus_path, model_id=embedder.model_id, title_repeat=settings.title_repeat)
    folder = cache_dir / f"{dataset.root.name}-{key}"
    collection = "beir"
    if (folder / _COMPLETE).is_file():
        store = EdgeVectorStore(root=folder)
        await store.ensure_collection(collection, model_id=embedder.model_id, dimension=embedder.dimension)
        return EvalIndex(store=store, collection=collection, folder=folder, built_seconds=None)
    if folder.exists():
        shutil.rmtree(folder)  # an interrupted build: start again
    started = time.perf_counter()
    store = EdgeVectorStore(root=folder)
    await store.ensure_collection(collection, model_id=embedder.model_id, dimension=embedder.dimension)
    chunks = corpus_chunks(dataset)
    for start in range(0, len(chunks), _BATCH):
        batch = chunks[start : start + _BATCH]
        texts = [document_text(c.title, c.content if c.content != c.title else "",
                               title_repeat=settings.title_repeat) for c in batch]
        vectors = await embedder.embed_documents(texts)
        await store.upsert(collection, batch, vectors)
        if progress:
            progress(f"indexed {min(start + _BATCH, len(chunks))}/{len(chunks)} documents")
    await store.optimize(collection)
    await store.flush()
    seconds = time.perf_counter() - started
    (folder / _COMPLETE).write_text(json.dumps({"documents": len(chunks), "seconds": seconds}), "utf-8")
    return EvalIndex(store=store, collection=collection, folder=folder, built_seconds=seconds)


# --------------------------------------------------------------------------- runs


@dataclass(slots=True)
class EvalReport:
    """Everything ``ragbot eval retrieval`` prints."""

    dataset: str
    split: str
    documents: int
    top_k: int
    ranking_algorithm: str
    ours: Row
    baseline: Row | None = None
    index_seconds: float | None = None
    settings: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """One JSON-ready object with both rows and the ratio."""
        out: dict[str, Any] = {
            "dataset": self.dataset, "split": self.split, "documents": self.documents,
            "top_k": self.top_k, "ranking_algorithm": self.ranking_algorithm,
            "index_seconds": self.index_seconds, "settings": self.settings,
            "ours": asdict(self.ours),
        }
        if self.baseline is not None:
            out["baseline"] = asdict(self.baseline)
            out["ratio"] = ratio(self.ours, self.baseline)
        return out

    def table(self) -> str:
        """A markdown table: ours, the baseline and the ratio."""
        head = ("| system | nDCG@10 | Recall@10 | Recall@100 | MRR@10 | p50 ms | p99 ms |\n"
                "|---|---|---|---|---|---|---|")
        rows = [head]
        for row in (self.ours, self.baseline):
            if row is not None:
                rows.append(
                    f"| {row.system} | {row.ndcg_10:.4f} | {row.recall_10:.4f} | {row.recall_100:.4f} "
                    f"| {row.mrr_10:.4f} | {row.latency_p50_ms:.2f} | {row.latency_p99_ms:.2f} |"
                )
        if self.baseline is not None:
            r = ratio(self.ours, self.baseline)
            cells = " | ".join("n/a" if v is None else f"{v:.3f}" for v in r.values())
            rows.append(f"| ratio (ours / {self.baseline.system}) | {cells} |")
        title = (f"{self.dataset} {self.split}: {self.ours.queries} queries, {self.documents} documents, "
                 f"ranking {self.ranking_algorithm}")
        return title + "\n\n" + "\n".join(rows)


async def run_ours(
    dataset: BeirDataset, index: EvalIndex, *, embedder: Embedder, settings: Settings, top_k: int,
) -> tuple[Row, str]:
    """Every query through the bot's retriever; returns the row and the ranking algorithm."""
    retriever = HybridRetriever.from_settings(
        settings, embedder=embedder, store=index.store, collection=index.collection,
        terms=_terms_of(embedder),
    )
    runs: dict[str, list[str]] = {}
    latencies: list[float] = []
    algorithm = "none"
    for qid, text in dataset.queries.items():
        start = time.perf_counter()
        emb = await retriever.embed(text)
        hits = await retriever.search(retriever.build_request(text, emb, top_k=top_k))
        ranked = retriever.rank(text, hits, top_k=top_k, threshold=0.0)
        latencies.append((time.perf_counter() - start) * 1000)
        runs[qid] = [str(f.payload["source_document"]) for f, _ in ranked.picked]
        algorithm = ranked.algorithm
    return score_run("ragbot", runs, dataset.qrels, latencies), algorithm


def _terms_of(embedder: Embedder) -> Callable[[str], frozenset[int]]:
    sparse_query = getattr(embedder, "sparse_query", None)
    if sparse_query is None:
        return lambda text: frozenset()
    return lambda text: frozenset(sparse_query(text).indices)


def run_bm25s(dataset: BeirDataset, *, top_k: int) -> Row:
    """The bm25s baseline over title + text (English stemmer and stopwords).

    Raises:
        InputError: bm25s or PyStemmer is not installed.
    """
    try:
        import bm25s
        import Stemmer
    except ImportError as exc:
        raise InputError(
            f"the bm25s baseline needs bm25s and PyStemmer: pip install bm25s PyStemmer ({exc})"
        ) from None
    # bm25s logs every indexing step at DEBUG; a verbose root logger would flood the report.
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    stemmer = Stemmer.Stemmer("english")
    doc_ids = list(dataset.corpus)
    texts = [f"{title} {text}".strip() for title, text in dataset.corpus.values()]
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False),
                    show_progress=False)
    k = min(top_k, len(doc_ids))
    runs: dict[str, list[str]] = {}
    latencies: list[float] = []
    for qid, text in dataset.queries.items():
        start = time.perf_counter()
        tokens = bm25s.tokenize([text], stopwords="en", stemmer=stemmer, show_progress=False)
        if not tokens.vocab:
            runs[qid] = []
        else:
            results, scores = retriever.retrieve(tokens, k=k, show_progress=False, n_threads=1)
            runs[qid] = [doc_ids[i] for i, s in zip(results[0], scores[0], strict=True) if s > 0]
        latencies.append((time.perf_counter() - start) * 1000)
    return score_run("bm25s", runs, dataset.qrels, latencies)


async def evaluate(
    root: Path,
    *,
    split: str,
    settings: Settings,
    embedder: Embedder,
    cache_dir: Path,
    top_k: int = 100,
    baseline: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> EvalReport:
    """Load, index (or reuse), run every query and score; optionally run the baseline.

    Args:
        root: the BEIR dataset folder.
        split: the qrels split.
        settings: retrieval settings (dense_weight, candidates, title_repeat).
        embedder: the embedder the bot would use.
        cache_dir: where indexes are cached.
        top_k: results per query (at most 100 are needed for Recall@100).
        baseline: ``"bm25s"`` or None.
        progress: called with one-line statuses.

    Raises:
        InputError: bad dataset, split, top_k or baseline.
    """
    if not 1 <= top_k <= 1000:
        raise InputError(f"--top-k must be between 1 and 1000, got {top_k}")
    if baseline not in (None, "bm25s"):
        raise InputError(f"unknown baseline {baseline!r}; use bm25s")
    dataset = load_beir(root, split)
    index = await open_index(dataset, embedder=embedder, settings=settings, cache_dir=cache_dir,
                             progress=progress)
    try:
        if progress:
            progress(f"running {len(dataset.qrels)} {split} queries")
        ours, algorithm = await run_ours(dataset, index, embedder=embedder, settings=settings, top_k=top_k)
    finally:
        await index.store.close()
    base = run_bm25s(dataset, top_k=top_k) if baseline == "bm25s" else None
    return EvalReport(
        dataset=root.name, split=split, documents=len(dataset.corpus), top_k=top_k,
        ranking_algorithm=algorithm, ours=ours, baseline=base, index_seconds=index.built_seconds,
        settings={"dense_weight": settings.dense_weight, "candidates": settings.candidates,
                  "title_repeat": settings.title_repeat, "model_id": embedder.model_id},
    )
