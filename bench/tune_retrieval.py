"""Grid-search the fusion settings on a BEIR dataset's TRAIN split (never test).

Usage::

    .venv/bin/python bench/tune_retrieval.py --dataset ../shared/data/scifact \
        [--cache-dir /tmp/ragbot-eval-cache] [--json]

Runs the same code as ``ragbot eval retrieval`` for every combination of
``title_repeat`` x ``dense_weight`` (at ``candidates`` = 100), then every
``candidates`` value at the best pair, and prints one markdown table per
stage with nDCG@10 and Recall@100. Pick the best row, put it in Settings, and
only then run the test split once.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.embedders.local import LocalEmbedder
from core.eval.retrieval import evaluate
from core.settings import Settings

TITLE_REPEATS = (1, 2, 3)
DENSE_WEIGHTS = (0.0, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5)
#: At top_k = 100 the retriever asks max(candidates, top_k) hits, so fewer than 100 is moot.
CANDIDATES = (100, 200)


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--cache-dir", type=Path, default=Path("/tmp/ragbot-eval-cache"))
    parser.add_argument("--json", action="store_true", help="also print every row as JSON lines")
    args = parser.parse_args()
    if not (args.dataset / "qrels" / "train.tsv").is_file():
        print(f"no train split in {args.dataset}", file=sys.stderr)
        return 2
    embedder = LocalEmbedder()
    rows: list[dict[str, float]] = []

    async def run(title_repeat: int, dense_weight: float, candidates: int) -> dict[str, float]:
        settings = Settings(title_repeat=title_repeat, dense_weight=dense_weight, candidates=candidates)
        report = await evaluate(args.dataset, split="train", settings=settings, embedder=embedder,
                                cache_dir=args.cache_dir, top_k=100)
        row = {"title_repeat": title_repeat, "dense_weight": dense_weight, "candidates": candidates,
               "ndcg_10": report.ours.ndcg_10, "recall_100": report.ours.recall_100,
               "p50_ms": report.ours.latency_p50_ms}
        rows.append(row)
        if args.json:
            print(json.dumps(row), flush=True)
        return row

    print("## Stage 1: title_repeat x dense_weight (candidates 100), SciFact train nDCG@10 / Recall@100\n")
    print("| title_repeat | " + " | ".join(f"w={w}" for w in DENSE_WEIGHTS) + " |")
    print("|---" * (len(DENSE_WEIGHTS) + 1) + "|")
    for repeat in TITLE_REPEATS:
        cells = []
        for weight in DENSE_WEIGHTS:
            row = await run(repeat, weight, 100)
            cells.append(f"{row['ndcg_10']:.4f} / {row['recall_100']:.4f}")
        print(f"| {repeat} | " + " | ".join(cells) + " |", flush=True)
    best = max(rows, key=lambda r: r["ndcg_10"])
    print(f"\n## Stage 2: candidates at title_repeat={best['title_repeat']}, "
          f"dense_weight={best['dense_weight']}\n")
    print("| candidates | nDCG@10 | Recall@100 | p50 ms |\n|---|---|---|---|")
    for candidates in CANDIDATES:
        row = await run(int(best["title_repeat"]), best["dense_weight"], candidates)
        print(f"| {candidates} | {row['ndcg_10']:.4f} | {row['recall_100']:.4f} | {row['p50_ms']:.2f} |",
              flush=True)
    final = max(rows, key=lambda r: r["ndcg_10"])
    print(f"\nbest on train: {json.dumps(final)}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
