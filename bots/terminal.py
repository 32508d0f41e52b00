"""The terminal adapter: print answers with their sources, and ``ragbot chat``."""

from __future__ import annotations

import asyncio
import contextlib
import re
import sys
import threading
import uuid
from collections.abc import Awaitable, Callable
from typing import TextIO

from bots.chat.notices import answer_text, notice_for
from bots.chat.sources import listed_sources
from bots.chat.text import unescaped
from core.answer.citations import source_label
from core.errors import InputError
from core.ingest.spans import outside_code_spans
from core.models import AgentResponse

_MD_LINK = re.compile(r"(?<!\\)\[((?:\\.|[^\]\\\n])+)\]\((https?://[^\s)]+)\)")  # "\[x\](url)" is text
_MD_BOLD = re.compile(r"\*\*([^*\n]+)\*\*")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


def markdown_to_plain(text: str) -> str:
    """Quoted Markdown as plain text: ``text (url)`` links, no bold marks or escapes, code indented."""
    out: list[str] = []
    in_code = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            in_code = not in_code
            continue
        if in_code:
            out.append(f"    {line}")
            continue
        out.append(outside_code_spans(_MD_BOLD.sub(r"\1", _MD_LINK.sub(r"\1 (\2)", line)), unescaped))
    return "\n".join(out)


def format_answer(response: AgentResponse) -> str:
    """The answer, the notice of ``bots.chat.notices`` in brackets when there is one, and the sources."""
    lines = [markdown_to_plain(answer_text(response, response.reference_id))]
    notice = notice_for(response).text
    if notice:
        # Apart from the answer: after a quoted command it would read as the command's last line.
        lines.extend(["", f"({notice})"])
    cited, related = listed_sources(response)
    for heading, listed in (("Sources:", cited), ("Related:", related)):
        if listed:
            lines.extend(["", heading])
        for source in listed:
            number = f"[{source.index}]" if heading == "Sources:" else "-"
            lines.append(f"  {number} {source_label(source.title, source.section)}")
            lines.append(f"      {source.url}")
    return "\n".join(lines)


def _resume(thread_id: str) -> str:
    return f"Continue this conversation with: ragbot chat --thread {thread_id}"


async def read_line(stream: TextIO) -> str:
    """One line from ``stream``, read in a daemon thread.

    ``asyncio.to_thread`` would do the same in the default executor, whose threads
    ``asyncio.run`` joins on the way out: Ctrl-C then waited for Enter. A daemon thread
    left blocked in ``readline`` does not hold the exit up.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[str] = loop.create_future()

    def settle(result: str | BaseException) -> None:
        if future.done():  # cancelled meanwhile
            return
        if isinstance(result, BaseException):
            future.set_exception(result)
        else:
            future.set_result(result)

    def reader() -> None:
        try:
            result: str | BaseException = stream.readline()
        except Exception as exc:
            result = exc
        with contextlib.suppress(RuntimeError):  # the loop closed while we were blocked
            loop.call_soon_threadsafe(settle, result)

    threading.Thread(target=reader, name="ragbot-chat-stdin", daemon=True).start()
    return await future


def new_thread_id() -> str:
    """A fresh terminal conversation id."""
    return f"cli:{uuid.uuid4().hex[:12]}"


async def run_chat(
    ask: Callable[[str, str | None, str | None], Awaitable[AgentResponse]],
    *,
    thread_id: str,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
) -> int:
    """Read questions line by line and answer them on one thread until EOF, 'exit' or Ctrl-C.

    Args:
        ask: answers one question (question, thread_id, user_context); it logs delivery itself.
    """
    # Resolved at call time, not import time, so redirected streams are honoured.
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    stdout.write(f"Ask about the docs (empty line, 'exit' or Ctrl-C to quit). Thread {thread_id}\n")
    while True:
        stdout.write("> ")
        stdout.flush()
        try:
            line = await read_line(stdin)
        except asyncio.CancelledError:  # Ctrl-C: asyncio.run cancels us, then raises KeyboardInterrupt
            stdout.write(f"\n{_resume(thread_id)}\n")
            stdout.flush()
            raise
        question = line.strip()
        if not line or question.lower() in {"", "exit", "quit"}:
            stdout.write(f"\n{_resume(thread_id)}\n")
            return 0
        try:
            response = await ask(question, thread_id, None)
        except InputError as exc:
            stdout.write(f"Sorry: {exc}\n")
            continue
        stdout.write(format_answer(response) + "\n\n")
