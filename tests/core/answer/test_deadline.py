"""Issue 10 items 15 and 16: one deadline per question; document embedding off the event loop."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from core.answer.deadline import DeadlineExceeded, before_deadline, question_deadline, remaining
from core.embedders.local import LocalEmbedder
from core.models import EventType, ResponseStatus
from core.protocols import Generation, GenerationRequest, SearchFn
from tests.core.answer.test_pipeline import build


class HangingGenerator:
    """A provider that never answers (each of its own retries would time out after 30 s)."""

    def __init__(self) -> None:
        self.started = asyncio.Event()

    @property
    def name(self) -> str:
        return "hanging-llm"

    async def generate(self, request: GenerationRequest, *, search: SearchFn) -> Generation:
        self.started.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


async def test_a_hanging_model_gets_the_extractive_answer_at_the_deadline() -> None:
    pipeline, storage, _ = await build(HangingGenerator(), answer_deadline=0.3)
    started = time.perf_counter()
    response = await pipeline.answer("Where do I put the Slack bot token?", thread_id="t1")
    assert time.perf_counter() - started < 3
    assert response.status in (ResponseStatus.ANSWERED, ResponseStatus.VALIDATION_FAILED)
    assert "SLACK_BOT_TOKEN" in response.response_text and response.model_used == "extractive"
    errors = [e.error_details or "" for e in storage.entries
              if e.event_type is EventType.ERROR and e.query_id == response.query_id]
    assert any("0.3 s per-question deadline" in e and "answered extractively" in e for e in errors)


async def test_a_hanging_search_gives_a_reason_at_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    pipeline, _, _ = await build(answer_deadline=0.3)

    async def hang(*args: Any, **kwargs: Any) -> Any:
        await asyncio.Event().wait()

    monkeypatch.setattr(pipeline.retriever, "embed", hang)
    started = time.perf_counter()
    response = await pipeline.answer("Where do I put the Slack bot token?", thread_id="t1")
    assert time.perf_counter() - started < 3
    assert response.status is ResponseStatus.RETRIEVAL_FAILED and response.reference_id
    assert "took longer than 0.3 s" in response.response_text


async def test_the_deadline_is_per_question_and_only_inside_one() -> None:
    assert remaining() is None
    assert await before_deadline(asyncio.sleep(0, "no deadline"), "x") == "no deadline"

    async def one(seconds: float, work: float) -> str:
        with question_deadline(seconds):
            with question_deadline(100):  # a nested block keeps the outer deadline
                left = remaining()
                assert left is not None and left <= seconds
            try:
                await before_deadline(asyncio.sleep(work), "the work")
            except DeadlineExceeded as exc:
                return str(exc)
            return "done"

    slow, fast = await asyncio.gather(one(0.05, 1), one(5, 0.01))
    assert slow == "deadline: the work did not finish within the 0.05 s per-question deadline"
    assert fast == "done" and remaining() is None


def test_the_deadline_is_a_setting() -> None:
    from core.settings import Settings

    assert Settings(_env_file=None).answer_deadline == 30  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="answer_deadline"):
        Settings(_env_file=None, answer_deadline=0)  # type: ignore[call-arg]


async def test_document_embedding_runs_off_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    embedder = LocalEmbedder()
    threads: list[int] = []
    real = embedder._embed_documents

    def recording(texts: Any) -> Any:
        threads.append(threading.get_ident())
        return real(texts)

    monkeypatch.setattr(embedder, "_embed_documents", recording)
    [vector] = await embedder.embed_documents(["Install ragbot with make demo."])
    assert len(vector.embedding_vector) == embedder.dimension
    assert threads and threads[0] != threading.get_ident()
