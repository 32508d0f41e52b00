"""Export benchmark: ``ragbot logs export`` of 1,000,000 log rows to CSV and JSONL, beside ``sqlite3``.

Run: ``.venv/bin/python bench/export.py --rows 1000000``.

Generates a database with ``--rows`` activity-log rows (tests/support/generated_db.py), then
runs, each in its own process so its peak RSS is its own (``os.wait4``'s ``ru_maxrss``):
``ragbot logs export --format csv -o FILE``, the same with ``--format jsonl``, and the
``sqlite3`` command-line shell's own CSV export of the same table in the same order
(``sqlite3 -csv -header DB "SELECT ... ORDER BY timestamp, entry_id"``), skipped when the
``sqlite3`` program is not installed. Prints a Markdown table (or ``--json``); the goal is
a peak RSS of at most 100 MB for ragbot's exports.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.generated_db import generate_log  # noqa: E402

RSS_GOAL_MB = 100.0
_COLUMNS = ("entry_id, timestamp, event_type, thread_id, query_id, query_text, response_summary, "
            "error_details, execution_time")


#: Forks the command from a small process and prints its ``ru_maxrss`` (KB) on stderr's last line.
#: Measuring from here directly would count this process's own memory: a child forked from it
#: keeps the parent's high-water mark across ``exec`` (Linux's ``ru_maxrss``).
_LAUNCHER = ("import os, sys\n"
             "pid = os.fork()\n"
             "if pid == 0:\n    os.execvp(sys.argv[1], sys.argv[1:])\n"
             "_, status, usage = os.wait4(pid, 0)\n"
             "sys.stderr.write(f'\\nmaxrss_kb={usage.ru_maxrss}\\n')\n"
             "sys.exit(os.waitstatus_to_exitcode(status))\n")


def measure(argv: list[str], *, stdout: Path, env: dict[str, str]) -> dict[str, float]:
    """Run ``argv`` with standard output to ``stdout``; its wall time (s) and peak RSS (MB)."""
    with stdout.open("wb") as out:
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-S", "-c", _LAUNCHER, *argv], stdout=out,
                              stderr=subprocess.PIPE, env=env, check=False)
        seconds = time.perf_counter() - start
    error = done.stderr.decode(errors="replace")
    if done.returncode != 0 or "maxrss_kb=" not in error:
        raise SystemExit(f"{' '.join(argv[:4])} ... failed ({done.returncode}): {error.strip()}")
    kilobytes = int(error.rsplit("maxrss_kb=", 1)[1].split()[0])
    return {"seconds": round(seconds, 2), "peak_rss_mb": round(kilobytes / 1024, 1),
            "output_mb": round(stdout.stat().st_size / 1e6, 1)}


def run(rows: int, folder: Path) -> list[dict[str, object]]:
    """Generate the database in ``folder`` and measure every exporter on it."""
    data = folder / "data"
    data.mkdir(mode=0o700)
    database = data / "ragbot.sqlite3"
    start = time.perf_counter()
    asyncio.run(generate_log(database, rows=rows))
    print(f"generated {rows:,} log rows in {time.perf_counter() - start:.1f} s "
          f"({database.stat().st_size / 1e6:.0f} MB)", file=sys.stderr)
    env = {**os.environ, "RAGBOT_DATA_DIR": str(data)}
    ragbot = [sys.executable, "-m", "bots.cli", "logs", "export"]
    results: list[dict[str, object]] = []
    for fmt in ("csv", "jsonl"):
        figures = measure([*ragbot, "--format", fmt], stdout=folder / f"out.{fmt}", env=env)
        results.append({"exporter": f"ragbot logs export --format {fmt}", "rows": rows, **figures})
    sqlite = shutil.which("sqlite3")
    if sqlite is None:
        print("sqlite3 is not installed: its row is skipped (apt-get install sqlite3)", file=sys.stderr)
    else:
        query = f"SELECT {_COLUMNS} FROM agent_log ORDER BY timestamp, entry_id"
        figures = measure([sqlite, "-csv", "-header", str(database), query], stdout=folder / "sqlite.csv",
                          env=env)
        results.append({"exporter": "sqlite3 -csv (same table, same order)", "rows": rows, **figures})
    return results


def table(results: list[dict[str, object]]) -> str:
    """The results as a Markdown table."""
    lines = ["| exporter | rows | time (s) | rows/s | peak RSS (MB) | output (MB) |",
             "|---|---:|---:|---:|---:|---:|"]
    for r in results:
        rate = int(float(str(r["rows"])) / max(float(str(r["seconds"])), 1e-9))
        lines.append(f"| `{r['exporter']}` | {r['rows']:,} | {r['seconds']} | {rate:,} | {r['peak_rss_mb']} "
                     f"| {r['output_mb']} |")
    return "\n".join(lines)


def main() -> int:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="log rows (default 1,000,000)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()
    if args.rows < 1:
        parser.error(f"--rows must be at least 1, got {args.rows}")
    with tempfile.TemporaryDirectory(prefix="ragbot-export-bench-") as tmp:
        results = run(args.rows, Path(tmp))
    print(json.dumps(results) if args.json else table(results))
    over = [r for r in results if str(r["exporter"]).startswith("ragbot")
            and float(str(r["peak_rss_mb"])) > RSS_GOAL_MB]
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
