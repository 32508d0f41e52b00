"""Query latency, build time and memory of the embedded engine at 10k .. 1M chunks.

Run: ``.venv/bin/python bench/scale.py --sizes 10000,100000,1000000 --queries 200``.

Each size runs in its own subprocess (so RSS is that size's alone) through the real
``EdgeVectorStore``: ``ensure_collection`` -> ``upsert`` in batches -> ``optimize()``
(builds the dense HNSW graph; the table's "indexed" column proves it) -> timed
``search`` calls, each one hybrid: a dense and a sparse query in one ``query_batch``,
``--candidates`` hits each (50 = ``Settings.candidates``), as the pipeline does.
Dense recall@candidates is then checked against an exact (brute-force) search.

Synthetic data: random unit vectors (256-d, WordLlama's size) and small payloads
like a real chunk's. Sparse vectors, ``--sparse``:

* ``realistic`` (default): a ``--vocab`` 50,000-term vocabulary with Zipf(1.0)
  term frequencies (Zipf's law for English) whose ``--stopwords`` 100 commonest
  ranks are removed, as a BM25 tokenizer drops stopwords: the commonest remaining
  term is in ~5% of chunks. ``--terms`` 30 distinct terms per chunk. Queries have
  3 to 6 terms (``--query-terms 3-6``), like a question after stopword removal:
  two thirds drawn log-uniformly from the mid-frequency ranks 100 .. 10,000, the
  rest from the document distribution.
* ``pessimistic``: the first version of this benchmark: Zipf(1.1) over 100,000
  terms with no stopwords removed (the commonest term is in ~99% of chunks, so its
  posting list is the whole collection), 30 draws per chunk, 6-term queries drawn
  from the document distribution.

``--index store`` (default) builds with ``EdgeVectorStore``'s own shard config, so
the figures are the bot's. ``--index tuned`` creates the shard in this script with
a cheaper HNSW build (``--m``, ``--ef-construct``, ``--payload-m``; payload_m 0
skips the per-keyword-value sub-graphs Qdrant builds for the indexed payload
fields), then hands the folder to ``EdgeVectorStore``: that measures a config the
bot does not use yet. Latency ratios are relative to the smallest size measured in
the same run. The target is hybrid p99 under 20 ms at 1M on 2 cores.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from typing import Any

import numpy as np
import qdrant_edge as qe

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.models import (  # noqa: E402
    DocumentChunk,
    EmbeddingResponse,
    RetrievalRequest,
    SparseVector,
)
from core.stores.ids import collection_name  # noqa: E402
from core.stores.qdrant_embedded import DENSE, KEYWORD_FIELDS, SPARSE, EdgeVectorStore  # noqa: E402

DIM = 256
COLLECTION = "bench"
MODEL_ID = "bench:random-256"
TARGET_P99_MS = 20.0
TARGET_SIZE = 1_000_000
RECALL_QUERIES = 20
# Per --sparse mode: vocab, zipf, stopwords (commonest ranks dropped), query terms, query mix.
SPARSE_MODES: dict[str, dict[str, Any]] = {
    "realistic": {"vocab": 50_000, "zipf": 1.0, "stopwords": 100, "query_terms": "3-6", "mid": True},
    "pessimistic": {"vocab": 100_000, "zipf": 1.1, "stopwords": 0, "query_terms": "6", "mid": False},
}
MID_RANKS = (100, 10_000)


def _memory() -> dict[str, float]:
    """Current, peak, anonymous (heap) and file-backed (mmap) resident memory in MiB (Linux /proc)."""
    fields = {"VmRSS:": "rss_mib", "VmHWM:": "peak_rss_mib", "RssAnon:": "anon_mib", "RssFile:": "file_mib"}
    out = dict.fromkeys(fields.values(), 0.0)
    try:
        for line in pathlib.Path("/proc/self/status").read_text().splitlines():
            key = line.split(maxsplit=1)[0] if line else ""
            if key in fields:
                out[fields[key]] = int(line.split()[1]) / 1024
    except OSError:
        pass
    return out


class Corpus:
    """Deterministic synthetic vectors: unit dense vectors and Zipf-distributed sparse terms."""

    def __init__(self, *, seed: int, vocab: int, zipf: float, stopwords: int, mid_queries: bool) -> None:
        self.rng = np.random.default_rng(seed)
        # Ranks 1 .. stopwords + vocab; the `stopwords` commonest are dropped (a BM25 tokenizer
        # removes them), so the vocabulary that reaches the index is the `vocab` ranks after them.
        ranks = np.arange(stopwords + 1, stopwords + vocab + 1, dtype=np.float64)
        weights = ranks ** -zipf
        self.cdf = np.cumsum(weights / weights.sum())
        self.stopwords = stopwords
        self.mid_queries = mid_queries
        # Term ids as a tokenizer hash would give them: spread over u32, not by frequency.
        self.term_ids = self.rng.choice(2**31 - 1, size=vocab, replace=False).astype(np.int64)

    def dense(self, n: int) -> np.ndarray:
        vectors = self.rng.standard_normal((n, DIM)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors

    def _zipf(self, shape: tuple[int, int]) -> np.ndarray:
        """Vocabulary positions (0 = commonest kept term) drawn from the Zipf distribution."""
        return np.minimum(np.searchsorted(self.cdf, self.rng.random(shape)), len(self.cdf) - 1)

    def sparse(self, n: int, terms: int, *, distinct: bool) -> list[tuple[list[int], list[float]]]:
        """Document vectors: ``terms`` draws, or ``terms`` distinct terms if ``distinct``."""
        draws = self._zipf((n, terms * 2 if distinct else terms))
        # Saturated term frequencies, as BM25 document vectors carry.
        tf = (1.0 + self.rng.random((n, terms * 2)) * 0.6).round(3)
        out = []
        for row, weights in zip(draws.tolist(), tf.tolist(), strict=True):
            unique = list(dict.fromkeys(row))  # first occurrences, in draw order
            if distinct:
                unique = unique[:terms]
            out.append((self.term_ids[unique].tolist(), weights[: len(unique)]))
        return out

    def queries(self, n: int, low: int, high: int) -> list[list[int]]:
        """Query term ids: ``low`` .. ``high`` distinct terms each."""
        sizes = self.rng.integers(low, high + 1, size=n)
        out = []
        for size in sizes.tolist():
            chosen: dict[int, None] = {}
            while len(chosen) < size:
                if self.mid_queries and self.rng.random() < 2 / 3:
                    lo, hi = np.log(MID_RANKS[0]), np.log(MID_RANKS[1])
                    rank = int(np.exp(self.rng.uniform(lo, hi)))  # 1-based rank among all words
                    pos = min(max(rank - self.stopwords - 1, 0), len(self.term_ids) - 1)
                else:
                    pos = int(self._zipf((1, 1))[0, 0])
                chosen[pos] = None
            out.append(self.term_ids[list(chosen)].tolist())
        return out

    def document_frequency(self, terms: int, distinct: bool, sample: int = 20_000) -> float:
        """Fraction of chunks holding the commonest kept term (measured on a sample)."""
        rows = self.sparse(sample, terms, distinct=distinct)
        top = int(self.term_ids[0])
        return sum(top in indices for indices, _ in rows) / sample


def _chunks(start: int, n: int, dense: np.ndarray, sparse: list[tuple[list[int], list[float]]]) -> tuple[
    list[DocumentChunk], list[EmbeddingResponse]
]:
    chunks: list[DocumentChunk] = []
    embeddings: list[EmbeddingResponse] = []
    for i in range(n):
        k = start + i
        doc = f"docs/page-{k // 20:06d}.md"
        # model_construct: the values are ours; validating 1M x 256 floats would dominate the build.
        chunks.append(DocumentChunk.model_construct(
            chunk_id=str(uuid.UUID(int=k + 1)), content=f"Synthetic chunk {k} of {doc}.",
            url=f"https://ragbot.dev/{doc}", title=f"Page {k // 20}",
            section=f"Page {k // 20} > Part {k % 20}",
            headings=[f"Page {k // 20}"], chunk_index=k % 20, source_document=doc, page_number=None,
            tags=["bench", f"t{k % 10}"], content_hash=f"{k // 20:016x}",
        ))
        indices, values = sparse[i]
        embeddings.append(EmbeddingResponse.model_construct(
            embedding_vector=dense[i].tolist(),
            sparse_vector=SparseVector.model_construct(indices=indices, values=values),
            model_used=MODEL_ID, execution_time=0.0,
        ))
    return chunks, embeddings


def dense_recall(shard: Any, queries: np.ndarray, k: int) -> float:
    """Mean overlap of the HNSW top-k with an exact (brute-force) top-k, untimed."""
    found = 0
    for vector in queries.tolist():
        approx, exact = (
            {p.id for p in shard.query(qe.QueryRequest(
                limit=k, query=qe.Query.Nearest(vector, using=DENSE), with_payload=False,
                with_vector=False, params=qe.SearchParams(exact=is_exact),
            ))}
            for is_exact in (False, True)
        )
        found += len(approx & exact)
    return found / (k * len(queries))


def _percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.array(values), q))


def create_tuned(root: pathlib.Path, args: argparse.Namespace) -> None:
    """Create the collection's shard with a cheaper HNSW build, laid out as EdgeVectorStore expects.

    Same vectors, modifier and payload indexes as ``EdgeVectorStore.ensure_collection``;
    only the HNSW build parameters differ. The store then opens the folder as its own.
    """
    folder = root / collection_name(COLLECTION)
    folder.mkdir(parents=True)
    config = qe.EdgeConfig(
        vectors={DENSE: qe.EdgeVectorParams(size=DIM, distance=qe.Distance.Cosine)},
        sparse_vectors={SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
        hnsw_config=qe.HnswIndexConfig(
            m=args.m, ef_construct=args.ef_construct, full_scan_threshold=10_000,
            payload_m=args.payload_m,
        ),
    )
    shard = qe.EdgeShard.create(str(folder / "shard"), config)
    for field in KEYWORD_FIELDS:
        shard.update(qe.UpdateOperation.create_field_index(field, qe.PayloadSchemaType.Keyword))
    shard.flush()
    shard.close()
    (folder / "collection.json").write_text(json.dumps({"model_id": MODEL_ID, "dimension": DIM}), "utf-8")


def _query_terms(spec: str) -> tuple[int, int]:
    low, _, high = spec.partition("-")
    return int(low), int(high or low)


async def run_one(args: argparse.Namespace, size: int) -> dict[str, Any]:
    """Build one collection of ``size`` chunks and measure it; returns the row as a dict."""
    distinct = args.sparse == "realistic"
    corpus = Corpus(seed=args.seed, vocab=args.vocab, zipf=args.zipf, stopwords=args.stopwords,
                    mid_queries=SPARSE_MODES[args.sparse]["mid"])
    with tempfile.TemporaryDirectory(prefix="ragbot-scale-", dir=args.data_dir) as tmp:
        if args.index == "tuned":
            create_tuned(pathlib.Path(tmp), args)
        store = EdgeVectorStore(root=pathlib.Path(tmp))
        await store.ensure_collection(COLLECTION, model_id=MODEL_ID, dimension=DIM)
        upsert_s = generate_s = 0.0
        for start in range(0, size, args.batch):
            n = min(args.batch, size - start)
            t0 = time.perf_counter()
            dense = corpus.dense(n)
            sparse = corpus.sparse(n, args.terms, distinct=distinct)
            chunks, embeddings = _chunks(start, n, dense, sparse)
            t1 = time.perf_counter()
            await store.upsert(COLLECTION, chunks, embeddings)
            t2 = time.perf_counter()
            generate_s += t1 - t0
            upsert_s += t2 - t1
        t0 = time.perf_counter()
        await store.optimize(COLLECTION)
        optimize_s = time.perf_counter() - t0
        info = store._shard(COLLECTION).info()  # engine detail: proves the HNSW index exists
        memory_built = _memory()

        query_dense = corpus.dense(args.queries + args.warmup)
        query_sparse = corpus.queries(args.queries + args.warmup, *_query_terms(args.query_terms))
        hybrid_ms: list[float] = []
        dense_ms: list[float] = []
        hits = 0
        for i in range(args.queries + args.warmup):
            vector = query_dense[i].tolist()
            indices = query_sparse[i]
            hybrid = RetrievalRequest(
                query_embedding=vector, embedding_model=MODEL_ID, collection_name=COLLECTION,
                sparse_embedding=SparseVector(indices=indices, values=[1.0] * len(indices)),
                candidates=args.candidates,
            )
            dense_only = RetrievalRequest(query_embedding=vector, embedding_model=MODEL_ID,
                                          collection_name=COLLECTION, candidates=args.candidates)
            t0 = time.perf_counter()
            result = await store.search(hybrid)
            t1 = time.perf_counter()
            await store.search(dense_only)
            t2 = time.perf_counter()
            if i >= args.warmup:
                hybrid_ms.append((t1 - t0) * 1000)
                dense_ms.append((t2 - t1) * 1000)
                hits += len(result.dense) + len(result.sparse)
        memory_queried = _memory()
        recall = dense_recall(store._shard(COLLECTION), query_dense[args.warmup:][:RECALL_QUERIES],
                              args.candidates)
        await store.close()
    return {
        "size": size,
        "generate_s": round(generate_s, 1),
        "upsert_s": round(upsert_s, 1),
        "optimize_s": round(optimize_s, 1),
        "segments": info.segments_count,
        "indexed_vectors": info.indexed_vectors_count,
        "points": info.points_count,
        "hybrid_p50_ms": _percentile(hybrid_ms, 50),
        "hybrid_p99_ms": _percentile(hybrid_ms, 99),
        "hybrid_mean_ms": statistics.fmean(hybrid_ms),
        "dense_p50_ms": _percentile(dense_ms, 50),
        "dense_p99_ms": _percentile(dense_ms, 99),
        "mean_hits": hits / max(1, len(hybrid_ms)),
        "dense_recall": recall,
        "top_term_df": corpus.document_frequency(args.terms, distinct) if size == args.first_size else None,
        "rss_mib": memory_queried["rss_mib"],
        "anon_mib": memory_queried["anon_mib"],
        "file_mib": memory_queried["file_mib"],
        "rss_built_mib": memory_built["rss_mib"],
        "peak_rss_mib": memory_queried["peak_rss_mib"],
    }


def table(rows: list[dict[str, Any]]) -> str:
    """The results as a markdown table, latency ratios relative to the first row."""
    base = rows[0]
    lines = [
        "| chunks | build s (upsert + optimize) | indexed vectors | hybrid p50 ms | hybrid p99 ms "
        "| p50 / p99 vs smallest | dense-only p50 / p99 ms | dense recall@k | RSS MiB (peak) "
        "| of which heap / mmap MiB |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['size']:,} | {r['upsert_s'] + r['optimize_s']:.1f} ({r['upsert_s']:.1f} + "
            f"{r['optimize_s']:.1f}) | {r['indexed_vectors']:,} | {r['hybrid_p50_ms']:.2f} "
            f"| {r['hybrid_p99_ms']:.2f} | {r['hybrid_p50_ms'] / base['hybrid_p50_ms']:.2f}x / "
            f"{r['hybrid_p99_ms'] / base['hybrid_p99_ms']:.2f}x | {r['dense_p50_ms']:.2f} / "
            f"{r['dense_p99_ms']:.2f} | {r['dense_recall']:.3f} "
            f"| {r['rss_mib']:,.0f} ({r['peak_rss_mib']:,.0f}) "
            f"| {r['anon_mib']:,.0f} / {r['file_mib']:,.0f} |"
        )
    return "\n".join(lines)


def _parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000",
                        help="comma-separated chunk counts (default: %(default)s)")
    parser.add_argument("--queries", type=int, default=200, help="timed searches per size")
    parser.add_argument("--warmup", type=int, default=20, help="untimed searches first")
    parser.add_argument("--candidates", type=int, default=50, help="hits per retriever")
    parser.add_argument("--sparse", choices=sorted(SPARSE_MODES), default="realistic",
                        help="synthetic sparse workload (default: %(default)s; see the module docstring)")
    parser.add_argument("--terms", type=int, default=30,
                        help="sparse terms per chunk (distinct if realistic, draws if pessimistic)")
    parser.add_argument("--query-terms", default=None, help="terms per query, N or LOW-HIGH (mode default)")
    parser.add_argument("--vocab", type=int, default=None, help="sparse vocabulary size (mode default)")
    parser.add_argument("--zipf", type=float, default=None, help="Zipf exponent of term frequencies")
    parser.add_argument("--stopwords", type=int, default=None, help="commonest ranks dropped (mode default)")
    parser.add_argument("--index", choices=["store", "tuned"], default="store",
                        help="store: EdgeVectorStore's own config; tuned: cheaper HNSW build made here")
    parser.add_argument("--m", type=int, default=16, help="HNSW m (--index tuned)")
    parser.add_argument("--ef-construct", type=int, default=64, help="HNSW ef_construct (--index tuned)")
    parser.add_argument("--payload-m", type=int, default=0, help="HNSW payload_m (--index tuned)")
    parser.add_argument("--batch", type=int, default=10_000, help="points per upsert")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--data-dir", default=None, help="where the temporary shards go (default: $TMPDIR)")
    parser.add_argument("--json", action="store_true", help="also print the rows as JSON")
    parser.add_argument("--single", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--first-size", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    for key in ("vocab", "zipf", "stopwords", "query_terms"):
        if getattr(args, key) is None:
            setattr(args, key, SPARSE_MODES[args.sparse][key])
    return args


def main() -> int:
    args = _parse()
    if args.single is not None:
        print(json.dumps(asyncio.run(run_one(args, args.single))))
        return 0
    sizes = [int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()]
    rows = []
    passthrough = [
        f"--queries={args.queries}", f"--warmup={args.warmup}", f"--candidates={args.candidates}",
        f"--terms={args.terms}", f"--query-terms={args.query_terms}", f"--vocab={args.vocab}",
        f"--zipf={args.zipf}", f"--seed={args.seed}", f"--sparse={args.sparse}",
        f"--stopwords={args.stopwords}", f"--index={args.index}", f"--m={args.m}",
        f"--ef-construct={args.ef_construct}", f"--payload-m={args.payload_m}", f"--batch={args.batch}",
        f"--first-size={sizes[0]}",
    ] + ([f"--data-dir={args.data_dir}"] if args.data_dir else [])
    for size in sizes:
        print(f"... {size:,} chunks", file=sys.stderr, flush=True)
        started = time.perf_counter()
        # A fresh process per size: RSS then measures that size alone.
        proc = subprocess.run(
            [sys.executable, str(pathlib.Path(__file__).resolve()), *passthrough, "--single", str(size)],
            capture_output=True, text=True, check=False,
        )
        if proc.returncode != 0:
            print(proc.stderr, file=sys.stderr)
            return proc.returncode
        row = json.loads(proc.stdout.strip().splitlines()[-1])
        print(f"    done in {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
        rows.append(row)
    index = ("EdgeVectorStore's own shard config" if args.index == "store" else
             f"tuned HNSW m={args.m} ef_construct={args.ef_construct} payload_m={args.payload_m}")
    print(f"Embedded engine (qdrant-edge), {index}; {DIM}-d dense + {args.sparse} sparse "
          f"({args.terms} Zipf({args.zipf}) terms/chunk over {args.vocab:,} after dropping the "
          f"{args.stopwords} commonest; commonest kept term in {rows[0]['top_term_df']:.1%} of chunks; "
          f"{args.query_terms}-term queries), {args.candidates} candidates per retriever, "
          f"{args.queries} queries; {os.cpu_count()} CPUs, {platform.machine()}, "
          f"Python {platform.python_version()}.\n")
    print(table(rows))
    largest = rows[-1]
    below = "under" if largest["hybrid_p99_ms"] < TARGET_P99_MS else "over"
    print(f"\nAt {largest['size']:,} chunks hybrid p99 = {largest['hybrid_p99_ms']:.2f} ms: {below} "
          f"{TARGET_P99_MS:.0f} ms.", end=" ")
    if largest["size"] >= TARGET_SIZE:
        print(f"The target (p99 < {TARGET_P99_MS:.0f} ms at {TARGET_SIZE:,}) is "
              f"{'met' if below == 'under' else 'not met'}.")
    else:
        print(f"The target is at {TARGET_SIZE:,} chunks, not measured in this run: extrapolate.")
    if args.json:
        print(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
