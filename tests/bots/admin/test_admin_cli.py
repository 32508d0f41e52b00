"""The admin commands end to end: on a database filled by the real pipeline and on a generated one."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest

from bots.cli import main
from tests.bots.admin.conftest import BIG_QUESTIONS
from tests.support.pipeline_db import ANSWERABLE, Filled


def run(capsys: pytest.CaptureFixture[str], env: pytest.MonkeyPatch, data: Path, *argv: str
        ) -> tuple[int, str, str]:
    env.setenv("RAGBOT_DATA_DIR", str(data))
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_stats_on_the_pipelines_database(pipeline_db: Filled, admin_env: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, admin_env, pipeline_db.settings.data_dir, "stats", "--json")
    assert code == 0
    stats = json.loads(out)
    per_platform = {p: sum(c.values()) for p, c in stats["by_platform"].items()}
    assert per_platform == {"slack": 4, "discord": 2, "cli": 2}
    assert stats["questions"] == 8 and stats["outcomes"]["answered"] >= 3
    assert stats["outcomes"]["not_found"] >= 2
    assert stats["feedback"] == {"up": 1, "down": 1}
    [down] = stats["thumbs_down"]
    assert down["question"] == ANSWERABLE and down["platform"] == "slack" and "make demo" in down["answer"]
    teams = [g for g in stats["coverage_gaps"] if "teams" in g["question"]]
    assert teams and teams[0]["count"] >= 2  # asked on Slack and Discord in two wordings
    for step in ("embed", "search", "rank", "answer (end to end)", "delivered (event to reply)"):
        assert stats["latency_ms"][step]["count"] > 0, step
        assert stats["latency_ms"][step]["p95"] >= stats["latency_ms"][step]["p50"] > 0
    assert "3 files" in stats["last_ingest"]["summary"]
    assert stats["top_pages"][0]["url"].startswith("file://")

    code, text, _ = run(capsys, admin_env, pipeline_db.settings.data_dir, "stats")
    assert code == 0
    for heading in ("8 questions", "coverage gaps", "thumbs down", "most-cited pages", "last ingest: 20"):
        assert heading in text, heading
    assert f"ragbot logs show {down['query_id']}" in text


def test_timeline_of_a_slack_answer_and_a_follow_up(pipeline_db: Filled, admin_env: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    data = pipeline_db.settings.data_dir
    code, out, _ = run(capsys, admin_env, data, "stats", "--json")
    query_id = json.loads(out)["thumbs_down"][0]["query_id"]
    code, out, _ = run(capsys, admin_env, data, "logs", "show", query_id, "--json")
    assert code == 0
    timeline = json.loads(out)
    events = [s["event_type"] for s in timeline["steps"]]
    for event in ("query_received", "embedding_generated", "retrieval_performed", "results_ranked",
                  "response_generated", "response_sent"):
        assert event in events, event
    for step in timeline["steps"]:
        assert step["duration_ms"] is None or round(step["duration_ms"], 1) == step["duration_ms"]
    assert timeline["chunks"] and all(0 <= c["score"] <= 1 for c in timeline["chunks"])
    assert timeline["sources"][0]["url"].endswith("install.md")
    assert timeline["grounding"]["passed"] and timeline["votes"] == [
        {"vote": -1, "user_id": "U7", "platform": "slack"}]
    assert timeline["thread_id"].startswith("slack:T1:C1:")

    code, text, _ = run(capsys, admin_env, data, "logs", "show", query_id[:10])  # a unique prefix
    assert code == 0
    assert "chunks kept:" in text and "(score" in text and "grounding: passed" in text
    assert "feedback: 0 up, 1 down" in text

    code, text, _ = run(capsys, admin_env, data, "logs", "show", pipeline_db.cli_query_id)
    assert code == 0 and "follow-up rewrite: searched" in text and "test suite" in text


def test_export_by_query_and_feedback_export(pipeline_db: Filled, admin_env: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    data = pipeline_db.settings.data_dir
    code, out, _ = run(capsys, admin_env, data, "logs", "export", "--query-id", pipeline_db.cli_query_id)
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(rows) >= 5 and {r["query_id"] for r in rows} == {pipeline_db.cli_query_id}

    code, out, _ = run(capsys, admin_env, data, "feedback", "export")
    votes = sorted((v["platform"], v["vote"]) for v in map(json.loads, out.splitlines()))
    assert code == 0 and votes == [("discord", 1), ("slack", -1)]
    target = tmp_path / "votes.csv"
    code, _, err = run(capsys, admin_env, data, "feedback", "export", "--format", "csv", "-o", str(target))
    assert code == 0 and "wrote 2 votes" in err and target.stat().st_mode & 0o077 == 0
    assert next(iter(csv.DictReader(io.StringIO(target.read_text())))).keys() >= {"response_id", "vote"}


def test_doctor_on_the_pipelines_database(pipeline_db: Filled, admin_env: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, admin_env, pipeline_db.settings.data_dir, "doctor")
    lines = out.splitlines()
    assert code == 0, out
    for name in ("settings", "data dir", "database", "vector store", "last ingest"):
        assert any(line.startswith("OK") and name in line for line in lines), name
    assert "3 chunks" in out or "chunks, local:" in out


def test_purge_deletes_in_batches_and_keeps_recent(
    pipeline_db: Filled, admin_env: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data = tmp_path / "copy"
    shutil.copytree(pipeline_db.settings.data_dir, data, ignore=shutil.ignore_patterns("*.sock", "qdrant"))
    code, out, _ = run(capsys, admin_env, data, "logs", "purge", "--older-than", "1d")
    assert code == 0 and "deleted" in out and "0 queries" in out
    code, out, _ = run(capsys, admin_env, data, "logs", "purge", "--older-than", "2099-01-01")
    assert code == 2  # in the future: refused
    code, out, _ = run(capsys, admin_env, data, "logs", "purge", "--older-than", "0m", "--dry-run")
    assert code == 0 and "would delete" in out and "8 queries" in out
    code, out, _ = run(capsys, admin_env, data, "logs", "purge", "--older-than", "0m")
    assert code == 0 and "8 queries" in out and "8 status_history" not in out
    code, out, _ = run(capsys, admin_env, data, "stats", "--json")
    assert json.loads(out)["questions"] == 0


def test_commands_on_a_large_generated_database(big_db: Path, admin_env: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    report = tmp_path / "report.html"
    code, out, err = run(capsys, admin_env, big_db, "stats", "--since", "15d", "--json",
                         "--html", str(report))
    assert code == 0 and "wrote" in err
    stats = json.loads(out)
    assert stats["questions"] == BIG_QUESTIONS
    assert sum(b["count"] for b in stats["answer_latency_histogram"]) == BIG_QUESTIONS
    assert 0.2 < stats["rates"]["not_found"] < 0.3
    gaps = {g["question"]: g for g in stats["coverage_gaps"]}
    k8s = next(g for q, g in gaps.items() if "k8s" in q or "kubernetes" in q)
    assert k8s["count"] > 500 and len(k8s["variants"]) == 2  # three wordings, one gap
    assert report.stat().st_size > 10_000 and "<svg" in report.read_text()

    query_id = stats["thumbs_down"][0]["query_id"]
    code, out, _ = run(capsys, admin_env, big_db, "logs", "show", query_id)
    assert code == 0 and "response_sent" in out
