"""Ingest time and end-to-end answer latency on the robotics textbook, next to a bm25s search.

Usage::

    .venv/bin/python bench/answer_latency.py [--docs ../shared/data/robotics-textbook/docs]
        [--questions bench/robotics_questions.jsonl] [--rounds 3]

Builds the real runtime (``bots.runtime.build_runtime``) on a temporary data dir,
ingests the book with ``core.ingest.sync.ingest_path`` and reports the seconds it
took; then times ``runtime.pipeline.answer(question)`` (embed, search, fuse,
relevance, extractive answer, grounding check, every SQLite write) over every
question of the file, ``--rounds`` times, after one warm-up question. The
baseline is a bm25s search (PyStemmer English stemmer, English stopwords) over
the same chunks, for the same questions, in the same run: it only retrieves,
so the ratio shows what the whole answer costs over a bare keyword search.
Prints a markdown table; exits 2 when ../shared is absent, 1 when a target
(ingest < 15 s, answer p50 < 30 ms) is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bots.runtime import build_runtime  # noqa: E402
from core.eval.metrics import percentile  # noqa: E402
from core.ingest.chunking import chunk_document  # noqa: E402
from core.ingest.loaders import load_file  # noqa: E402
from core.ingest.sync import ingest_path, walk_files  # noqa: E402
from core.settings import Settings  # noqa: E402

DEFAULT_DOCS = ROOT.parent / "shared" / "data" / "robotics-textbook" / "docs"
DEFAULT_QUESTIONS = ROOT / "bench" / "robotics_questions.jsonl"
INGEST_TARGET_S = 15.0
ANSWER_P50_TARGET_MS = 30.0


def bm25s_latencies(docs: Path, questions: list[str], rounds: int) -> tuple[list[float], int]:
    """Index the same chunks with bm25s and time one top-5 search per question and round (ms)."""
    import bm25s
    import Stemmer

    files, _ = walk_files(docs)
    texts = [f"{c.title}\n{c.section}\n{c.content}"
             for f in files for c in chunk_document(load_file(f, root=docs))]
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    stemmer = Stemmer.Stemmer("english")
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False),
                    show_progress=False)
    latencies = []
    for _ in range(rounds):
        for question in questions:
            start = time.perf_counter()
            tokens = bm25s.tokenize([question], stopwords="en", stemmer=stemmer, show_progress=False)
            if tokens.vocab:
                retriever.retrieve(tokens, k=5, show_progress=False, n_threads=1)
            latencies.append((time.perf_counter() - start) * 1000)
    return latencies, len(texts)


async def measure(docs: Path, questions: list[str], rounds: int) -> dict[str, Any]:
    """Ingest, warm up, and time every answer."""
    with tempfile.TemporaryDirectory(prefix="ragbot-latency-") as tmp:
        settings = Settings(data_dir=Path(tmp))
        started = time.perf_counter()
        runtime = await build_runtime(settings)
        try:
            summary = await ingest_path(docs, store=runtime.store, embedder=runtime.embedder,
                                        collection=settings.collection, progress=False)
            ingest_seconds = time.perf_counter() - started
            await runtime.pipeline.answer("warm-up: what is ROS2?")
            latencies: list[float] = []
            statuses: dict[str, int] = {}
            for _ in range(rounds):
                for question in questions:
                    start = time.perf_counter()
                    response = await runtime.pipeline.answer(question)
                    latencies.append((time.perf_counter() - start) * 1000)
                    statuses[response.status.value] = statuses.get(response.status.value, 0) + 1
        finally:
            await runtime.aclose()
    return {"ingest_seconds": ingest_seconds, "files": summary.files, "chunks": summary.chunks_added,
            "answers": len(latencies), "p50_ms": percentile(latencies, 50),
            "p99_ms": percentile(latencies, 99), "statuses": statuses}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=Path, default=DEFAULT_DOCS)
    parser.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS)
    parser.add_argument("--rounds", type=int, default=3, help="times each question is asked (default 3)")
    args = parser.parse_args()
    if not args.docs.is_dir():
        print(f"answer_latency: the robotics textbook is not at {args.docs}; it needs ../shared/data "
              "beside the checkout. Nothing measured.", file=sys.stderr)
        return 2
    with args.questions.open(encoding="utf-8") as handle:
        questions = [json.loads(line)["question"] for line in handle if line.strip()]
    ours = asyncio.run(measure(args.docs, questions, args.rounds))
    base, base_chunks = bm25s_latencies(args.docs, questions, args.rounds)
    base_p50, base_p99 = percentile(base, 50), percentile(base, 99)
    print(f"robotics textbook: {ours['files']} files, {ours['chunks']} chunks "
          f"(bm25s indexed {base_chunks}); {len(questions)} questions x {args.rounds} rounds\n")
    print("| measure | ragbot answer (pipeline.answer) | bm25s search only | ratio |")
    print("|---|---|---|---|")
    print(f"| ingest whole book (s) | {ours['ingest_seconds']:.2f} | | |")
    print(f"| latency p50 (ms) | {ours['p50_ms']:.2f} | {base_p50:.2f} | {ours['p50_ms'] / base_p50:.2f} |")
    print(f"| latency p99 (ms) | {ours['p99_ms']:.2f} | {base_p99:.2f} | {ours['p99_ms'] / base_p99:.2f} |")
    print(f"\nanswers: {ours['answers']}, statuses: {ours['statuses']}")
    ok = ours["ingest_seconds"] < INGEST_TARGET_S and ours["p50_ms"] < ANSWER_P50_TARGET_MS
    print(f"targets (ingest < {INGEST_TARGET_S:g} s, answer p50 < {ANSWER_P50_TARGET_MS:g} ms): "
          f"{'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
