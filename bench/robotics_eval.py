"""Relevance calibration on the robotics textbook: Recall@5, answered and declined rates.

This measures a single threshold on relevance (the gate before issue 13). The bot's own
answer/decline decision is now ``core.retrieval.answerability``, measured end to end by
``ragbot eval answers --cases bench/answer_cases/robotics-textbook.json``.

Usage::

    .venv/bin/python bench/robotics_eval.py [--docs ../shared/data/robotics-textbook/docs]
        [--questions bench/robotics_questions.jsonl] [--threshold T] [--json]

Ingests the book into a temporary data dir through the real code path
(``build_runtime`` + ``ingest_path``), then asks every question of the JSONL
file (``{"question": ..., "expected": [paths relative to docs/]}``; an empty
``expected`` marks an out-of-scope question) through the pipeline's retriever
with the bot's settings. Reports:

* Recall@5: share of in-scope questions whose top 5 chunks (no threshold)
  include an expected file;
* for the threshold (the settings' default unless ``--threshold``): the share
  of in-scope questions answered (some chunk reaches it), the share of
  out-of-scope ones declined (none does), and Recall@5 among what passes;
* the threshold that would separate the two groups best on this set, with the
  best relevance of every question, so a calibration change can be checked.

Exit code 2 when the book is not there.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bots.runtime import build_runtime  # noqa: E402
from core.ingest.sync import ingest_path  # noqa: E402
from core.retrieval.ranking import best_threshold  # noqa: E402
from core.settings import Settings  # noqa: E402

DEFAULT_DOCS = ROOT.parent / "shared" / "data" / "robotics-textbook" / "docs"
DEFAULT_QUESTIONS = ROOT / "bench" / "robotics_questions.jsonl"
TOP_K = 5


def load_questions(path: Path) -> list[dict[str, Any]]:
    """Read the questions file: one ``{"question", "expected"}`` object per line."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


async def measure(docs: Path, questions: list[dict[str, Any]], threshold: float | None) -> dict[str, Any]:
    """Ingest the book, run every question, and compute the figures."""
    with tempfile.TemporaryDirectory(prefix="ragbot-robotics-") as tmp:
        settings = Settings(data_dir=Path(tmp))
        threshold = settings.relevance_threshold if threshold is None else threshold
        runtime = await build_runtime(settings)
        try:
            started = time.perf_counter()
            summary = await ingest_path(docs, store=runtime.store, embedder=runtime.embedder,
                                        collection=settings.collection, progress=False)
            ingest_seconds = time.perf_counter() - started
            retriever = runtime.pipeline.retriever
            rows = []
            for item in questions:
                text = item["question"]
                emb = await retriever.embed(text)
                hits = await retriever.search(retriever.build_request(text, emb, top_k=TOP_K))
                # The bot's head (threshold > 0) is scored; a tiny threshold keeps all of it.
                ranked = retriever.rank(text, hits, top_k=TOP_K, threshold=1e-9)
                fused_top = [f for f, _ in retriever.rank(text, hits, top_k=TOP_K, threshold=0.0).picked]
                passing = [f for f, rel in ranked.picked if rel >= threshold]
                rows.append({
                    "question": text,
                    "expected": item["expected"],
                    "best": max(ranked.relevances.values(), default=0.0),
                    "top5": [str(f.payload["source_document"]) for f in fused_top],
                    "passing": [str(f.payload["source_document"]) for f in passing],
                })
        finally:
            await runtime.aclose()
    inside = [r for r in rows if r["expected"]]
    outside = [r for r in rows if not r["expected"]]

    def hit(files: list[str], expected: list[str]) -> bool:
        return any(f in expected for f in files)

    suggested, accuracy = best_threshold([r["best"] for r in inside], [r["best"] for r in outside])
    return {
        "chunks": summary.chunks_added, "files": summary.files, "ingest_seconds": round(ingest_seconds, 2),
        "threshold": threshold,
        "in_scope": len(inside), "out_of_scope": len(outside),
        "recall_at_5": sum(hit(r["top5"], r["expected"]) for r in inside) / len(inside),
        "answered_rate": sum(bool(r["passing"]) for r in inside) / len(inside),
        "declined_rate": sum(not r["passing"] for r in outside) / len(outside),
        "recall_at_5_passing": sum(hit(r["passing"], r["expected"]) for r in inside) / len(inside),
        "suggested_threshold": suggested, "suggested_balanced_accuracy": accuracy,
        "rows": rows,
    }


def report(result: dict[str, Any]) -> str:
    """The markdown summary plus one line per question."""
    lines = [
        f"robotics textbook: {result['files']} files, {result['chunks']} chunks, "
        f"ingested in {result['ingest_seconds']:.2f} s",
        "",
        "| questions | Recall@5 | threshold | in-scope answered | out-of-scope declined "
        "| Recall@5 among passing |",
        "|---|---|---|---|---|---|",
        f"| {result['in_scope']} in / {result['out_of_scope']} out | {result['recall_at_5']:.3f} "
        f"| {result['threshold']:g} | {result['answered_rate']:.3f} | {result['declined_rate']:.3f} "
        f"| {result['recall_at_5_passing']:.3f} |",
        "",
        f"best separating threshold on this set: {result['suggested_threshold']:g} "
        f"(balanced accuracy {result['suggested_balanced_accuracy']:.3f})",
        "",
    ]
    for row in sorted(result["rows"], key=lambda r: (bool(r["expected"]), r["best"])):
        scope = "in " if row["expected"] else "out"
        mark = ""
        if row["expected"]:
            mark = "hit " if any(f in row["expected"] for f in row["top5"]) else "MISS"
        lines.append(f"{scope} {row['best']:.3f} {mark:4} {row['question']}  -> {row['top5'][:2]}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=Path, default=DEFAULT_DOCS)
    parser.add_argument("--questions", type=Path, default=DEFAULT_QUESTIONS)
    parser.add_argument("--threshold", type=float, help="default: the settings' relevance_threshold")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not args.docs.is_dir():
        print(f"robotics_eval: the textbook is not at {args.docs} (needs ../shared/data beside the "
              "checkout); nothing measured", file=sys.stderr)
        return 2
    result = asyncio.run(measure(args.docs, load_questions(args.questions), args.threshold))
    print(json.dumps(result) if args.json else report(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
