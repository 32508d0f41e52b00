"""``ragbot eval answers`` end to end: the bot's own user guide, bad input, and the development sets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bots.cli import main
from core.eval.answers import METRICS
from tests.support.paths import ROOT, SHARED_DATA, TEST_DATA

CASES = TEST_DATA / "answer_cases.json"
DOCS = ROOT / "docs"
DEVSETS = SHARED_DATA / "devsets"


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RAGBOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    for var in ("COHERE_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "QDRANT_URL"):
        monkeypatch.delenv(var, raising=False)
    return tmp_path


def test_eval_answers_on_the_user_guide_json_save_and_compare(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = env / "before.json"
    argv = ["eval", "answers", "--cases", str(CASES), "--docs", str(DOCS)]
    assert main([*argv, "--json", "--save", str(saved)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report == json.loads(saved.read_text(encoding="utf-8"))
    assert set(report["figures"]) == {*METRICS, "latency_p50_ms"}
    assert report["ingest"]["files"] == len(list(DOCS.glob("*.md")))
    assert [c["id"] for c in report["cases"]] == ["ug-001", "ug-002", "ug-003", "ugfu-001", "ugoos-001",
                                                  "ugoos-001@thread"]
    assert report["counts"]["in_scope_answered"]["total"] == 3
    assert report["counts"]["follow_up_file_top5"]["total"] == 1
    assert report["counts"]["off_topic_declined"]["total"] == 1
    # The off-topic question is asked again after the first in-scope question, in its thread.
    assert report["counts"]["off_topic_in_thread_declined"]["total"] == 1
    # The guide answers its own installation questions, from its own pages.
    assert report["figures"]["in_scope_answered"] >= 2 / 3
    sources = [s["file"] for c in report["cases"] for s in c["sources"]]
    assert sources and all(name.endswith(".md") and not name.startswith("/") for name in sources)

    assert main([*argv, "--compare", str(saved), "--show-failures", "1"]) == 0
    out = capsys.readouterr().out
    assert "| in-scope answered |" in out and "| metric | before | after | delta |" in out
    assert "failing case(s)" in out


@pytest.mark.parametrize("content,message", [
    ("{not json", "is not JSON"),
    ('{"cases": [{"id": "x1", "kind": "in_scope", "question": "q"}]}', "case 'x1': field 'expected_files'"),
    ('{"cases": [{"id": "x1", "kind": "in_scope", "question": "q", "expected_files": ["nope.md"]}]}',
     "case 'x1': expected file 'nope.md' is not under"),
])
def test_eval_answers_bad_cases_file_exits_2_with_one_line(
    env: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    bad = env / "bad.json"
    bad.write_text(content, encoding="utf-8")
    assert main(["eval", "answers", "--cases", str(bad), "--docs", str(DOCS)]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err and "Traceback" not in err


@pytest.mark.parametrize("extra,message", [
    (["--docs", "missing-folder"], "docs folder 'missing-folder' does not exist"),
    (["--docs", str(DOCS), "--compare", "missing.json"], "cannot read saved report"),
    (["--docs", str(DOCS), "--show-failures", "-1"], "--show-failures"),
])
def test_eval_answers_bad_arguments_exit_2(
    env: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    assert main(["eval", "answers", "--cases", str(CASES), *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err


@pytest.mark.slow
@pytest.mark.shared
@pytest.mark.skipif(not DEVSETS.is_dir(), reason="../shared/data/devsets is absent")
@pytest.mark.parametrize("name", ["gazebo-docs", "robotics-textbook-2"])
def test_eval_answers_on_the_development_sets(
    env: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    cases_file = DEVSETS / f"{name}.json"
    docs = SHARED_DATA / json.loads(cases_file.read_text(encoding="utf-8"))["docs_dir"]
    assert main(["eval", "answers", "--cases", str(cases_file), "--docs", str(docs), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    counts = report["counts"]
    assert (counts["in_scope_answered"]["total"], counts["follow_up_file_top5"]["total"],
            counts["off_topic_declined"]["total"]) == (40, 8, 16)
    assert all(value is not None for value in report["figures"].values())


@pytest.mark.shared
@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason="../shared/data is absent")
@pytest.mark.parametrize("cases_file", sorted((ROOT / "bench" / "answer_cases").glob("*.json")),
                         ids=lambda p: p.stem)
def test_our_case_files_load_and_name_only_existing_pages(cases_file: Path) -> None:
    from core.eval.answers import load_cases, missing_files

    cases = load_cases(cases_file)
    assert cases.cases and missing_files(cases, SHARED_DATA / cases.docs_dir) == []


@pytest.mark.parametrize("cases_file", sorted((ROOT / "bench" / "external_cases").glob("*.json")),
                         ids=lambda p: p.stem)
def test_the_external_case_files_load_and_say_where_their_docs_come_from(cases_file: Path) -> None:
    from core.eval.answers import load_cases

    # Their corpora are fetched, not in ../shared: each file names the repository and commit.
    cases = load_cases(cases_file)
    assert cases.cases and "commit" in json.loads(cases_file.read_text())["note"]
