"""``ragbot search``, ``ragbot validate`` and the spec's spellings on the command line (issue 12).

Run on the demo corpus (the user guide in docs/) and on gazebo-docs from ../shared/data.
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from bots.cli import main
from core.models import ChunkState, SearchResults, ValidationResult
from tests.support.paths import ROOT, SHARED_DATA

GAZEBO = SHARED_DATA / "gazebo-docs"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse's own checks
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def _ingested(tmp: Path, source: Path, *extra: str) -> Path:
    data = tmp / "data"
    with pytest.MonkeyPatch.context() as mp:
        _clean_env(mp, data, tmp)
        assert main(["ingest", str(source), "--no-progress", *extra]) == 0
    return data


def _clean_env(mp: pytest.MonkeyPatch, data: Path, cwd: Path) -> None:
    mp.setenv("RAGBOT_DATA_DIR", str(data))
    mp.chdir(cwd)  # no stray .env from a developer's checkout
    for var in ("SLACK_BOT_TOKEN", "DISCORD_TOKEN", "GEMINI_API_KEY", "GOOGLE_API_KEY", "COHERE_API_KEY",
                "QDRANT_URL"):
        mp.delenv(var, raising=False)


@pytest.fixture(scope="module")
def demo_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The user guide (docs/), ingested once for the module."""
    return _ingested(tmp_path_factory.mktemp("demo"), ROOT / "docs")


