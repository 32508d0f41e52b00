"""Peak memory of ``ragbot ingest`` on one large file of each awkward shape.

Usage::

    .venv/bin/python bench/ingest_memory.py [--mb 6.6 10] [--shapes code prose ...] [--limit-mb 500]

For each shape and size it writes one Markdown (or HTML / text) file into a fresh
folder, runs the real ``ragbot ingest`` (``python -m bots.cli``: local WordLlama + BM25
embeddings, the embedded Qdrant store, SQLite) in a child process with its own
``RAGBOT_DATA_DIR``, and reads the child's peak RSS from ``wait4``. Shapes:

- ``code``: the whole file is one fenced code block (the case that took 4.3 GB);
- ``prose``: paragraphs under one heading; ``oneline``: one line of words, no breaks;
- ``table``, ``list``: one huge table / bullet list; ``headings``: a heading every few lines;
- ``html``: one page of paragraphs; ``text``: a ``.txt`` of paragraphs.

Prints a markdown table (shape, MB, chunks, seconds, peak RSS MB); exits 1 when a
run fails or any peak is over ``--limit-mb`` (500 by default).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINE = "    result = compute_value(alpha, beta, gamma)  # keep going with the loop body\n"
PARAGRAPH = ("The robot arm moves along the rail while the controller reads the sensors and logs "
             "each value it sees. ") * 5 + "\n\n"


def _repeat(unit: str, size: int) -> str:
    return unit * max(1, size // len(unit))


#: shape -> (file name, text of about ``size`` bytes).
SHAPES: dict[str, tuple[str, Callable[[int], str]]] = {
    "code": ("big.md", lambda n: "# Big\n\n```python\n" + _repeat(LINE, n) + "```\n"),
    "prose": ("big.md", lambda n: "# Big\n\n" + _repeat(PARAGRAPH, n)),
    "oneline": ("big.md", lambda n: "# Big\n\n" + _repeat("word ", n) + "\n"),
    "table": ("big.md", lambda n: "# Big\n\n| h1 | h2 | h3 |\n|---|---|---|\n"
              + _repeat("| a | b | some text in a cell |\n", n)),
    "list": ("big.md", lambda n: "# Big\n\n" + _repeat("- an item of a long list with words in it\n", n)),
    "headings": ("big.md", lambda n: "# Big\n\n" + _repeat("## Section\n\nshort text here.\n\n", n)),
    "html": ("big.html", lambda n: "<html><head><title>Big</title></head><body><h1>Big</h1>"
             + _repeat(f"<p>{PARAGRAPH.strip()}</p>\n", n) + "</body></html>"),
    "text": ("big.txt", lambda n: _repeat(PARAGRAPH, n)),
}


def run_one(shape: str, megabytes: float, workdir: Path) -> tuple[int, float, float, str]:
    """Ingest one generated file in a child process; (exit code, seconds, peak RSS MB, last output line)."""
    name, make = SHAPES[shape]
    docs = workdir / f"{shape}-{megabytes:g}" / "docs"
    docs.mkdir(parents=True)
    (docs / name).write_text(make(int(megabytes * 1_000_000)), encoding="utf-8")
    env = {**os.environ, "RAGBOT_DATA_DIR": str(docs.parent / "data"), "PYTHONPATH": str(ROOT)}
    env.pop("QDRANT_URL", None)
    env.pop("COHERE_API_KEY", None)
    started = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-m", "bots.cli", "ingest", str(docs), "--no-progress"],
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert child.stdout is not None
    output = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    lines = output.strip().splitlines() or [""]
    return child.returncode, time.perf_counter() - started, usage.ru_maxrss / 1024, lines[-1]


def main() -> int:
    """Run every shape and size, print the table, and say whether the limit held."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, nargs="+", default=[6.6, 10.0], help="file sizes in MB")
    parser.add_argument("--shapes", nargs="+", choices=sorted(SHAPES), default=list(SHAPES))
    parser.add_argument("--limit-mb", type=float, default=500.0, help="peak RSS allowed per run")
    args = parser.parse_args()
    failed = False
    print("| shape | file MB | exit | seconds | peak RSS MB | ingest says |")
    print("|---|---:|---:|---:|---:|---|")
    with tempfile.TemporaryDirectory(prefix="ragbot-mem-") as tmp:
        for megabytes in args.mb:
            for shape in args.shapes:
                code, seconds, peak, said = run_one(shape, megabytes, Path(tmp))
                failed |= code != 0 or peak > args.limit_mb
                print(f"| {shape} | {megabytes:g} | {code} | {seconds:.1f} | {peak:.0f} | {said[:90]} |",
                      flush=True)
    print(f"\nlimit {args.limit_mb:g} MB: {'MISSED' if failed else 'held'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
