"""The terminal adapter: print answers with their sources, and ``ragbot chat``."""

from __future__ import annotations

import asyncio
import re
import sys
import uuid
from collections.abc import Awaitable, Callable
from typing import TextIO

from bots.chat.notices import answer_text, notice_for
from core.answer.citations import source_label
from core.errors import InputError
from core.models import AgentResponse

_MD_LINK = re.compile(r"\[([^\]\n]+)\]\((https?://[^\s)]+)\)")
_MD_BOLD = re.compile(r"\*\*([^*\n]+)\*\*")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


def markdown_to_plain(text: str) -> str:
    """Quoted Markdown as plain terminal text: links as ``text (url)``, no bold marks, code indented."""
    out: list[str] = []
    in_code = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            in_code = not in_code
            continue
        if in_code:
            out.append(f"    {line}")
            continue
        out.append(_MD_BOLD.sub(r"\1", _MD_LINK.sub(r"\1 (\2)", line)))
    return "\n".join(out)


def format_answer(response: AgentResponse) -> str:
    """The answer, the notice of ``bots.chat.notices`` in brackets when there is one, and the sources."""
    lines = [markdown_to_plain(answer_text(response, response.reference_id))]
    notice = notice_for(response).text
    if notice:
        lines.append(f"({notice})")
    if response.sources:
        lines.append("")
        lines.append("Sources:")
        for source in response.sources:
            lines.append(f"  [{source.index}] {source_label(source.title, source.section)}")
            lines.append(f"      {source.url}")
    return "\n".join(lines)


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
    """Read questions line by line and answer them on one thread until EOF or 'exit'.

    Args:
        ask: answers one question (question, thread_id, user_context); it logs delivery itself.
    """
    # Resolved at call time, not import time, so redirected streams are honoured.
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    stdout.write("Ask about the docs (empty line or 'exit' to quit).\n")
    while True:
        stdout.write("> ")
        stdout.flush()
        line = await asyncio.to_thread(stdin.readline)
        question = line.strip()
        if not line or question.lower() in {"", "exit", "quit"}:
            stdout.write("\n")
            return 0
        try:
            response = await ask(question, thread_id, None)
        except InputError as exc:
            stdout.write(f"Sorry: {exc}\n")
            continue
        stdout.write(format_answer(response) + "\n\n")
