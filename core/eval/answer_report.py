"""What ``ragbot eval answers`` prints and saves: the figures table, failing cases, JSON, comparison.

Pure functions over ``CaseResult`` lists and saved JSON reports.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from core.errors import InputError
from core.eval.answers import (
    METRICS,
    TOP_SOURCES,
    CaseResult,
    Ratio,
    citations_clean,
    fact_hit,
    failure_reasons,
    file_hit,
    latency_p50,
    score,
)

#: The latency figure's key in ``figures`` (the other keys are ``METRICS``).
LATENCY = "latency_p50_ms"
ANSWER_PREVIEW = 300


def result_json(result: CaseResult) -> dict[str, Any]:
    """One case's result as JSON: what was asked, what came back, and the judgements."""
    case = result.case
    return {
        "id": case.id, "kind": case.kind.value, "question": case.question, "follow_up": case.follow_up,
        "status": result.status, "answered": result.answered,
        "file_hit": file_hit(result), "fact_hit": fact_hit(result),
        "citations_clean": citations_clean(result) if result.answered else None,
        "failures": failure_reasons(result),
        "sources": [{"index": i, "file": f, "url": u} for i, f, u
                    in zip(result.source_indices, result.source_files, result.source_urls, strict=True)],
        "retrieved": result.retrieved_files,
        "answer": result.text, "latency_ms": round(result.latency_ms, 2),
    }


def report_json(results: Sequence[CaseResult], **about: Any) -> dict[str, Any]:
    """The whole run as one JSON object: ``about`` fields, figures, counts and every case."""
    ratios = score(results)
    figures: dict[str, float | None] = {
        name: None if r.value is None else round(r.value, 4) for name, r in ratios.items()}
    figures[LATENCY] = round(latency_p50(results), 2)
    return {
        **about,
        "figures": figures,
        "counts": {name: {"hits": r.hits, "total": r.total} for name, r in ratios.items()},
        "cases": [result_json(r) for r in results],
    }


def _value(value: float | None, *, latency: bool = False) -> str:
    if value is None:
        return "—"
    return f"{value:.1f} ms" if latency else f"{value:.3f}"


def figures_table(ratios: dict[str, Ratio], p50_ms: float) -> str:
    """The figures as a Markdown table: metric, value, hits/total."""
    lines = ["| metric | value | cases |", "|---|---|---|"]
    for name, label in METRICS.items():
        ratio = ratios[name]
        lines.append(f"| {label} | {_value(ratio.value)} | {ratio.hits}/{ratio.total} |")
    lines.append(f"| answer latency p50 | {_value(p50_ms, latency=True)} | |")
    return "\n".join(lines)


def _preview(text: str, limit: int = ANSWER_PREVIEW) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def failures_text(results: Sequence[CaseResult], limit: int) -> str:
    """The first ``limit`` failing cases: id, reasons, question, status, top sources, answer start."""
    failing = [(r, reasons) for r in results if (reasons := failure_reasons(r))]
    if not failing or limit <= 0:
        return f"{len(failing)} failing case(s)."
    blocks = [f"{len(failing)} failing case(s); the first {min(limit, len(failing))}:"]
    for result, reasons in failing[:limit]:
        case = result.case
        lines = [f"- {case.id} ({case.kind.value}): {'; '.join(reasons)}", f"  question: {case.question}"]
        if case.follow_up:
            lines.append(f"  follow-up: {case.follow_up}")
        if case.expected_files:
            lines.append(f"  expected: {', '.join(case.expected_files)}")
        lines.append(f"  status: {result.status}")
        if result.source_files:
            lines.append(f"  sources: {', '.join(result.source_files[:TOP_SOURCES])}")
        lines.append(f"  answer: {_preview(result.text)}")
        blocks.append("\n".join(lines))
    return "\n".join(blocks)


def load_saved(path: Path) -> dict[str, float | None]:
    """Read the figures of a report saved with ``--save``.

    Raises:
        InputError: the file is unreadable, not JSON, or has no ``figures`` of numbers.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"cannot read saved report {str(path)!r}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise InputError(f"saved report {str(path)!r} is not JSON") from None
    figures = data.get("figures") if isinstance(data, dict) else None
    if not isinstance(figures, dict) or not all(
            value is None or (isinstance(value, int | float) and not isinstance(value, bool))
            for value in figures.values()):
        raise InputError(f"saved report {str(path)!r} has no 'figures' object of numbers "
                         "(write one with --save)")
    return {str(name): None if value is None else float(value) for name, value in figures.items()}


def compare_table(before: dict[str, float | None], after: dict[str, float | None]) -> str:
    """Before, after and delta per metric, as a Markdown table (``—`` where one side is missing)."""
    lines = ["| metric | before | after | delta |", "|---|---|---|---|"]
    for name, label in [*METRICS.items(), (LATENCY, "answer latency p50")]:
        old, new = before.get(name), after.get(name)
        latency = name == LATENCY
        if old is None or new is None:
            delta = "—"
        else:
            delta = f"{new - old:+.1f} ms" if latency else f"{new - old:+.3f}"
        lines.append(f"| {label} | {_value(old, latency=latency)} | {_value(new, latency=latency)} "
                     f"| {delta} |")
    return "\n".join(lines)
