"""Query latency, build time and memory of the embedded engine at 10k .. 1M chunks.

Run: ``.venv/bin/python bench/scale.py --sizes 10000,100000,1000000 --queries 200``.

Each size runs in its own subprocess (so RSS is that size's alone) through the real
``EdgeVectorStore``: ``ensure_collection`` -> ``upsert`` in batches -> ``optimize()``
(builds the dense HNSW graph; the table's "indexed" column proves it) -> timed
``search`` calls, each one hybrid: a dense and a sparse query in one ``query_batch``,
``--candidates`` hits each (50 = ``Settings.candidates``), as the pipeline does.

Synthetic data: random unit vectors (256-d, WordLlama's size); sparse vectors of
``--terms`` distinct term ids per chunk drawn from a Zipf distribution over a
``--vocab`` vocabulary (so a few terms are in most chunks, like real text);
sparse queries of ``--query-terms`` terms from the same distribution; small
payloads like a real chunk's. Latency ratios are relative to the smallest size
measured in the same run. The target is hybrid p99 under 20 ms at 1M on 2 cores.
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

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.models import (  # noqa: E402
    DocumentChunk,
    EmbeddingResponse,
    RetrievalRequest,
    SparseVector,
)
from core.store_edge import EdgeVectorStore  # noqa: E402

DIM = 256
COLLECTION = "bench"
MODEL_ID = "bench:random-256"
BATCH = 2000
TARGET_P99_MS = 20.0


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

    def __init__(self, *, seed: int, vocab: int, zipf: float, terms: int) -> None:
        self.rng = np.random.default_rng(seed)
        ranks = np.arange(1, vocab + 1, dtype=np.float64)
        weights = ranks ** -zipf
        self.cdf = np.cumsum(weights / weights.sum())
        # Term ids as a tokenizer hash would give them: spread over u32, not by frequency.
        self.term_ids = self.rng.choice(2**31 - 1, size=vocab, replace=False).astype(np.int64)
        self.terms = terms

    def dense(self, n: int) -> np.ndarray:
        vectors = self.rng.standard_normal((n, DIM)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors

    def sparse(self, n: int, terms: int) -> list[tuple[list[int], list[float]]]:
        ranks = np.searchsorted(self.cdf, self.rng.random((n, terms)))
        ranks = np.minimum(ranks, len(self.cdf) - 1)
        ranks.sort(axis=1)
        keep = np.ones_like(ranks, dtype=bool)
        keep[:, 1:] = ranks[:, 1:] != ranks[:, :-1]
        # Saturated term frequencies, as BM25 document vectors carry.
        tf = 1.0 + self.rng.random((n, terms)) * 0.6
        out = []
        for row, mask, weights in zip(ranks, keep, tf, strict=True):
            out.append((self.term_ids[row[mask]].tolist(), weights[mask].round(3).tolist()))
        return out


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


def _percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.array(values), q))


async def run_one(args: argparse.Namespace, size: int) -> dict[str, Any]:
    """Build one collection of ``size`` chunks and measure it; returns the row as a dict."""
    corpus = Corpus(seed=args.seed, vocab=args.vocab, zipf=args.zipf, terms=args.terms)
    with tempfile.TemporaryDirectory(prefix="ragbot-scale-", dir=args.data_dir) as tmp:
        store = EdgeVectorStore(root=pathlib.Path(tmp))
        await store.ensure_collection(COLLECTION, model_id=MODEL_ID, dimension=DIM)
        upsert_s = generate_s = 0.0
        for start in range(0, size, BATCH):
            n = min(BATCH, size - start)
            t0 = time.perf_counter()
            dense = corpus.dense(n)
            sparse = corpus.sparse(n, args.terms)
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
        query_sparse = corpus.sparse(args.queries + args.warmup, args.query_terms)
        hybrid_ms: list[float] = []
        dense_ms: list[float] = []
        hits = 0
        for i in range(args.queries + args.warmup):
            vector = query_dense[i].tolist()
            indices, _ = query_sparse[i]
            hybrid = RetrievalRequest(
                query_embedding=vector, embedding_model=MODEL_ID,
                sparse_embedding=SparseVector(indices=indices, values=[1.0] * len(indices)),
            )
            dense_only = RetrievalRequest(query_embedding=vector, embedding_model=MODEL_ID)
            t0 = time.perf_counter()
            result = await store.search(COLLECTION, hybrid, candidates=args.candidates)
            t1 = time.perf_counter()
            await store.search(COLLECTION, dense_only, candidates=args.candidates)
            t2 = time.perf_counter()
            if i >= args.warmup:
                hybrid_ms.append((t1 - t0) * 1000)
                dense_ms.append((t2 - t1) * 1000)
                hits += len(result.dense) + len(result.sparse)
        memory_queried = _memory()
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
        "| p50 / p99 vs smallest | dense-only p50 / p99 ms | RSS MiB (peak) | of which heap / mmap MiB |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['size']:,} | {r['upsert_s'] + r['optimize_s']:.1f} ({r['upsert_s']:.1f} + "
            f"{r['optimize_s']:.1f}) | {r['indexed_vectors']:,} | {r['hybrid_p50_ms']:.2f} "
            f"| {r['hybrid_p99_ms']:.2f} | {r['hybrid_p50_ms'] / base['hybrid_p50_ms']:.2f}x / "
            f"{r['hybrid_p99_ms'] / base['hybrid_p99_ms']:.2f}x | {r['dense_p50_ms']:.2f} / "
            f"{r['dense_p99_ms']:.2f} | {r['rss_mib']:,.0f} ({r['peak_rss_mib']:,.0f}) "
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
    parser.add_argument("--terms", type=int, default=30, help="sparse terms drawn per chunk")
    parser.add_argument("--query-terms", type=int, default=6, help="sparse terms per query")
    parser.add_argument("--vocab", type=int, default=100_000, help="sparse vocabulary size")
    parser.add_argument("--zipf", type=float, default=1.1, help="Zipf exponent of term frequencies")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--data-dir", default=None, help="where the temporary shards go (default: $TMPDIR)")
    parser.add_argument("--json", action="store_true", help="also print the rows as JSON")
    parser.add_argument("--single", type=int, default=None, help=argparse.SUPPRESS)
    return parser.parse_args()


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
        f"--zipf={args.zipf}", f"--seed={args.seed}",
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
    print(f"Embedded engine (qdrant-edge), {DIM}-d dense + sparse ({args.terms} Zipf({args.zipf}) "
          f"terms/chunk over {args.vocab:,}; {args.query_terms}-term queries), "
          f"{args.candidates} candidates per retriever, {args.queries} queries; "
          f"{os.cpu_count()} CPUs, {platform.machine()}, Python {platform.python_version()}.\n")
    print(table(rows))
    largest = rows[-1]
    verdict = "meets" if largest["hybrid_p99_ms"] < TARGET_P99_MS else "misses"
    print(f"\nAt {largest['size']:,} chunks hybrid p99 = {largest['hybrid_p99_ms']:.2f} ms: "
          f"{verdict} the {TARGET_P99_MS:.0f} ms target.")
    if args.json:
        print(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
