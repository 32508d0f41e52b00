"""Convert the team's ``bench/robotics_questions.jsonl`` into the devsets cases format.

Usage::

    .venv/bin/python bench/answer_cases/from_jsonl.py > bench/answer_cases/robotics-textbook.json

Each line ``{"question": ..., "expected": [paths relative to docs/]}`` becomes an
``in_scope`` case (``rt-NNN``); an empty ``expected`` marks an ``out_of_scope`` one
(``rtoos-NNN``). The set has no expected keywords, so ``ragbot eval answers`` does not
measure the expected fact on it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def convert(lines: list[dict[str, Any]]) -> dict[str, Any]:
    """The cases object for the questions, in file order."""
    cases: list[dict[str, Any]] = []
    counts = {"in_scope": 0, "out_of_scope": 0}
    for item in lines:
        kind = "in_scope" if item["expected"] else "out_of_scope"
        counts[kind] += 1
        prefix = "rt" if kind == "in_scope" else "rtoos"
        case: dict[str, Any] = {"id": f"{prefix}-{counts[kind]:03d}", "kind": kind,
                                "question": item["question"]}
        if item["expected"]:
            case.update(expected_files=item["expected"], expected_keywords=[])
        cases.append(case)
    return {"version": 1, "corpus": "robotics-textbook", "docs_dir": "robotics-textbook/docs",
            "cases": cases}


def main() -> int:
    """Print the converted cases file to standard output."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("questions", nargs="?", type=Path,
                        default=ROOT / "bench" / "robotics_questions.jsonl")
    args = parser.parse_args()
    with args.questions.open(encoding="utf-8") as handle:
        lines = [json.loads(line) for line in handle if line.strip()]
    data = convert(lines)
    # One case per line: diffs stay readable.
    body = ",\n".join("  " + json.dumps(case, ensure_ascii=False) for case in data["cases"])
    head = json.dumps({k: v for k, v in data.items() if k != "cases"})[:-1]
    sys.stdout.write(f'{head}, "cases": [\n{body}\n]}}\n')
    return 0


if __name__ == "__main__":
    sys.exit(main())
