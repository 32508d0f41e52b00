"""Generate a large, realistic ragbot database quickly (plain executemany on the real schema).

``generate_history`` writes questions with their responses, log entries (every pipeline step
with a timing), votes and errors across platforms and days; ``generate_log`` writes only
activity-log rows (the export benchmark). The schema comes from the real migrations.
"""

from __future__ import annotations

import json
import random
import sqlite3
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

from core.answer.responses import NOT_FOUND_TEXT
from storage.sqlite import SqliteStore
from storage.timestamps import to_db

ANSWERED = ["how do I install ragbot?", "how do I connect ragbot to Slack?", "where do I put the bot token?",
            "how do I run the tests?", "how do I export the logs?", "what does RAGBOT_TOP_K do?"]
#: Unanswered topics, each asked in several wordings: the coverage gaps stats must find.
GAPS = [["does ragbot support microsoft teams?", "teams integration?", "can it talk to ms teams"],
        ["how much does ragbot cost?", "pricing", "what is the price"],
        ["how do I deploy on kubernetes?", "kubernetes deployment", "k8s deploy"]]
PAGES = [("https://docs.example.com/install", "Install"), ("https://docs.example.com/slack", "Slack set-up"),
         ("https://docs.example.com/admin", "Administration"),
         ("https://docs.example.com/config", "Configuration")]
STEPS = [("embedding_generated", 0.002), ("retrieval_performed", 0.012), ("results_ranked", 0.004)]


async def migrate(path: Path) -> None:
    """Create the database at ``path`` with the current schema."""
    store = await SqliteStore.open(path)
    await store.close()


def _log_row(rng: random.Random, when: datetime, event: str, query_id: str | None, thread: str | None,
             question: str | None, summary: str | None, seconds: float | None,
             error: str | None = None) -> tuple[object, ...]:
    return (uuid.UUID(int=rng.getrandbits(128)).hex, to_db(when), event, thread, query_id, question,
            summary, error, seconds)


def _question(rng: random.Random, when: datetime) -> tuple[list[tuple[object, ...]], ...]:
    """The rows of one question: (queries, responses, log, feedback)."""
    platform = rng.choice(["slack", "slack", "discord", "cli"])
    thread = {"slack": "slack:T1:C1:", "discord": "discord:G1:", "cli": "cli:"}[platform] + str(rng.random())
    query_id = uuid.UUID(int=rng.getrandbits(128)).hex
    response_id = uuid.UUID(int=rng.getrandbits(128)).hex
    missed = rng.random() < 0.25
    question = rng.choice(rng.choice(GAPS)) if missed else rng.choice(ANSWERED)
    url, title = rng.choice(PAGES)
    status = "no_relevant_documents" if missed else rng.choice(["answered"] * 9 + ["retrieval_failed"])
    text = NOT_FOUND_TEXT if missed else f"Answer about {title} [1]."
    sources = [] if status != "answered" else [{"index": 1, "chunk_id": f"c-{title}", "url": url,
                                               "title": title, "section": "", "chunk_index": 0, "score": 0.8}]
    total = rng.lognormvariate(-2.3, 0.8)
    log = [_log_row(rng, when, "query_received", query_id, thread, question, None, None)]
    t = when
    for event, mean in STEPS:
        t += timedelta(milliseconds=1)
        log.append(_log_row(rng, t, event, query_id, thread, question, f"{event} summary",
                            rng.expovariate(1 / mean)))
    if status == "retrieval_failed":
        log.append(_log_row(rng, t, "error", query_id, thread, question, None, None,
                            "retrieval failed: StoreUnavailableError: the knowledge base is unavailable"))
    log.append(_log_row(rng, t + timedelta(milliseconds=2), "response_generated", query_id, thread, question,
                        f"{status}: {text[:60]}", total))
    log.append(_log_row(rng, t + timedelta(milliseconds=3), "response_sent", query_id, thread, question,
                        f"{platform}: {status}; {text[:60]}", total + 0.05))
    votes = []
    if platform != "cli" and rng.random() < 0.2:
        votes.append((response_id, f"U{rng.randrange(50)}", rng.choice([1, 1, -1]), platform, to_db(t),
                      to_db(t)))
    final = "FAILED" if status == "retrieval_failed" else "COMPLETED"
    query = (query_id, question, thread, "U1", None, final, None, to_db(when), to_db(when))
    response = (response_id, query_id, thread, status, text, json.dumps(sources), 0.7, 0.9, "extractive",
                to_db(when))
    return [query], [response], log, votes


async def generate_history(path: Path, *, questions: int, days: int = 14, seed: int = 7,
                           now: datetime | None = None) -> None:
    """Write ``questions`` questions spread over the last ``days`` days."""
    await migrate(path)
    rng = random.Random(seed)
    now = now or datetime.now(UTC)
    rows: tuple[list[tuple[object, ...]], ...] = ([], [], [], [])
    for _ in range(questions):
        when = now - timedelta(seconds=rng.uniform(60, days * 86400))
        for bucket, new in zip(rows, _question(rng, when), strict=True):
            bucket.extend(new)
    with sqlite3.connect(path) as conn:
        conn.executemany("INSERT INTO queries (query_id, query_text, thread_id, user_id, user_context,"
                         " status, error, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         rows[0])
        conn.executemany("INSERT INTO responses (response_id, query_id, thread_id, status, response_text,"
                         " sources, confidence_score, grounding_confidence, model_used, created_at)"
                         " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows[1])
        conn.executemany("INSERT INTO agent_log VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows[2])
        conn.executemany("INSERT OR REPLACE INTO feedback VALUES (?, ?, ?, ?, ?, ?)", rows[3])
    conn.close()


async def generate_log(path: Path, *, rows: int, seed: int = 7, batch: int = 50_000) -> None:
    """Write ``rows`` activity-log rows (questions' steps over 30 days) and nothing else."""
    await migrate(path)
    rng = random.Random(seed)
    start = datetime.now(UTC) - timedelta(days=30)
    step = timedelta(days=30) / max(rows, 1)
    events = ["query_received", "embedding_generated", "retrieval_performed", "results_ranked",
              "response_generated", "response_sent"]
    with sqlite3.connect(path) as conn:
        for first in range(0, rows, batch):
            chunk = []
            for i in range(first, min(rows, first + batch)):
                question = rng.choice(ANSWERED + [g[0] for g in GAPS])
                chunk.append(_log_row(rng, start + step * i, events[i % len(events)], f"q{i // 6}",
                                      f"slack:T1:C1:{i // 12}", question,
                                      f"step {i % 6} of question {i // 6}", round(rng.expovariate(100), 6)))
            conn.executemany("INSERT INTO agent_log VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", chunk)
            conn.commit()
    conn.close()
