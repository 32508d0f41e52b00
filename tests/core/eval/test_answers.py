"""Answer evaluation: case-file validation, per-case judgements, figures, reports and the runner."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.errors import InputError, QueryValidationError
from core.eval.answer_report import compare_table, failures_text, figures_table, load_saved, report_json
from core.eval.answer_runner import run_cases, source_file
from core.eval.answers import (
    AnswerCase,
    CaseKind,
    CaseResult,
    Ratio,
    citation_numbers,
    citations_clean,
    fact_hit,
    failure_reasons,
    file_hit,
    in_thread,
    latency_p50,
    load_cases,
    missing_files,
    parse_cases,
    retrieved_hit,
    score,
)
from core.models import AgentResponse, ResponseStatus, RetrievedChunk, Source

IN = AnswerCase(id="a", kind=CaseKind.IN_SCOPE, question="how to install?",
                expected_files=("install.md",), expected_keywords=("pip install",))
FOLLOW = AnswerCase(id="f", kind=CaseKind.FOLLOW_UP, question="how to install?", follow_up="and on windows?",
                    expected_files=("windows.md",), expected_keywords=("choco",))
OUT = AnswerCase(id="o", kind=CaseKind.OUT_OF_SCOPE, question="best pizza?")


def answered(case: AnswerCase, text: str, files: list[str], *, indices: list[int] | None = None,
             urls: list[str] | None = None, latency: float = 10.0) -> CaseResult:
    return CaseResult(case=case, status="answered", text=text, source_files=files,
                      source_urls=urls or [f"https://d/{f}" for f in files],
                      source_indices=indices or list(range(1, len(files) + 1)), latency_ms=latency)


def declined(case: AnswerCase, latency: float = 5.0) -> CaseResult:
    return CaseResult(case=case, status="no_relevant_documents", text="I couldn't find it.",
                      latency_ms=latency)


# ------------------------------------------------------------------ loading


def test_parse_cases_reads_the_devsets_format() -> None:
    data = {"version": 1, "corpus": "c", "docs_dir": "d", "cases": [
        {"id": "a", "kind": "in_scope", "question": "q", "expected_files": ["x.md"],
         "expected_keywords": ["k"]},
        {"id": "f", "kind": "follow_up", "question": "q", "follow_up": "and?", "expected_files": ["y.md"],
         "expected_keywords": []},
        {"id": "o", "kind": "out_of_scope", "question": "q"}]}
    cases = parse_cases(data)
    assert (cases.corpus, cases.docs_dir) == ("c", "d")
    assert [c.kind for c in cases.cases] == [CaseKind.IN_SCOPE, CaseKind.FOLLOW_UP, CaseKind.OUT_OF_SCOPE]
    assert cases.cases[1].follow_up == "and?" and cases.cases[0].expected_files == ("x.md",)


@pytest.mark.parametrize("data,message", [
    ([], "expected an object"),
    ({"cases": []}, '"cases" must be a non-empty list'),
    ({"cases": ["x"]}, "case #1: expected an object"),
    ({"cases": [{"kind": "in_scope"}]}, "case #1: field 'id'"),
    ({"cases": [{"id": "a", "kind": "maybe", "question": "q"}]}, "case 'a': field 'kind' must be one of"),
    ({"cases": [{"id": "a", "kind": "in_scope", "question": " ", "expected_files": ["x"]}]},
     "case 'a': field 'question'"),
    ({"cases": [{"id": "a", "kind": "follow_up", "question": "q", "expected_files": ["x"]}]},
     "case 'a': field 'follow_up'"),
    ({"cases": [{"id": "a", "kind": "in_scope", "question": "q"}]}, "case 'a': field 'expected_files'"),
    ({"cases": [{"id": "a", "kind": "in_scope", "question": "q", "expected_files": "x.md"}]},
     "case 'a': field 'expected_files' must be a list"),
    ({"cases": [{"id": "a", "kind": "in_scope", "question": "q", "expected_files": ["x"],
                 "expected_keywords": [3]}]}, "case 'a': field 'expected_keywords'"),
    ({"cases": [{"id": "a", "kind": "in_scope", "question": "q", "expected_files": ["../x"]}]},
     "must be relative"),
    ({"cases": [{"id": "o", "kind": "out_of_scope", "question": "q", "expected_files": ["x"]}]},
     "case 'o': an out_of_scope case"),
    ({"cases": [{"id": "o", "kind": "out_of_scope", "question": "q"}] * 2}, "case 'o': the id is used twice"),
])
def test_parse_cases_names_the_bad_case_and_field(data: Any, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_cases(data)


def test_load_cases_reports_unreadable_and_non_json_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read cases file"):
        load_cases(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(InputError, match="is not JSON"):
        load_cases(bad)
    bad.write_text('{"cases": [{"id": "x"}]}', encoding="utf-8")
    with pytest.raises(InputError, match=r"bad.json': case 'x': field 'kind'"):
        load_cases(bad)


def test_missing_files_lists_expected_files_absent_from_the_docs(tmp_path: Path) -> None:
    (tmp_path / "install.md").write_text("x", encoding="utf-8")
    cases = parse_cases({"cases": [
        {"id": "a", "kind": "in_scope", "question": "q", "expected_files": ["install.md", "gone.md"]}]})
    assert missing_files(cases, tmp_path) == [("a", "gone.md")]


# ------------------------------------------------------------------ judgements


def test_citation_numbers_expands_groups_and_ranges() -> None:
    assert citation_numbers("a [2] b [1, 3] c [4-6] d [2] e [x] f [7;8]") == [2, 1, 3, 4, 5, 6, 7, 8]
    assert citation_numbers("no markers") == []


def test_citation_numbers_are_read_in_prose_only() -> None:
    # Quoted code holds lists and indexes: `<Response [200]>`, `np.where(d)[0]`.
    text = "Call it [1].\n\n```python\n>>> r\n<Response [200]>\n```\n\nThen `where(d)[0]` [2]."
    assert citation_numbers(text) == [1, 2]


def test_citations_clean_needs_resolving_gapless_markers_and_unique_urls() -> None:
    assert citations_clean(answered(IN, "a [1] b [2]", ["x.md", "y.md"]))
    # [3] is not a listed source
    assert not citations_clean(answered(IN, "a [1] b [3]", ["x.md", "y.md"]))
    # numbered 1, 3: a gap
    assert not citations_clean(answered(IN, "a [1] b [3]", ["x.md", "y.md"], indices=[1, 3]))
    # the same URL listed twice
    assert not citations_clean(answered(IN, "a [1] b [2]", ["x.md", "x.md"], urls=["u", "u"]))


def test_answered_needs_an_answer_status_and_a_source() -> None:
    assert answered(IN, "t [1]", ["x.md"]).answered
    assert not declined(IN).answered
    no_source = CaseResult(case=IN, status="validation_failed", text="t")
    assert not no_source.answered
    with_source = CaseResult(case=IN, status="validation_failed", text="t [1]", source_files=["x"],
                             source_urls=["u"], source_indices=[1])
    assert with_source.answered


def test_file_and_fact_hits() -> None:
    good = answered(IN, "Run `PIP INSTALL ragbot` [1]", ["a.md", "b.md", "c.md", "d.md", "install.md"])
    assert file_hit(good) and fact_hit(good)
    sixth = answered(IN, "nothing here [1]", ["a.md", "b.md", "c.md", "d.md", "e.md", "install.md"])
    assert not file_hit(sixth) and not fact_hit(sixth)
    assert not file_hit(declined(IN)) and not fact_hit(declined(IN))


def test_retrieved_hit_looks_at_the_chunks_the_answer_was_written_from() -> None:
    result = answered(IN, "t [1]", ["x.md"])
    result.retrieved_files = ["x.md", "a.md", "b.md", "c.md", "install.md", "install.md"]
    assert retrieved_hit(result) and not file_hit(result)
    result.retrieved_files = ["x.md"] * 5 + ["install.md"]
    assert not retrieved_hit(result)


def test_failure_reasons_per_kind() -> None:
    assert failure_reasons(answered(IN, "pip install [1]", ["install.md"])) == []
    assert failure_reasons(declined(IN)) == ["not answered"]
    assert failure_reasons(answered(IN, "other [2]", ["x.md"])) == [
        "no expected file in the top 5 sources", "expected fact missing", "citations not clean"]
    assert failure_reasons(declined(OUT)) == []
    assert failure_reasons(answered(OUT, "pizza [1]", ["x.md"])) == ["answered an off-topic question"]


# ------------------------------------------------------------------ figures


def hand_results() -> list[CaseResult]:
    no_keywords = AnswerCase(id="n", kind=CaseKind.IN_SCOPE, question="q", expected_files=("n.md",))
    return [
        answered(IN, "pip install it [1]", ["install.md"], latency=10.0),       # all good
        answered(IN, "wrong page [1] [2]", ["x.md", "x.md"], urls=["u", "u"], latency=20.0),
        declined(IN, latency=30.0),
        answered(no_keywords, "text [1]", ["n.md"], latency=40.0),             # no fact to check
        answered(FOLLOW, "use choco [1]", ["windows.md"], latency=50.0),
        declined(OUT, latency=60.0),
        answered(OUT, "pizza [1]", ["x.md"], latency=70.0),
    ]


def test_score_counts_each_metric_over_its_own_cases() -> None:
    figures = score(hand_results())
    assert figures["in_scope_answered"] == Ratio(3, 4)
    assert figures["off_topic_declined"] == Ratio(1, 2)
    assert figures["file_top5"] == Ratio(2, 4)
    assert figures["fact"] == Ratio(1, 3)  # the case without keywords is not counted
    assert figures["follow_up_file_top5"] == Ratio(1, 1)
    assert figures["follow_up_fact"] == Ratio(1, 1)
    assert figures["citations_clean"] == Ratio(4, 5)  # every answered case, off-topic ones too
    assert figures["retrieved_top5"] == Ratio(0, 4)  # no retrieved chunks in these results
    assert figures["follow_up_retrieved_top5"] == Ratio(0, 1)
    assert latency_p50(hand_results()) == 40.0
    assert Ratio(0, 0).value is None and latency_p50([]) == 0.0


def test_score_on_no_follow_ups_gives_none() -> None:
    figures = score([declined(IN)])
    assert figures["follow_up_fact"].value is None and figures["citations_clean"].value is None


# ------------------------------------------------------------------ reports


def test_report_json_and_tables() -> None:
    report = report_json(hand_results(), corpus="c")
    assert report["corpus"] == "c" and report["figures"]["in_scope_answered"] == 0.75
    assert report["figures"]["latency_p50_ms"] == 40.0
    assert report["counts"]["fact"] == {"hits": 1, "total": 3}
    first = report["cases"][0]
    assert first["sources"] == [{"index": 1, "file": "install.md", "url": "https://d/install.md"}]
    assert first["file_hit"] and first["failures"] == [] and first["citations_clean"]
    assert report["cases"][2]["citations_clean"] is None
    json.dumps(report)  # serialisable
    table = figures_table(score(hand_results()), 40.0)
    assert "| in-scope answered | 0.750 | 3/4 |" in table and "40.0 ms" in table


def test_failures_text_limits_and_shows_the_answer() -> None:
    results = hand_results()
    text = failures_text(results, 2)
    assert text.startswith("3 failing case(s); the first 2:")
    assert "- a (in_scope): no expected file" in text and "sources: x.md, x.md" in text
    assert "answer: wrong page [1] [2]" in text and "- o (" not in text
    assert failures_text(results, 0) == "3 failing case(s)."
    long = answered(IN, "word " * 200 + "[1]", ["x.md"])
    assert "…" in failures_text([long], 1)


def test_saved_report_round_trip_and_compare(tmp_path: Path) -> None:
    saved = tmp_path / "before.json"
    saved.write_text(json.dumps(report_json(hand_results())), encoding="utf-8")
    before = load_saved(saved)
    after = dict(before, in_scope_answered=1.0, follow_up_fact=None)
    table = compare_table(before, after)
    assert "| in-scope answered | 0.750 | 1.000 | +0.250 |" in table
    assert "| follow-up fact | 1.000 | — | — |" in table
    assert "| answer latency p50 | 40.0 ms | 40.0 ms | +0.0 ms |" in table


@pytest.mark.parametrize("content,message", [
    (None, "cannot read saved report"),
    ("nope", "is not JSON"),
    ('{"figures": {"a": "x"}}', "no 'figures' object"),
    ("[1]", "no 'figures' object"),
])
def test_load_saved_rejects_bad_files(tmp_path: Path, content: str | None, message: str) -> None:
    path = tmp_path / "saved.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        load_saved(path)


# ------------------------------------------------------------------ runner


def chunk(name: str, *, docs: Path) -> RetrievedChunk:
    return RetrievedChunk(chunk_id=f"id-{name}", content="text", score=0.9, url=(docs / name).as_uri(),
                          title=name, chunk_index=0, source_document=name)


def response(question: str, thread_id: str, chunks: list[RetrievedChunk]) -> AgentResponse:
    sources = [Source(index=i, chunk_id=c.chunk_id, url=c.url, title=c.title, chunk_index=0, score=c.score)
               for i, c in enumerate(chunks, start=1)]
    status = ResponseStatus.ANSWERED if chunks else ResponseStatus.NO_RELEVANT_DOCUMENTS
    return AgentResponse(query_id="q", query_text=question, thread_id=thread_id, response_text="t [1]",
                         status=status, sources=sources, retrieved_chunks=chunks)


def test_source_file_maps_chunks_and_file_urls_back_to_relative_paths(tmp_path: Path) -> None:
    c = chunk("sub/page.md", docs=tmp_path)
    source = Source(index=1, chunk_id=c.chunk_id, url=c.url, title="t", chunk_index=0, score=0.5)
    assert source_file(source, {c.chunk_id: c}, tmp_path) == "sub/page.md"
    assert source_file(source, {}, tmp_path) == "sub/page.md"  # from the file:// URL
    web = source.model_copy(update={"url": "https://example.com/docs/page"})
    assert source_file(web, {}, tmp_path) == "https://example.com/docs/page"


async def test_run_cases_threads_follow_ups_and_records_errors(tmp_path: Path) -> None:
    asked: list[tuple[str, str]] = []

    async def ask(question: str, thread_id: str) -> AgentResponse:
        asked.append((question, thread_id))
        if question == "best pizza?":
            raise QueryValidationError("too long")
        name = "windows.md" if question.startswith("and") else "install.md"
        return response(question, thread_id, [chunk(name, docs=tmp_path)])

    seen: list[str] = []
    results = await run_cases([IN, FOLLOW, OUT], ask, docs_root=tmp_path,
                              progress=lambda n, total, r: seen.append(f"{n}/{total} {r.case.id}"))
    assert seen == ["1/3 a", "2/3 f", "3/3 o"]
    assert [q for q, _ in asked] == ["how to install?", "how to install?", "and on windows?", "best pizza?"]
    assert asked[1][1] == asked[2][1] != asked[0][1]  # the follow-up shares its question's thread
    assert results[0].source_files == ["install.md"] and results[0].answered
    assert results[0].retrieved_files == ["install.md"] and retrieved_hit(results[0])
    assert results[1].source_files == ["windows.md"] and file_hit(results[1])
    assert results[2].status == "error" and "too long" in results[2].text and not results[2].answered


def test_in_thread_asks_each_off_topic_question_again_after_an_in_scope_one() -> None:
    other = AnswerCase(id="b", kind=CaseKind.IN_SCOPE, question="how to upgrade?", expected_files=("up.md",))
    out2 = AnswerCase(id="o2", kind=CaseKind.OUT_OF_SCOPE, question="weather tomorrow?")
    out3 = AnswerCase(id="o3", kind=CaseKind.OUT_OF_SCOPE, question="a joke?")
    cases = in_thread([IN, OUT, other, FOLLOW, out2, out3])
    derived = cases[6:]
    assert [c.id for c in derived] == ["o@thread", "o2@thread", "o3@thread"]
    assert [(c.question, c.follow_up) for c in derived] == [
        ("how to install?", "best pizza?"), ("how to upgrade?", "weather tomorrow?"),
        ("how to install?", "a joke?")]
    assert all(c.kind is CaseKind.OFF_TOPIC_IN_THREAD and c.kind.off_topic and c.kind.threaded
               for c in derived)
    assert in_thread([OUT]) == [OUT]  # nothing to ask it after
    own = AnswerCase(id="o@thread", kind=CaseKind.OFF_TOPIC_IN_THREAD, question="q?", follow_up="pizza?")
    assert [c.id for c in in_thread([IN, OUT, own])] == ["a", "o", "o@thread"]  # ids stay unique


def test_off_topic_in_a_thread_is_scored_and_parsed_like_an_off_topic_case() -> None:
    threaded = AnswerCase(id="t", kind=CaseKind.OFF_TOPIC_IN_THREAD, question="how to install?",
                          follow_up="best pizza?")
    figures = score([declined(threaded), answered(threaded, "Pizza [1]", ["install.md"])])
    assert figures["off_topic_in_thread_declined"] == Ratio(1, 2)
    pizza = answered(threaded, "Pizza [1]", ["install.md"])
    assert failure_reasons(pizza) == ["answered an off-topic question"]
    parsed = parse_cases({"cases": [{"id": "t", "kind": "off_topic_in_thread", "question": "q?",
                                     "follow_up": "pizza?"}]})
    assert parsed.cases[0].follow_up == "pizza?"
    with pytest.raises(InputError, match="case 't': an off_topic_in_thread case has no expected_files"):
        parse_cases({"cases": [{"id": "t", "kind": "off_topic_in_thread", "question": "q?",
                                "follow_up": "pizza?", "expected_files": ["a.md"]}]})


async def test_run_cases_scores_the_second_message_of_an_off_topic_thread(tmp_path: Path) -> None:
    asked: list[tuple[str, str]] = []

    async def ask(question: str, thread_id: str) -> AgentResponse:
        asked.append((question, thread_id))
        return response(question, thread_id, [chunk("install.md", docs=tmp_path)])

    threaded = in_thread([IN, OUT])[2]
    [result] = await run_cases([threaded], ask, docs_root=tmp_path)
    assert [q for q, _ in asked] == ["how to install?", "best pizza?"] and asked[0][1] == asked[1][1]
    assert result.answered and failure_reasons(result) == ["answered an off-topic question"]
