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
import math
import shutil
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from core.errors import InputError
from core.jsonl import read_jsonl
from core.models import DocumentChunk
from core.protocols import Embedder
from core.retrieval.retriever import HybridRetriever
from core.settings import Settings

#: Bump when the way the corpus is indexed changes, so stale caches are not reused.
INDEX_VERSION = "1"
CUTOFFS = (10, 100)
_NAMESPACE = uuid.UUID("9d7c2f4e-58b1-4c61-a0c3-2b9e41d3f7aa")
_COMPLETE = "complete.json"
_BATCH = 512

Qrels = dict[str, dict[str, int]]


# --------------------------------------------------------------------------- metrics


def dcg(gains: Sequence[float]) -> float:
    """Discounted cumulative gain of gains in rank order (linear gain, log2 discount).

    Args:
        gains: the relevance grade of each ranked item, best rank first.

    Returns:
        ``sum(g_i / log2(i + 2))`` over 0-based ranks ``i``.
    """
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains))


def ndcg_at_k(ranked: Sequence[str], judged: Mapping[str, int], k: int) -> float:
    """Normalised DCG of the first ``k`` results.

    Args:
        ranked: document ids, best first.
        judged: relevance grade per document id (0 or absent: not relevant).
        k: cutoff.

    Returns:
        A value in [0, 1]; 0.0 when no document is relevant.
    """
    ideal = dcg(sorted((g for g in judged.values() if g > 0), reverse=True)[:k])
    if ideal <= 0:
        return 0.0
    return dcg([max(0, judged.get(doc, 0)) for doc in ranked[:k]]) / ideal


def recall_at_k(ranked: Sequence[str], judged: Mapping[str, int], k: int) -> float:
    """Share of the relevant documents found in the first ``k`` results (0.0 if none is relevant)."""
    relevant = {doc for doc, grade in judged.items() if grade > 0}
    if not relevant:
        return 0.0
    return len(relevant.intersection(ranked[:k])) / len(relevant)


def mrr_at_k(ranked: Sequence[str], judged: Mapping[str, int], k: int) -> float:
    """Reciprocal rank of the first relevant result within the first ``k`` (0.0 if none)."""
    for rank, doc in enumerate(ranked[:k], start=1):
        if judged.get(doc, 0) > 0:
            return 1.0 / rank
    return 0.0


def percentile(values: Sequence[float], pct: float) -> float:
    """The ``pct``-th percentile with linear interpolation between closest ranks.

    Args:
        values: samples (any order).
        pct: in [0, 100].

    Returns:
        0.0 for no samples.
    """
    if not values:
        return 0.0
    ordered = sorted(values)
    position = (len(ordered) - 1) * pct / 100
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@dataclass(slots=True)
class Row:
    """One system's scores over one split."""

    system: str
    queries: int
    ndcg_10: float
    recall_10: float
    recall_100: float
    mrr_10: float
    latency_p50_ms: float
    latency_p99_ms: float

    def metrics(self) -> dict[str, float]:
        """The numeric columns by name."""
        return {k: v for k, v in asdict(self).items() if k not in ("system", "queries")}


def score_run(
    system: str,
    runs: Mapping[str, Sequence[str]],
    qrels: Qrels,
    latencies_ms: Sequence[float],
) -> Row:
    """Average the metrics over the judged queries.

    Args:
        system: the row's label.
        runs: ranked document ids per query id.
        qrels: judgements per query id; every query here is scored (missing run = empty).
        latencies_ms: one search latency per query.

    Returns:
        The row; metrics are means over ``qrels``' queries.
    """
    n = len(qrels)
    if n == 0:
        raise ValueError("no judged queries to score")

    def mean(fn: Callable[[Sequence[str], Mapping[str, int]], float]) -> float:
        return sum(fn(runs.get(q, []), judged) for q, judged in qrels.items()) / n

    return Row(
        system=system,
        queries=n,
        ndcg_10=mean(lambda r, j: ndcg_at_k(r, j, 10)),
        recall_10=mean(lambda r, j: recall_at_k(r, j, 10)),
        recall_100=mean(lambda r, j: recall_at_k(r, j, 100)),
        mrr_10=mean(lambda r, j: mrr_at_k(r, j, 10)),
        latency_p50_ms=percentile(latencies_ms, 50),
        latency_p99_ms=percentile(latencies_ms, 99),
    )


