"""``ragbot eval retrieval``: score the bot's retrieval on a BEIR dataset, optionally against bm25s.

Registered by ``bots/cli.py`` through ``register(subparsers)``. Bad input (a
missing dataset folder or split) raises ``InputError``, which the CLI turns
into one line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from core.settings import Settings


def register(subparsers: Any) -> None:
    """Add ``eval retrieval`` to the ``ragbot`` command line.

    Args:
        subparsers: the object returned by the main parser's ``add_subparsers``.
    """
    evaluation = subparsers.add_parser("eval", help="measure retrieval quality").add_subparsers(
        dest="eval_command", required=True,
        # The main parser's class: its errors are one line with exit code 2.
        parser_class=getattr(subparsers, "_parser_class", argparse.ArgumentParser),
    )
    p = evaluation.add_parser(
        "retrieval", help="nDCG@10, Recall@10/100, MRR@10 and latency on a BEIR dataset",
        description="Index a BEIR dataset's corpus (cached) and score every query of a split "
                    "through the bot's own ranking.",
    )
    p.add_argument("--dataset", type=Path, required=True,
                   help="BEIR folder: corpus.jsonl, queries.jsonl, qrels/<split>.tsv")
    p.add_argument("--split", default="test", help="qrels split, e.g. test or train (default: test)")
    p.add_argument("--top-k", type=int, default=100, help="results per query (default: 100)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    p.add_argument("--baseline", choices=["bm25s"], help="also run this baseline in the same process")
    p.add_argument("--cache-dir", type=Path,
                   help="where indexes are cached (default: $RAGBOT_DATA_DIR/eval-cache)")
    p.add_argument("--dense-weight", type=float, help="override RAGBOT_DENSE_WEIGHT for this run")
    p.add_argument("--candidates", type=int, help="override RAGBOT_CANDIDATES for this run")
    p.add_argument("--title-repeat", type=int, help="override RAGBOT_TITLE_REPEAT (builds another index)")
    p.set_defaults(func=cmd_eval_retrieval)


async def cmd_eval_retrieval(args: argparse.Namespace, settings: Settings) -> int:
    """``ragbot eval retrieval --dataset DIR``: print the table (or JSON); 0 on success."""
    from core.embedders.local import LocalEmbedder
    from core.errors import InputError
    from core.eval.retrieval import evaluate

    if args.dense_weight is not None and not 0.0 <= args.dense_weight <= 1.0:
        raise InputError(f"--dense-weight must be in [0, 1], got {args.dense_weight}")
    if args.candidates is not None and not 1 <= args.candidates <= 1000:
        raise InputError(f"--candidates must be in [1, 1000], got {args.candidates}")
    if args.title_repeat is not None and not 1 <= args.title_repeat <= 5:
        raise InputError(f"--title-repeat must be in [1, 5], got {args.title_repeat}")
    overrides = {name: value for name, value in (
        ("dense_weight", args.dense_weight), ("candidates", args.candidates),
        ("title_repeat", args.title_repeat)) if value is not None}
    if overrides:
        settings = settings.model_copy(update=overrides)
    if not args.dataset.is_dir():
        raise InputError(f"dataset folder {str(args.dataset)!r} does not exist")
    cache_dir = args.cache_dir or settings.data_dir / "eval-cache"

    def progress(message: str) -> None:
        if not args.json:
            print(f"  {message}", file=sys.stderr, flush=True)

    report = await evaluate(
        args.dataset, split=args.split, settings=settings, embedder=LocalEmbedder(),
        cache_dir=cache_dir, top_k=args.top_k, baseline=args.baseline, progress=progress,
    )
    if args.json:
        print(json.dumps(report.to_json()))
    else:
        built = ("reused cached index" if report.index_seconds is None
                 else f"indexed in {report.index_seconds:.1f} s")
        print(f"{report.table()}\n\n({built})")
    return 0