@pytest.fixture
def demo(demo_data: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    _clean_env(monkeypatch, demo_data, demo_data.parent)
    yield demo_data


def results_of(out: str) -> list[ValidationResult]:
    return [ValidationResult.model_validate_json(line) for line in out.splitlines()]


# --------------------------------------------------------------------------- validate


def test_validate_json_on_the_demo_corpus(demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "validate", "--json")
    assert code == 0
    results = results_of(out)
    assert len(results) == 10 and all(r.success for r in results)
    for result in results:
        assert result.query is not None and result.query.collection_name == "ragbot"
        assert result.query.embedding == [], "the vector stays out of the output; its dimension is a metric"
        assert result.metrics["embedding_dimension"] == 256 and result.metrics["scores_in_range"] is True
        assert result.metrics["count"] == len(result.retrieved_chunks) > 0
        assert result.metrics["metadata_completeness"] > 0.9 and result.metrics["latency_ms"] > 0
        assert str(result.metrics["origin"]).startswith("file://")
    located = [r.metrics["origin_rank"] for r in results]
    assert sum(rank is not None for rank in located) >= 8, located


def test_validate_with_a_queries_file(demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_text("\n".join(json.dumps(c) for c in [
        {"query_text": "where does the Slack bot token go?", "expected_page": "slack.md"},
        {"question": "how do I install ragbot?", "expected_url": "install.md", "limit": 3},
        {"text": "which Qdrant server settings exist?", "expected_page": "discord.md"},
    ]) + "\n", encoding="utf-8")
    code, out, err = run(capsys, "validate", "--queries", str(cases))
    assert code == 1, "one expectation fails"
    lines = out.splitlines()
    assert lines[0].startswith("PASS") and "expected page at" in lines[0]
    assert lines[1].startswith("PASS")
    assert lines[2].startswith("FAIL") and "expected page 'discord.md' not among" in lines[2]
    assert err.strip() == "2 of 3 checks passed"
    code, out, _ = run(capsys, "validate", "--queries", str(cases), "--json", "--expected-count", "5")
    results = results_of(out)
    assert code == 1 and [len(r.retrieved_chunks) for r in results] == [5, 3, 5]
    assert results[0].success and results[0].metrics["expected_page_found"] is True
    assert results[0].metrics["expected_count"] == 5
    assert not results[1].success and results[1].message == "expected 5 chunk(s), got 3"


@pytest.mark.parametrize(("line", "message"), [
    ('{"query_text": "q", "expected": "a.md"}', "cases.jsonl:2: unknown key 'expected'; use "),
    ('{"query_text": "q", "limit": 30}',
     "cases.jsonl:2: limit: Input should be less than or equal to 20 (got 30)"),
    ('not json', "cases.jsonl:2: not JSON"),
])
def test_validate_names_a_bad_line(demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                   line: str, message: str) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"query_text": "install"}\n' + line + "\n", encoding="utf-8")
    code, out, err = run(capsys, "validate", "--queries", str(cases))
    assert code == 2 and out == "" and message in err and err.count("\n") == 1


@pytest.mark.parametrize(("argv", "message"), [
    (["validate", "--expected-count", "99"], "--expected-count 99 must be between 0 and 20"),
    (["validate", "--sample", "0"], "--sample 0 must be at least 1"),
    (["validate", "--collection", "never"], "nothing has been ingested into collection 'never'"),
    (["validate", "--collection", "bad name"], "collection name 'bad name' is invalid"),
    (["validate", "--queries", "/no/such.jsonl"], "does not exist"),
    (["search", "x", "--limit", "50"], "top_k: Input should be less than or equal to 20 (got 50)"),
    (["search", "x", "--min-score", "2"], "threshold: Input should be less than or equal to 1"),
    (["search", "   "], "query_text is empty"),
    (["search", '{"query_text": "x", "lmit": 3}'], "unknown key 'lmit'; use top_k, limit, threshold"),
    (["search", '{"query_text": "x"'], "the QueryRequest is not JSON"),
    (["search", "x", "--collection", "never"], "nothing has been ingested into collection 'never'"),
    (["search", "--limit", "x", "q"], "invalid int value"),
])
def test_bad_input_exits_2_with_one_line(demo: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
                                         message: str) -> None:
    code, _, err = run(capsys, *argv)
    assert code == 2 and message in err and err.count("\n") == 1 and "Traceback" not in err


# --------------------------------------------------------------------------- search


def test_search_json_on_the_demo_corpus(demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "search", "--json", "where does the Slack bot token go?")
    assert code == 0
    results = SearchResults.model_validate_json(out)
    assert 0 < len(results.results) <= 5 and results.total_results >= len(results.results)
    assert results.results[0].source_document == "slack.md" or "slack" in results.results[0].content.lower()
    assert [c.score for c in results.results] == sorted((c.score for c in results.results), reverse=True)
    assert {c.state for c in results.results} == {ChunkState.RETURNED}
    assert results.query_time > 0 and results.ranking_algorithm and results.retrieval_stats is not None
    assert results.retrieval_stats.collection_name == "ragbot"


def test_search_takes_a_query_request_and_flags(demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    request = json.dumps({"query_text": "Discord slash command", "limit": 2, "min_score": 0.3})
    code, out, _ = run(capsys, "search", "--json", request)
    results = SearchResults.model_validate_json(out)
    assert code == 0 and len(results.results) == 2 and min(c.score for c in results.results) >= 0.3
    assert results.request is not None and (results.request.top_k, results.request.threshold) == (2, 0.3)
    code, out, _ = run(capsys, "search", "--json", request, "--limit", "1", "--min-score", "0")
    results = SearchResults.model_validate_json(out)
    assert len(results.results) == 1 and results.request is not None and results.request.threshold == 0.0
    code, out, _ = run(capsys, "search", "Discord slash command", "--top-k", "3")
    assert code == 0 and out.startswith("3 of ") and out.count("\n[") == 3


def test_search_agrees_with_the_answer(demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An admin sees why an answer cited what it cited: the same chunks, in the same order."""
    question = "how do I export the activity log?"
    _, out, _ = run(capsys, "ask", "--json", question)
    answer = json.loads(out)
    _, out, _ = run(capsys, "search", "--json", question)
    found = SearchResults.model_validate_json(out)
    assert [c["chunk_id"] for c in answer["retrieved_chunks"]][:len(found.results)] == [
        c.chunk_id for c in found.results][:len(answer["retrieved_chunks"])]


@pytest.mark.skipif(not GAZEBO.is_dir(), reason="../shared/data/gazebo-docs is not here")
def test_validate_and_search_on_gazebo_docs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    data = _ingested(tmp_path, GAZEBO)
    capsys.readouterr()
    _clean_env(monkeypatch, data, tmp_path)
    code, out, _ = run(capsys, "validate", "--json", "--sample", "12")
    results = results_of(out)
    assert code == 0 and len(results) == 12 and all(r.success for r in results)
    assert sum(r.metrics["origin_rank"] is not None for r in results) >= 9
    code, out, _ = run(capsys, "search", "--json", "how do I spawn a model into the simulation?")
    found = SearchResults.model_validate_json(out)
    assert code == 0 and found.results and "spawn" in found.results[0].content.lower()


# --------------------------------------------------------------------------- ask: batch lines, thread ids


def test_batch_lines_take_the_spec_spellings_and_options(demo: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    batch = tmp_path / "q.jsonl"
    batch.write_text("\n".join([
        json.dumps({"query_text": "where does the Slack bot token go?", "limit": 1}),
        json.dumps({"text": "where does the Slack bot token go?", "top_k": 2, "session_id": "s1"}),
        json.dumps({"question": "where does the Slack bot token go?", "min_score": 1.0}),
        json.dumps({"question": "where does the Slack bot token go?", "colour": "red"}),
        json.dumps({"question": "where does the Slack bot token go?", "collection": "never"}),
        json.dumps({"question": "where does the Slack bot token go?", "threshold": 3}),
    ]) + "\n", encoding="utf-8")
    code, out, _ = run(capsys, "ask", "--batch", str(batch))
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 2
    assert len(lines[0]["retrieved_chunks"]) == 1 and len(lines[1]["retrieved_chunks"]) <= 2
    assert lines[1]["thread_id"] == "s1" and lines[0]["thread_id"].startswith("cli:")
    assert lines[2]["status"] == "no_relevant_documents"
    assert lines[3] == {"line": 4, "error": lines[3]["error"]}
    assert lines[3]["error"].startswith("unknown key 'colour'; use ") and "question" in lines[3]["error"]
    assert lines[4]["status"] == "retrieval_failed" and lines[4]["state"] == "ERROR"
    assert lines[5]["line"] == 6 and lines[5]["error"].startswith("threshold: Input should be less than")


def test_questions_without_a_thread_get_one(demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, first, _ = run(capsys, "ask", "--json", "how do I install ragbot?")
    _, second, _ = run(capsys, "ask", "--json", "how do I install ragbot?")
    ids = [json.loads(first)["thread_id"], json.loads(second)["thread_id"]]
    assert all(isinstance(i, str) and i.startswith("cli:") for i in ids) and ids[0] != ids[1]
    _, out, _ = run(capsys, "ask", "--json", "--thread", "mine", "how do I install ragbot?")
    assert json.loads(out)["thread_id"] == "mine"


# --------------------------------------------------------------------------- what is stored


def test_status_and_history_are_stored_after_real_runs(demo: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "ask", "--json", "how do I install ragbot?")
    answered = json.loads(out)
    batch = tmp_path / "q.jsonl"
    batch.write_text(json.dumps({"question": "how do I install ragbot?", "collection": "never"}) + "\n",
                     encoding="utf-8")
    _, out, _ = run(capsys, "ask", "--batch", str(batch))
    failed = json.loads(out)
    conn = sqlite3.connect(demo / "ragbot.sqlite3")
    try:
        def status(query_id: str) -> str:
            row = conn.execute("SELECT status FROM queries WHERE query_id = ?", (query_id,)).fetchone()
            return str(row[0])

        def history(query_id: str) -> list[tuple[str, str]]:
            return conn.execute("SELECT machine, status FROM status_history WHERE query_id = ? ORDER BY id",
                                (query_id,)).fetchall()

        assert status(answered["query_id"]) == "COMPLETED"
        assert history(answered["query_id"]) == [("query", "PENDING"), ("query", "PROCESSING"),
                                                 ("response", "PROCESSING"), ("response", "COMPLETED"),
                                                 ("query", "COMPLETED")]
        assert status(failed["query_id"]) == "FAILED"
        assert history(failed["query_id"])[-2:] == [("response", "ERROR"), ("query", "FAILED")]
        states = conn.execute("SELECT state FROM responses WHERE query_id IN (?, ?) ORDER BY state",
                              (answered["query_id"], failed["query_id"])).fetchall()
        assert states == [("COMPLETED",), ("ERROR",)]
    finally:
        conn.close()
    code, out, _ = run(capsys, "logs", "show", answered["query_id"], "--json")
    if code == 0:  # `ragbot logs show` (issue 11) puts the history in the question's timeline
        assert [s["status"] for s in json.loads(out)["states"]][-1] == "COMPLETED"


def test_logs_export_writes_its_own_admin_export_entry(demo: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "ask", "how do I install ragbot?")
    code, out, _ = run(capsys, "logs", "export", "--format", "csv", "--event-type", "query_received")
    assert code == 0
    exported = len(list(csv.DictReader(io.StringIO(out))))
    code, out, _ = run(capsys, "logs", "export", "--event-type", "admin_export")
    entries = [json.loads(line) for line in out.splitlines()]
    assert entries and entries[-1]["response_summary"].startswith("cli: user ")
    summary = entries[-1]["response_summary"]
    assert f"exported {exported} log entries as csv (event_type query_received)" in summary


def test_ingest_repairs_a_base_url_with_a_space(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    docs = tmp_path / "guide"
    docs.mkdir()
    (docs / "install.md").write_text("# Install\n\nInstall ragbot with make demo.\n", encoding="utf-8")
    _clean_env(monkeypatch, tmp_path / "data", tmp_path)
    code, out, _ = run(capsys, "ingest", str(docs), "--no-progress",
                       "--base-url", "https://ragbot.dev/my docs")
    assert code == 0 and "1 chunk URL(s) repaired" in out
    code, out, _ = run(capsys, "ask", "--json", "how do I install ragbot?")
    response = json.loads(out)
    assert code == 0 and response["status"] == "answered"
    assert response["sources"][0]["url"] == "https://ragbot.dev/my%20docs/install"


async def test_a_running_server_serves_search_validate_and_ask_options(demo: Path) -> None:
    """What `ragbot search`, `validate` and `ask --batch` send over the control socket."""
    from bots.control import handle_request
    from bots.runtime import build_runtime
    from core.settings import load_settings

    runtime = await build_runtime(load_settings(), recover=False)
    try:
        reply = await handle_request(runtime, {"op": "search", "request": {"query_text": "slack token",
                                                                          "limit": 2}})
        assert reply["ok"] and len(SearchResults.model_validate(reply["results"]).results) == 2
        reply = await handle_request(runtime, {"op": "validate", "sample": 3,
                                               "cases": [], "expected_count": None, "collection": None})
        checks = [ValidationResult.model_validate(r) for r in reply["results"]]
        assert reply["ok"] and [c.success for c in checks] == [True] * 3
        reply = await handle_request(runtime, {"op": "search", "request": {"query_text": "x", "lmit": 2}})
        assert reply == {"ok": False, "exit_code": 2, "error": reply["error"]} and "'lmit'" in reply["error"]
        reply = await handle_request(runtime, {"op": "ask", "question": "where does the Slack bot token go?",
                                               "thread_id": "t", "top_k": 1, "threshold": None,
                                               "collection": None})
        assert reply["ok"] and len(reply["response"]["retrieved_chunks"]) == 1
        reply = await handle_request(runtime, {"op": "ask", "question": "q", "top_k": 99})
        assert reply["exit_code"] == 2 and "top_k" in reply["error"]
    finally:
        await runtime.aclose()