def ratio(ours: Row, baseline: Row) -> dict[str, float | None]:
    """Each metric of ``ours`` divided by the baseline's (None where the baseline is 0)."""
    base = baseline.metrics()
    return {k: (v / base[k] if base[k] else None) for k, v in ours.metrics().items()}


# --------------------------------------------------------------------------- dataset


@dataclass(slots=True)
class BeirDataset:
    """A loaded BEIR split: the corpus, the split's queries and their judgements."""

    root: Path
    split: str
    corpus: dict[str, tuple[str, str]]
    queries: dict[str, str]
    qrels: Qrels
    skipped_queries: int = 0

    @property
    def corpus_path(self) -> Path:
        """The corpus file (its size and mtime key the index cache)."""
        return self.root / "corpus.jsonl"


def _jsonl(path: Path) -> Iterable[dict[str, Any]]:
    return (item for _, item in read_jsonl(path, required="_id", example="an object with an _id"))


def read_qrels(path: Path) -> Qrels:
    """Read a BEIR qrels TSV (header line, then query-id, corpus-id, score).

    Raises:
        InputError: a line without three tab-separated fields or a non-integer score.
    """
    qrels: Qrels = {}
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            parts = line.rstrip("\n").split("\t")
            if number == 1 and not (len(parts) == 3 and parts[2].lstrip("-").isdigit()):
                continue  # the header
            if not line.strip():
                continue
            if len(parts) != 3:
                raise InputError(f"{path}:{number}: expected 'query-id<TAB>corpus-id<TAB>score'")
            try:
                grade = int(parts[2])
            except ValueError:
                raise InputError(f"{path}:{number}: score {parts[2]!r} is not an integer") from None
            qrels.setdefault(parts[0], {})[parts[1]] = grade
    return qrels


def load_beir(root: Path, split: str) -> BeirDataset:
    """Load a BEIR dataset folder for one split.

    Args:
        root: folder holding corpus.jsonl, queries.jsonl and qrels/.
        split: qrels file name without ``.tsv`` (``test``, ``train``, ``dev``).

    Returns:
        The dataset; queries without any relevant judgement are dropped (counted in
        ``skipped_queries``), as BEIR's evaluation does.

    Raises:
        InputError: a missing file or split, or a malformed line (naming it).
    """
    if not root.is_dir():
        raise InputError(f"dataset folder {str(root)!r} does not exist")
    for name in ("corpus.jsonl", "queries.jsonl"):
        if not (root / name).is_file():
            raise InputError(f"{root} is not a BEIR dataset: {name} is missing")
    qrels_path = root / "qrels" / f"{split}.tsv"
    if not qrels_path.is_file():
        folder = root / "qrels"
        available = sorted(p.stem for p in folder.glob("*.tsv")) if folder.is_dir() else []
        raise InputError(
            f"split {split!r} not found: no {qrels_path}"
            + (f" (available: {', '.join(available)})" if available else "")
        )
    corpus = {
        str(d["_id"]): (str(d.get("title") or ""), str(d.get("text") or ""))
        for d in _jsonl(root / "corpus.jsonl")
    }
    all_queries = {str(q["_id"]): str(q.get("text") or "") for q in _jsonl(root / "queries.jsonl")}
    judged = read_qrels(qrels_path)
    qrels = {
        q: grades for q, grades in judged.items()
        if any(g > 0 for g in grades.values()) and all_queries.get(q, "").strip()
    }
    if not qrels:
        raise InputError(f"{qrels_path} judges no query of queries.jsonl as having a relevant document")
    return BeirDataset(
        root=root, split=split, corpus=corpus,
        queries={q: all_queries[q] for q in qrels}, qrels=qrels,
        skipped_queries=len(judged) - len(qrels),
    )


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
        hits = await retriever.search(text, emb, top_k=top_k)
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
