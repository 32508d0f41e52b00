"""``ragbot logs show QUERY_ID``: one question's timeline, from its stored rows.

Each logged step with its time, offset from the question and duration (0.1 ms), the text
actually searched (and whether a follow-up borrowed the thread's previous question), the
chunks kept with their scores, the sources cited, the grounding verdict, errors with their
reference ids, and the votes.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from storage.timestamps import from_db

_SEARCHED = re.compile(r"searched '(?P<text>.*)'$")
_CHUNK = re.compile(r"^(?P<score>\d\.\d\d) (?P<url>\S+)$")
_WORDS = re.compile(r"\w+")


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 1)


def _steps(entries: list[dict[str, Any]], start: datetime) -> list[dict[str, Any]]:
    steps = []
    for entry in entries:
        at = from_db(entry["timestamp"])
        summary = entry["response_summary"] or ""
        parts = summary.split("; ")
        chunks = [m.groupdict() for m in map(_CHUNK.match, parts) if m]
        steps.append({
            "at": at.isoformat(), "offset_ms": round((at - start).total_seconds() * 1000, 1),
            "event_type": entry["event_type"], "duration_ms": _ms(entry["execution_time"]),
            "summary": "; ".join(p for p in parts if not _CHUNK.match(p)) or None,
            "chunks": [{"score": float(c["score"]), "url": c["url"]} for c in chunks],
            "error": entry["error_details"],
            "reference_id": entry["entry_id"] if entry["event_type"] == "error" else None,
        })
    return steps


def _rewrite(steps: list[dict[str, Any]], question: str, previous: str | None) -> dict[str, Any] | None:
    """The text searched and whether it borrowed words from the thread's previous question."""
    for step in steps:
        if step["event_type"] != "embedding_generated":
            continue
        found = _SEARCHED.search(step["summary"] or "")
        if found:
            searched = found.group("text")
            own = {w.lower() for w in _WORDS.findall(question)}
            borrowed = sorted({w.lower() for w in _WORDS.findall(previous or "")} - own
                              & {w.lower() for w in _WORDS.findall(searched)})
            return {"searched": searched, "follow_up": bool(borrowed), "previous_question": previous,
                    "borrowed_words": borrowed}
    return None


def build(record: dict[str, Any]) -> dict[str, Any]:
    """The timeline as JSON from ``HistoryTables.query_record``'s rows."""
    query = record["query"]
    start = from_db(query["created_at"])
    steps = _steps(record["entries"], start)
    responses = record["responses"]
    last = responses[-1] if responses else None
    grounding = None if last is None else {
        "status": last["status"], "passed": last["status"] == "answered",
        "grounding_confidence": last["grounding_confidence"], "confidence_score": last["confidence_score"],
        "model_used": last["model_used"],
    }
    return {
        "query_id": query["query_id"], "question": query["query_text"], "thread_id": query["thread_id"],
        "user_id": query["user_id"], "status": query["status"], "error": query["error"],
        "asked_at": start.isoformat(), "steps": steps,
        "states": [{"machine": s["machine"], "status": s["status"], "error": s["error"],
                    "at": from_db(s["entered_at"]).isoformat()} for s in record.get("states", [])],
        "rewrite": _rewrite(steps, query["query_text"], record.get("previous_question")),
        "chunks": next((s["chunks"] for s in reversed(steps) if s["chunks"]), []),
        "sources": last["sources"] if last else [], "grounding": grounding,
        "answer": last["response_text"] if last else None,
        "errors": [{"reference_id": s["reference_id"], "error": s["error"], "at": s["at"]}
                   for s in steps if s["event_type"] == "error"],
        "votes": [{"vote": v["vote"], "user_id": v["user_id"], "platform": v["platform"]}
                  for v in record["votes"]],
    }


def _fmt(value: float | None) -> str:
    return "" if value is None else f"{value:.1f}"


def to_text(timeline: dict[str, Any]) -> str:
    """The timeline for a terminal."""
    lines = [f"question {timeline['query_id']}: {timeline['question']!r}",
             f"  thread {timeline['thread_id'] or '-'} · user {timeline['user_id'] or '-'} · "
             f"status {timeline['status']} · asked {timeline['asked_at'][:23]}", "",
             f"  {'time (UTC)':<14}{'+ms':>10}{'took ms':>10}  step"]
    for step in timeline["steps"]:
        detail = " ".join((step["summary"] or step["error"] or "").split())
        detail = detail if len(detail) <= 160 else detail[:159] + "…"
        lines.append(f"  {step['at'][11:23]:<14}{step['offset_ms']:>10.1f}{_fmt(step['duration_ms']):>10}"
                     f"  {step['event_type']:<20} {detail}")
    if timeline["states"]:
        lines += ["", "states: " + ", ".join(f"{s['machine']} {s['status']} {s['at'][11:23]}"
                                             for s in timeline["states"])]
    rewrite = timeline["rewrite"]
    if rewrite and rewrite["follow_up"]:
        lines += ["", f"follow-up rewrite: searched {rewrite['searched']!r}, borrowing "
                      f"{', '.join(rewrite['borrowed_words'])} from {rewrite['previous_question']!r}"]
    elif rewrite:
        lines += ["", f"searched as: {rewrite['searched']!r} (no follow-up rewrite)"]
    lines += ["", "chunks kept:"] + [f"  {c['score']:.2f}  {c['url']}" for c in timeline["chunks"]] \
        if timeline["chunks"] else ["", "chunks kept: none"]
    lines += ["", "sources cited:"] + [
        f"  [{s['index']}] {s['title']}{' › ' + s['section'] if s.get('section') else ''}  {s['url']}"
        f"  (score {s['score']:.2f})" for s in timeline["sources"]] if timeline["sources"] \
        else ["", "sources cited: none"]
    g = timeline["grounding"]
    lines += ["", "grounding: " + (
        "no response stored" if g is None else
        f"{'passed' if g['passed'] else 'not passed'} ({g['status']}), grounding confidence "
        f"{g['grounding_confidence']:.2f}, confidence {g['confidence_score']:.2f}"
        + (f", model {g['model_used']}" if g["model_used"] else ""))]
    for error in timeline["errors"]:
        lines.append(f"error: {error['error']} (reference {error['reference_id']})")
    if timeline["error"] and not timeline["errors"]:
        lines.append(f"error: {timeline['error']}")
    up = sum(1 for v in timeline["votes"] if v["vote"] == 1)
    lines.append(f"feedback: {up} up, {len(timeline['votes']) - up} down")
    return "\n".join(lines)
