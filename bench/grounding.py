"""Grounding validation on the labelled cases: precision/recall of catching unsupported answers.

Run: ``.venv/bin/python bench/grounding.py [--grid]``. The positive class is
"unsupported" (what the validator must catch). It prints the default thresholds'
scores, n-gram only and with the local WordLlama similarity, and with ``--grid``
the best thresholds of a simple grid search (the defaults in core/answer/grounding.py
were chosen this way, preferring round values near the optimum).
"""

from __future__ import annotations

import argparse
import itertools
import json
import pathlib
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.answer.grounding import (  # noqa: E402
    DEFAULT_THRESHOLDS,
    GroundingThresholds,
    validate_grounding,
)
from core.models import RetrievedChunk  # noqa: E402

CASES = ROOT / "tests" / "data" / "grounding_cases.jsonl"


def load_cases(path: pathlib.Path = CASES) -> list[dict[str, Any]]:
    """Read the JSONL cases, turning each chunk dict into a RetrievedChunk."""
    cases = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        case = json.loads(line)
        case["chunks"] = [
            RetrievedChunk(
                chunk_id=f"{case['id']}-{i}", content=c["content"], score=0.8,
                url=f"https://docs.example/{case['id']}/{i}", title=c["title"],
                section=c.get("section", ""), chunk_index=i, source_document=f"{c['title']}.md",
            )
            for i, c in enumerate(case["chunks"])
        ]
        cases.append(case)
    return cases


def scores(
    cases: list[dict[str, Any]],
    thresholds: GroundingThresholds,
    similarity: Callable[[str, str], float] | None,
) -> dict[str, float]:
    """Accuracy, and precision/recall/F1 of flagging the unsupported answers."""
    tp = fp = fn = tn = 0
    for case in cases:
        report = validate_grounding(case["answer"], case["chunks"], user_context=case.get("user_context"),
                                    similarity=similarity, thresholds=thresholds)
        flagged = not report.passed
        actual = case["expected"] == "unsupported"
        tp += flagged and actual
        fp += flagged and not actual
        fn += (not flagged) and actual
        tn += (not flagged) and not actual
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"accuracy": (tp + tn) / len(cases), "precision": precision, "recall": recall, "f1": f1}


def grid(dense: bool) -> Iterator[GroundingThresholds]:
    """The thresholds tried by ``--grid``."""
    for support, bigram, entity, negation in itertools.product(
        [0.5, 0.55, 0.6, 0.62, 0.65, 0.7, 0.75], [0.0, 0.2, 0.3], [0.2, 0.3, 0.5], [0.1, 0.3, 0.5]
    ):
        base = replace(DEFAULT_THRESHOLDS, bigram_weight=bigram, entity_penalty=entity,
                       negation_penalty=negation)
        if dense:
            for weight in (0.3, 0.5):
                yield replace(base, min_support_dense=support, dense_weight=weight)
        else:
            yield replace(base, min_support=support)


def load_wordllama() -> Callable[[str, str], float] | None:
    """The local WordLlama model's similarity, or None when it cannot be loaded offline."""
    try:
        import wordllama
        from wordllama import WordLlama

        from core.answer.grounding import wordllama_similarity

        model = WordLlama.load(config="l2_supercat", dim=256,
                               cache_dir=pathlib.Path(wordllama.__file__).parent, disable_download=True)
        return wordllama_similarity(model)
    except Exception as exc:  # any failure just means "n-gram only"
        print(f"WordLlama unavailable ({exc}); dense results skipped")
        return None


def _line(label: str, s: dict[str, float]) -> str:
    return (f"{label:<28} acc {s['accuracy']:.3f}  precision {s['precision']:.3f}  "
            f"recall {s['recall']:.3f}  F1 {s['f1']:.3f}")


def main() -> None:
    """Print the default thresholds' scores, and the grid's best with ``--grid``."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--grid", action="store_true", help="search the threshold grid too")
    args = parser.parse_args()
    cases = load_cases()
    n_unsup = sum(c["expected"] == "unsupported" for c in cases)
    print(f"{len(cases)} cases ({n_unsup} unsupported, {len(cases) - n_unsup} supported); "
          "positive class = unsupported")
    similarity = load_wordllama()
    print(f"default thresholds: {DEFAULT_THRESHOLDS}")
    start = time.perf_counter()
    print(_line(f"ngram  (min {DEFAULT_THRESHOLDS.min_support})",
                scores(cases, DEFAULT_THRESHOLDS, None)))
    if similarity is not None:
        print(_line(f"ngram+dense  (min {DEFAULT_THRESHOLDS.min_support_dense})",
                    scores(cases, DEFAULT_THRESHOLDS, similarity)))
    print(f"({(time.perf_counter() - start) * 1000 / len(cases) / 2:.2f} ms per answer)")
    if args.grid:
        for dense in (False, True):
            if dense and similarity is None:
                continue
            sim = similarity if dense else None
            best = max(grid(dense), key=lambda t: (
                (s := scores(cases, t, sim))["f1"], s["accuracy"]))
            print(f"best {'ngram+dense' if dense else 'ngram'}: {best}")
            print(_line("  ->", scores(cases, best, sim)))


if __name__ == "__main__":
    main()
