"""Issue 10 items 17 and 19: a bad batch line stops nothing; `logs export | head` and `chat` behave."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bots import cli
from core.errors import InputError, QueryValidationError
from core.jsonl import BadLine, iter_jsonl
from core.models import AgentResponse, ResponseStatus


def answer_for(question: str, thread_id: str | None = None) -> AgentResponse:
    return AgentResponse(query_id=f"q-{question}", response_text=f"answer to {question}", query_text=question,
                         thread_id=thread_id, status=ResponseStatus.NO_RELEVANT_DOCUMENTS)


@pytest.fixture
def fake_answerer(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    asked: list[str] = []

    @contextlib.asynccontextmanager
    async def answerer(settings: Any) -> AsyncIterator[Any]:
        async def ask(question: str, thread_id: str | None, user_context: str | None,
                      **_: Any) -> AgentResponse:
            if not question.strip():
                raise QueryValidationError("query_text is empty")
            if question == "crash":
                raise RuntimeError("boom")
            asked.append(question)
            return answer_for(question, thread_id)

        yield ask

    monkeypatch.setattr(cli, "_answerer", answerer)
    monkeypatch.setenv("RAGBOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    return asked


def test_one_bad_line_is_reported_and_the_rest_answered(
    fake_answerer: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    batch = tmp_path / "q.jsonl"
    batch.write_bytes(b"\n".join([
        b'{"question": "first"}',
        b"not json at all",
        b'{"question": "caf\xe9 in latin-1"}',
        b"",
        b'{"thread_id": "t1"}',
        b'{"question": 42}',
        b'{"question": ""}',
        b'["question"]',
        b'{"question": "crash"}',
        b'{"question": "last", "thread_id": "t9"}',
    ]) + b"\n")
    code = cli.main(["ask", "--batch", str(batch)])
    out, err = capsys.readouterr()
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 2 and "Traceback" not in err
    assert fake_answerer == ["first", "last"]
    errors = {row["line"]: row["error"] for row in rows if "line" in row}
    assert sorted(errors) == [2, 3, 5, 6, 7, 8, 9]
    assert "not JSON" in errors[2] and "not UTF-8" in errors[3]
    assert all(errors[n] for n in (5, 6, 7, 8))  # each names its own problem
    assert errors[9] == "unexpected error: RuntimeError: boom"
    assert [r["response_text"] for r in rows if "line" not in r] == ["answer to first", "answer to last"]


def test_a_missing_batch_file_is_one_line_before_anything_opens(
    fake_answerer: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli.main(["ask", "--batch", str(tmp_path / "none.jsonl")])
    assert code == 2 and "does not exist" in capsys.readouterr().err


@settings(max_examples=60, deadline=None)
@given(lines=st.lists(st.one_of(
    st.binary(max_size=40).filter(lambda b: b"\n" not in b),
    st.builds(lambda q: json.dumps({"question": q}).encode(), st.text(max_size=20)),
    st.builds(lambda v: json.dumps(v).encode(),
              st.dictionaries(st.text(max_size=5), st.integers(), max_size=3)),
), max_size=12))
def test_the_batch_reader_yields_every_non_blank_line_once_and_never_raises(
    lines: list[bytes], tmp_path_factory: pytest.TempPathFactory
) -> None:
    path = tmp_path_factory.mktemp("batch") / "b.jsonl"
    path.write_bytes(b"\n".join(lines))
    got = list(iter_jsonl(path, required="question", example="{...}"))
    expected = [n for n, raw in enumerate(lines, start=1) if raw.decode("utf-8", "replace").strip()
                or not _utf8(raw)]
    assert [n for n, _ in got] == expected
    for number, item in got:
        raw = lines[number - 1]
        if isinstance(item, BadLine):
            assert item.problem
        else:
            assert json.loads(raw) == item and "question" in item


def _utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def test_the_batch_reader_refuses_a_folder(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="is a folder"):
        iter_jsonl(tmp_path, required="question", example="{...}")
