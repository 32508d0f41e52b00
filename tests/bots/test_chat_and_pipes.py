"""Issue 10 item 19: `logs export | head` and `ragbot chat` (thread id shown, Ctrl-C at once)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bots.terminal import run_chat
from core.models import AgentLogEntry, AgentResponse, EventType, ResponseStatus
from storage.sqlite import SqliteStore
from tests.support.paths import ROOT


def answer_for(question: str, thread_id: str | None = None) -> AgentResponse:
    return AgentResponse(query_id=f"q-{question}", response_text=f"answer to {question}", query_text=question,
                         thread_id=thread_id, status=ResponseStatus.NO_RELEVANT_DOCUMENTS)


# --------------------------------------------------------------------------- logs export | head


async def _fill_log(path: Path, rows: int) -> None:
    db = await SqliteStore.open(path)
    try:
        for i in range(rows):
            await db.log(AgentLogEntry(event_type=EventType.QUERY_RECEIVED, thread_id=f"t{i}",
                                       query_text="x" * 200))
    finally:
        await db.close()


def test_logs_export_into_head_ends_without_a_traceback(tmp_path: Path) -> None:
    data = tmp_path / "data"
    asyncio.run(_fill_log(data / "ragbot.sqlite3", 2000))  # ~1 MB of JSONL: more than a pipe holds
    env = {**os.environ, "RAGBOT_DATA_DIR": str(data), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(f"{sys.executable} -m bots.cli logs export | head -1", shell=True, env=env,
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert len(done.stdout.splitlines()) == 1 and json.loads(done.stdout)["event_type"] == "query_received"
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr


# --------------------------------------------------------------------------- chat


async def test_chat_shows_its_thread_and_stops_at_once_when_cancelled(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()  # a terminal where nobody types
    out = tmp_path / "out.txt"

    async def ask(question: str, thread_id: str | None, user_context: str | None) -> AgentResponse:
        return answer_for(question, thread_id)

    with os.fdopen(read_end) as stdin, out.open("w") as stdout:
        task = asyncio.create_task(run_chat(ask, thread_id="cli:abc123", stdin=stdin, stdout=stdout))
        await asyncio.sleep(0.2)
        started = time.perf_counter()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert time.perf_counter() - started < 1
        os.close(write_end)  # EOF frees the reader thread, which holds stdin's lock until then
    text = out.read_text()
    assert "Thread cli:abc123" in text and "ragbot chat --thread cli:abc123" in text


CHAT_SCRIPT = """
import asyncio, sys
from bots.terminal import run_chat
from core.models import AgentResponse, ResponseStatus

async def ask(question, thread_id, user_context):
    return AgentResponse(query_id="q", response_text="ok", query_text=question, thread_id=thread_id,
                         status="no_relevant_documents")

try:
    asyncio.run(run_chat(ask, thread_id="cli:sigint"))
except KeyboardInterrupt:
    sys.exit(130)
"""


def test_ctrl_c_ends_chat_without_waiting_for_enter() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    chat = subprocess.Popen([sys.executable, "-c", CHAT_SCRIPT], env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert chat.stdout is not None
        banner = chat.stdout.readline()  # the prompt is printed: the chat waits for a line
        assert b"cli:sigint" in banner
        time.sleep(0.2)
        started = time.perf_counter()
        chat.send_signal(signal.SIGINT)
        code = chat.wait(timeout=10)
        assert time.perf_counter() - started < 5
    finally:
        if chat.poll() is None:
            chat.kill()
            chat.wait()
        assert chat.stdin is not None
        chat.stdin.close()
    assert code == 130
