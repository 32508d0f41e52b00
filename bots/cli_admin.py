"""Admin commands: ``stats``, ``doctor``, ``feedback export``, ``logs show`` and ``logs purge``.

Registered by ``bots/cli.py`` through ``register(subparsers, logs)``. Each reads the SQLite
database directly (so it works while ``ragbot serve`` runs) and turns bad input into an
``InputError``: one line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from core.errors import InputError
from core.settings import Settings


def register(subparsers: Any, logs: Any) -> None:
    """Add the admin commands to the main parser's sub-commands and to ``logs``."""
    parser_class = getattr(subparsers, "_parser_class", argparse.ArgumentParser)
    p = subparsers.add_parser("stats", help="questions, outcomes, latency, coverage gaps, votes")
    p.add_argument("--since", default="7d", help="2026-11-01, ISO datetime or an age like 7d (default: 7d)")
    p.add_argument("--until", help="same forms as --since (exclusive; default: now)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--html", type=Path, metavar="FILE", help="also write a self-contained HTML report")
    p.add_argument("--top", type=int, default=10, help="rows per table (default: 10)")
    p.set_defaults(func=cmd_stats)

    p = subparsers.add_parser("doctor", help="check settings, data folder, database, store and services")
    p.set_defaults(func=cmd_doctor, without_settings=doctor_without_settings)

    feedback = subparsers.add_parser("feedback", help="users' thumbs up / down").add_subparsers(
        dest="feedback_command", required=True, parser_class=parser_class)
    p = feedback.add_parser("export", help="stream the votes as JSONL or CSV")
    p.add_argument("--format", choices=["jsonl", "csv"], default="jsonl")
    p.add_argument("--since", help="2026-11-01, ISO datetime, or an age like 24h / 7d")
    p.add_argument("-o", "--output", type=Path, help="file to write (default: standard output)")
    p.set_defaults(func=cmd_feedback_export)

    p = logs.add_parser("show", help="one question's timeline: steps, chunks, sources, grounding, errors")
    p.add_argument("query_id", help="a query id (or a unique prefix of 6+ characters, or a reference id)")
    p.add_argument("--json", action="store_true", help="print the timeline as JSON")
    p.set_defaults(func=cmd_logs_show)

    p = logs.add_parser("purge", help="delete history older than an age or date, in small batches")
    p.add_argument("--older-than", required=True, metavar="AGE", help="an age like 90d or a date")
    p.add_argument("--dry-run", action="store_true", help="only count what would be deleted")
    p.set_defaults(func=cmd_logs_purge)


# ---------------------------------------------------------------------- helpers


def _when(text: str | None, option: str) -> datetime | None:
    from storage.export import parse_when

    if text is None:
        return None
    try:
        return parse_when(text)
    except ValueError as exc:
        raise InputError(f"{option}: {exc}") from None


def _database(settings: Settings) -> Path:
    path = settings.sqlite_path
    if settings.data_dir.exists() and not settings.data_dir.is_dir():
        raise InputError(f"RAGBOT_DATA_DIR {str(settings.data_dir)!r} is not a folder")
    if not path.is_file():
        raise InputError(f"no database yet at {path}: ask a question or ingest first")
    return path


@contextlib.contextmanager
def output(path: Path | None) -> Iterator[TextIO]:
    """Standard output, or ``path`` created readable by its owner only (it holds users' questions)."""
    if path is None:
        yield sys.stdout
        return
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    except OSError as exc:
        raise InputError(f"cannot write {str(path)!r}: {exc.strerror or exc}") from None
    with open(fd, "w", encoding="utf-8", newline="") as out:
        yield out


# ---------------------------------------------------------------------- commands


async def cmd_stats(args: argparse.Namespace, settings: Settings) -> int:
    """``ragbot stats``: text (or JSON) on stdout, optionally the HTML report."""
    from bots.admin.stats import gather, to_json, to_text

    if not 1 <= args.top <= 1000:
        raise InputError(f"--top must be in [1, 1000], got {args.top}")
    since = _when(args.since, "--since")
    until = _when(args.until, "--until") or datetime.now(UTC)
    assert since is not None  # has a default
    if since >= until:
        raise InputError(f"--since {args.since!r} must be before --until ({until:%Y-%m-%d %H:%M})")
    stats = await gather(_database(settings), since=since, until=until, top=args.top)
    if args.html is not None:
        from bots.admin.report import render_html

        with output(args.html) as out:
            out.write(render_html(stats))
        print(f"wrote {args.html}", file=sys.stderr)
    print(json.dumps(to_json(stats)) if args.json else to_text(stats))
    return 0


def doctor_without_settings(error: Exception) -> int:
    """``ragbot doctor`` when the settings cannot be read: the one failing check line, exit 1."""
    from bots.admin.doctor import settings_failed

    print(settings_failed(error).line())
    return 1


async def cmd_doctor(args: argparse.Namespace, settings: Settings) -> int:
    """``ragbot doctor``: one line per check; 1 when any check failed."""
    from bots.admin.doctor import run_checks

    checks = await run_checks(settings)
    for check in checks:
        print(check.line(), flush=True)
    failed = sum(c.level == "FAIL" for c in checks)
    print(f"\n{failed} check(s) failed" if failed else "\nall checks passed", file=sys.stderr)
    return 1 if failed else 0


async def cmd_feedback_export(args: argparse.Namespace, settings: Settings) -> int:
    """``ragbot feedback export``: streams the votes."""
    from storage.export import export_feedback
    from storage.sqlite import SqliteStore

    since = _when(args.since, "--since")
    path = _database(settings)
    with output(args.output) as out:
        async with await SqliteStore.open(path) as db:
            count = await export_feedback(db, out, fmt=args.format, since=since)
    if args.output:
        print(f"wrote {count} votes to {args.output}", file=sys.stderr)
    return 0


async def cmd_logs_show(args: argparse.Namespace, settings: Settings) -> int:
    """``ragbot logs show QUERY_ID``: the question's timeline."""
    from bots.admin.timeline import build, to_text
    from storage.history import HistoryTables

    async with await HistoryTables.open(_database(settings)) as db:
        found = await db.resolve_query_id(args.query_id.strip())
        if not found:
            raise InputError(f"no question with id {args.query_id!r}: "
                             "use the query_id of a log entry (ragbot ask -v prints it)")
        if len(found) > 1:
            raise InputError(f"{args.query_id!r} matches {len(found)} questions ({', '.join(found)}): "
                             "give more characters")
        record = await db.query_record(found[0])
    assert record is not None  # resolved just above
    timeline = build(record)
    print(json.dumps(timeline) if args.json else to_text(timeline))
    return 0


async def cmd_logs_purge(args: argparse.Namespace, settings: Settings) -> int:
    """``ragbot logs purge --older-than 90d``: batched deletes; ``--dry-run`` only counts."""
    from storage.history import HistoryTables

    before = _when(args.older_than, "--older-than")
    assert before is not None  # required
    if before > datetime.now(UTC):
        raise InputError(f"--older-than {args.older_than!r} is in the future: nothing would be kept")
    async with await HistoryTables.open(_database(settings)) as db:
        counts = await (db.count_older(before) if args.dry_run else db.purge(before))
    verb = "would delete" if args.dry_run else "deleted"
    detail = ", ".join(f"{n} {table}" for table, n in counts.items())
    print(f"{verb} rows older than {before:%Y-%m-%d %H:%M} UTC: {detail}")
    return 0
