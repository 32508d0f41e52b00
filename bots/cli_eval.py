"""``ragbot eval retrieval`` and ``ragbot eval answers``: measure retrieval and answers.

``eval retrieval`` scores the bot's retrieval on a BEIR dataset, optionally against
bm25s. ``eval answers`` ingests a docs folder into a temporary data dir and runs a
cases file (the ``../shared/data/devsets`` format) through the same pipeline as
``ragbot ask``. Registered by ``bots/cli.py`` through ``register(subparsers)``. Bad
input (a missing folder, a bad cases file) raises ``InputError``, which the CLI turns
into one line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.settings import Settings

if TYPE_CHECKING:
    from core.eval.answers import CaseResult, CaseSet
    from core.models import AgentResponse, IngestSummary


def register(subparsers: Any) -> None:
    """Add ``eval retrieval`` to the ``ragbot`` command line.

    Args:
        subparsers: the object returned by the main parser's ``add_subparsers``.
    """
    evaluation = subparsers.add_parser("eval", help="measure retrieval and answer quality").add_subparsers(
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
    _register_answers(evaluation)


def _register_answers(evaluation: Any) -> None:
    """Add ``eval answers`` to the ``eval`` sub-commands."""
    p = evaluation.add_parser(
        "answers", help="answered / declined rates, expected file and fact, citation hygiene",
        description="Ingest DIR into a temporary data dir and run every case of a cases file "
                    "(../shared/data/devsets format) through the same pipeline as `ragbot ask`.",
    )
    p.add_argument("--cases", type=Path, required=True, help="cases file (devsets JSON format)")
    p.add_argument("--docs", type=Path, required=True,
                   help="the docs folder the cases' expected_files are relative to")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    p.add_argument("--save", type=Path, help="also write the JSON report to this file")
    p.add_argument("--compare", type=Path, help="a report saved with --save: print before/after/delta")
    p.add_argument("--show-failures", type=int, default=10, metavar="N",
                   help="failing cases to print (default: 10)")
    p.set_defaults(func=cmd_eval_answers)


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


def _answers_input(args: argparse.Namespace) -> tuple[CaseSet, dict[str, float | None] | None]:
    """Validate the cases file, docs folder and saved report before anything runs."""
    from core.errors import InputError
    from core.eval.answer_report import load_saved
    from core.eval.answers import load_cases, missing_files

    if args.show_failures < 0:
        raise InputError(f"--show-failures must be 0 or more, got {args.show_failures}")
    cases = load_cases(args.cases)
    if not args.docs.is_dir():
        raise InputError(f"docs folder {str(args.docs)!r} does not exist")
    missing = missing_files(cases, args.docs)
    if missing:
        case_id, name = missing[0]
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        raise InputError(f"case {case_id!r}: expected file {name!r} is not under {str(args.docs)!r}{more}")
    before = load_saved(args.compare) if args.compare is not None else None
    return cases, before


async def _run_answers(
    args: argparse.Namespace, settings: Settings, cases: CaseSet
) -> tuple[IngestSummary, list[CaseResult]]:
    """Ingest the docs into a temporary data dir and run every case; (ingest summary, results)."""
    from bots.runtime import build_runtime, ingest
    from core.errors import InputError
    from core.eval.answer_runner import run_cases
    from core.eval.answers import in_thread

    def progress(number: int, total: int, result: CaseResult) -> None:
        if not args.json and (number % 10 == 0 or number == total):
            print(f"  {number}/{total} cases", file=sys.stderr, flush=True)

    docs = args.docs.resolve()
    with tempfile.TemporaryDirectory(prefix="ragbot-eval-answers-") as tmp:
        # Always the embedded engine in the temporary folder: never a shared Qdrant server.
        local = settings.model_copy(update={"data_dir": Path(tmp), "qdrant_url": None})
        runtime = await build_runtime(local)
        try:
            summary = await ingest(runtime, str(docs), progress=False)
            if not summary.files or summary.files == len(summary.files_failed):
                raise InputError(f"nothing could be ingested from {str(args.docs)!r}")
            if not args.json:
                print(f"  {summary.line()}", file=sys.stderr, flush=True)

            async def ask(question: str, thread_id: str) -> AgentResponse:
                return await runtime.pipeline.answer(question, thread_id=thread_id)

            results = await run_cases(in_thread(cases.cases), ask, docs_root=docs, progress=progress)
        finally:
            await runtime.aclose()
    return summary, results


async def cmd_eval_answers(args: argparse.Namespace, settings: Settings) -> int:
    """``ragbot eval answers --cases FILE --docs DIR``: print the figures (or JSON); 0 on success."""
    from core.eval.answer_report import compare_table, failures_text, figures_table, report_json
    from core.eval.answers import latency_p50, score

    cases, before = _answers_input(args)
    summary, results = await _run_answers(args, settings, cases)
    report = report_json(
        results, cases_file=str(args.cases), docs=str(args.docs), corpus=cases.corpus,
        ingest={"files": summary.files, "chunks": summary.chunks_added + summary.chunks_updated
                + summary.chunks_skipped, "seconds": round(summary.seconds, 2)},
    )
    if args.save is not None:
        try:
            args.save.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
        except OSError as exc:
            from core.errors import InputError

            raise InputError(f"cannot write {str(args.save)!r}: {exc.strerror or exc}") from None
    if args.json:
        print(json.dumps(report))
        return 0
    print(figures_table(score(results), latency_p50(results)))
    if before is not None:
        print(f"\ncompared with {args.compare}:\n{compare_table(before, report['figures'])}")
    print(f"\n{failures_text(results, args.show_failures)}")
    return 0
