"""The ``ragbot`` command end to end on a tiny knowledge base: exit codes, JSON, logs, hand-off."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bots.cli import main
from tests.support.paths import ROOT as REPO_ROOT

ROOT = REPO_ROOT
GUIDE = {
    "install.md": "---\ntitle: Install\ntags: [setup]\n---\n# Install\n\n## Quick start\n\n"
                  "Install ragbot with make demo. The demo creates a virtual environment, ingests the "
                  "user guide and answers a sample question with citations.\n",
    "slack.md": "# Slack set-up\n\n## Tokens\n\nCreate a Slack app from the manifest. Put the bot token "
                "in SLACK_BOT_TOKEN and the signing secret in SLACK_SIGNING_SECRET, then run ragbot "
                "serve.\n",
    "testing/index.md": "# Testing\n\n## Running the suite\n\nRun make test to lint, type-check and run "
                        "the whole suite of tests. Benchmarks run with make bench.\n",
}


@pytest.fixture
def kb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    docs = tmp_path / "guide"
    for name, text in GUIDE.items():
        (docs / name).parent.mkdir(parents=True, exist_ok=True)
        (docs / name).write_text(text, encoding="utf-8")
    monkeypatch.setenv("RAGBOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)  # no stray .env from a developer's checkout
    for var in ("SLACK_BOT_TOKEN", "DISCORD_TOKEN", "GEMINI_API_KEY", "GOOGLE_API_KEY", "COHERE_API_KEY",
                "QDRANT_URL"):
        monkeypatch.delenv(var, raising=False)
    return docs


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_ingest_ask_and_reingest(kb: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "ingest", str(kb), "--base-url", "https://ragbot.dev/docs", "--no-progress")
    assert code == 0, out
    assert "3 files" in out and "added" in out

    code, out, _ = run(capsys, "ask", "--json", "where do I put the Slack bot token?")
    assert code == 0
    response = json.loads(out)
    assert response["status"] == "answered"
    assert response["sources"][0]["url"] == "https://ragbot.dev/docs/slack"

    code, out, _ = run(capsys, "ask", "how do I bake sourdough bread?")
    assert code == 0 and "couldn't find" in out

    code, out, _ = run(capsys, "ingest", str(kb), "--no-progress", "--base-url", "https://ragbot.dev/docs")
    assert code == 0 and "0 chunks added, 0 updated, 0 removed" in out


def test_plain_answer_lists_sources(kb: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "ingest", str(kb), "--no-progress")
    code, out, _ = run(capsys, "ask", "how do I run the tests?")
    assert code == 0
    assert "Sources:" in out and "[1]" in out and "file://" in out


def test_batch_and_logs_export(kb: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "ingest", str(kb), "--no-progress")
    batch = tmp_path / "q.jsonl"
    batch.write_text(
        json.dumps({"question": "how do I install ragbot?", "thread_id": "b1"}) + "\n"
        + json.dumps({"question": "and the tests?", "thread_id": "b1"}) + "\n", encoding="utf-8")
    code, out, _ = run(capsys, "ask", "--batch", str(batch), "--json")
    assert code == 0
    lines = [json.loads(line) for line in out.splitlines()]
    assert [r["thread_id"] for r in lines] == ["b1", "b1"]

    code, out, _ = run(capsys, "logs", "export", "--format", "csv")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    first = [r["event_type"] for r in rows if r["query_id"] == lines[0]["query_id"]]
    assert first == ["query_received", "retrieval_triggered", "embedding_generated", "retrieval_performed",
                     "results_filtered", "results_ranked", "context_prepared", "response_generated",
                     "response_sent"]

    code, out, _ = run(capsys, "logs", "export", "--event-type", "response_sent", "--thread", "b1")
    assert code == 0 and len(out.splitlines()) == 2


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["ask", ""], "query_text is empty"),
        (["ask", "x" * 1001], "limit is 1000"),
        (["ask"], "give a question"),
        (["ingest", "/no/such/folder"], "no such file or folder"),
        (["ingest", ".", "--collection", "bad name!"], "collection name"),
        (["logs", "export", "--since", "yesterday-ish"], "not a date"),
        (["logs", "export", "--event-type", "nope"], "unknown event type"),
        (["ask", "--batch", "/no/such.jsonl"], "does not exist"),
    ],
)
def test_bad_input_exits_2_with_one_line(kb: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
                                         message: str) -> None:
    run(capsys, "ingest", str(kb), "--no-progress")
    run(capsys, "ask", "how do I install?")
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own checks
        code = int(exc.code or 0)
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_bad_batch_line_is_reported_and_others_answered(kb: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "ingest", str(kb), "--no-progress")
    batch = tmp_path / "q.jsonl"
    batch.write_text('{"question": "how do I install?"}\n{"question": ""}\n', encoding="utf-8")
    code, out, _ = run(capsys, "ask", "--batch", str(batch), "--json")
    assert code == 2
    first, second = (json.loads(line) for line in out.splitlines())
    assert first["status"] == "answered" and second["line"] == 2


def _wait_for(path: Path, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        if time.monotonic() > deadline:
            raise AssertionError(f"{path} never appeared")
        time.sleep(0.05)


def test_cli_hands_work_to_a_running_server(kb: Path, tmp_path: Path) -> None:
    env = {**os.environ, "RAGBOT_DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": str(ROOT)}
    cli = [sys.executable, "-m", "bots.cli"]
    subprocess.run([*cli, "ingest", str(kb), "--no-progress"], env=env, check=True, capture_output=True,
                   cwd=tmp_path, timeout=120)
    server = subprocess.Popen([*cli, "serve"], env=env, cwd=tmp_path, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(tmp_path / "data" / "ragbot.sock")
        asked = subprocess.run([*cli, "ask", "--json", "where does the Slack bot token go?"], env=env,
                               cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert asked.returncode == 0, asked.stderr
        assert json.loads(asked.stdout)["status"] == "answered"
        chatted = subprocess.run([*cli, "chat"], env=env, cwd=tmp_path, input="how do I install ragbot?\n",
                                 capture_output=True, text=True, timeout=120)
        assert chatted.returncode == 0 and "make demo" in chatted.stdout, chatted.stdout + chatted.stderr

        (kb / "new.md").write_text("# Feedback\n\nClick the thumbs buttons under an answer to vote on "
                                   "it; admins export the votes.\n", encoding="utf-8")
        ingested = subprocess.run([*cli, "ingest", str(kb), "--no-progress"], env=env, cwd=tmp_path,
                                  capture_output=True, text=True, timeout=120)
        assert ingested.returncode == 0, ingested.stderr
        assert "running server" in ingested.stdout and "1 chunks added" in ingested.stdout
        assert "WouldBlock" not in ingested.stderr
    finally:
        server.terminate()
        _, err = server.communicate(timeout=60)
    assert server.returncode == 0, err
    assert not (tmp_path / "data" / "ragbot.sock").exists()


def test_ask_before_any_ingest_explains_and_exits_2(kb: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "ask", "how do I install ragbot?")
    assert code == 2
    assert "run `ragbot ingest PATH` first" in err and err.count("\n") == 1 and not out


def test_chat_answers_on_one_thread(kb: Path, capsys: pytest.CaptureFixture[str],
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    run(capsys, "ingest", str(kb), "--no-progress")
    monkeypatch.setattr("sys.stdin", io.StringIO("how do I run the tests?\n\nunused\n"))
    code, out, _ = run(capsys, "chat", "--thread", "c1")
    assert code == 0 and "make test" in out and "Sources:" in out
    code, out, _ = run(capsys, "logs", "export", "--thread", "c1", "--event-type", "response_sent")
    assert len(out.splitlines()) == 1


@pytest.mark.parametrize(
    ("env", "message"),
    [({"RAGBOT_LOG_LEVEL": "verbose"}, "RAGBOT_LOG_LEVEL"),
     ({"RAGBOT_DATA_DIR": "/proc/nope"}, "not usable")],
)
def test_bad_environment_is_one_line_exit_2(kb: Path, capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch, env: dict[str, str],
                                            message: str) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    code, _, err = run(capsys, "ask", "anything?")
    assert code == 2 and message in err and "Traceback" not in err


def test_unwritable_export_target_is_bad_input(kb: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "ingest", str(kb), "--no-progress")
    run(capsys, "ask", "how do I install?")
    code, _, err = run(capsys, "logs", "export", "-o", "/nonexistent/dir/file.csv")
    assert code == 2 and "cannot write" in err


def test_a_second_folder_does_not_silently_replace_the_first(kb: Path, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "faq.md").write_text("# FAQ\n\nThe bot answers in threads when it is mentioned.\n", "utf-8")
    assert run(capsys, "ingest", str(kb), "--no-progress")[0] == 0
    code, _, err = run(capsys, "ingest", str(other), "--no-progress")
    assert code == 2 and "--collection" in err and "--replace" in err
    code, out, _ = run(capsys, "ask", "--json", "where does the Slack bot token go?")
    assert json.loads(out)["status"] == "answered"  # the first folder is still there

    assert run(capsys, "ingest", str(other), "--collection", "faq", "--no-progress")[0] == 0
    code, out, _ = run(capsys, "ingest", str(other), "--replace", "--no-progress")
    assert code == 0 and "removed" in out


def test_single_file_updates_its_own_copy(kb: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "ingest", str(kb), "--no-progress")
    page = kb / "testing" / "index.md"
    page.write_text(page.read_text("utf-8") + "\nCoverage reports are written to htmlcov.\n", "utf-8")
    code, out, _ = run(capsys, "ingest", str(page), "--no-progress")
    assert code == 0 and "1 files" in out and "0 chunks added" in out and "1 updated" in out
    code, out, _ = run(capsys, "ingest", str(kb), "--no-progress")
    assert "0 chunks added, 0 updated, 0 removed" in out  # no duplicate was created


def test_all_files_unreadable_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("RAGBOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "a.md").write_bytes(b"\xff\xfe\x00binary")
    code, _, err = run(capsys, "ingest", str(bad), "--no-progress")
    assert code == 2 and "skipped: a.md" in err


SPHINX = {
    "index.rst": "mylib\n=====\n\nA client for the widget service.\n\n.. toctree::\n\n   install\n",
    "install.rst": ".. _install:\n\nInstallation\n============\n\n"
                   "Installing with pip\n-------------------\n\n"
                   "To install :mod:`mylib`, run the following command in a terminal::\n\n"
                   "    $ python -m pip install mylib\n\n"
                   "Proxies\n-------\n\nSet :envvar:`HTTPS_PROXY` before installing behind a proxy.\n",
}


def test_sphinx_docs_answer_with_the_command_fenced(kb: Path, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    site = tmp_path / "sphinx"
    site.mkdir()
    for name, text in SPHINX.items():
        (site / name).write_text(text, encoding="utf-8")
    code, out, _ = run(capsys, "ingest", str(site), "--no-progress", "--base-url", "https://mylib.dev/en/latest")
    assert code == 0, out

    code, out, _ = run(capsys, "ask", "--json", "how do i install mylib with pip?")
    response = json.loads(out)
    assert code == 0 and response["status"] == "answered"
    assert response["sources"][0]["url"] == "https://mylib.dev/en/latest/install.html"
    assert response["sources"][0]["title"] == "Installation"  # the page's title, not its file name
    # The lead-in comes with the command it introduces, fenced, and no RST markup shows.
    assert "`mylib`, run the following command in a terminal:" in response["response_text"]
    assert "```\n$ python -m pip install mylib\n```" in response["response_text"]
    assert ":mod:" not in response["response_text"] and "::" not in response["response_text"]


def test_notebooks_are_answered_from_and_a_broken_one_is_reported(kb: Path, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    book = tmp_path / "book"
    book.mkdir()
    cells = [{"cell_type": "markdown", "source": "# Calibration\n\nTo calibrate the arm, run:"},
             {"cell_type": "code", "source": "arm.calibrate(samples=50)", "outputs": []}]
    (book / "calibration.ipynb").write_text(json.dumps({"cells": cells, "metadata": {}}), encoding="utf-8")
    (book / "broken.ipynb").write_text("{ this is not json", encoding="utf-8")
    code, out, err = run(capsys, "ingest", str(book), "--no-progress")
    assert code == 0 and "broken.ipynb: not a Jupyter notebook" in out + err

    code, out, _ = run(capsys, "ask", "--json", "how do i calibrate the arm?")
    response = json.loads(out)
    assert response["status"] == "answered"
    assert "```python\narm.calibrate(samples=50)\n```" in response["response_text"]
