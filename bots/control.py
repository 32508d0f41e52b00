"""A local control socket so the CLI can hand work to a running ``ragbot serve``.

The embedded vector store can be opened by one process only (qdrant-edge locks
its WAL). While ``ragbot serve`` holds it, ``ragbot ask`` and ``ragbot ingest``
send their request over a Unix socket in the data folder and print the
serving process's reply; users never see a lock error. One JSON object per
line each way.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from pathlib import Path
from typing import Any

from bots.chat.asking import log_sent
from bots.runtime import Runtime, ingest
from core.errors import ConfigurationError, RagbotError

log = logging.getLogger(__name__)
_LIMIT = 16 * 1024 * 1024


async def handle_request(runtime: Runtime, request: dict[str, Any]) -> dict[str, Any]:
    """Run one request against the live runtime and describe the outcome as JSON."""
    op = request.get("op")
    try:
        if op == "ping":
            return {"ok": True}
        if op == "ask":
            response = await runtime.pipeline.answer(
                str(request.get("question", "")), thread_id=request.get("thread_id"),
                user_context=request.get("user_context"),
            )
            await log_sent(runtime.services.activity, response, platform="cli")
            return {"ok": True, "response": response.model_dump(mode="json")}
        if op == "ingest":
            summary = await ingest(
                runtime, str(request["source"]), collection=request.get("collection"),
                base_url=request.get("base_url"), replace=bool(request.get("replace")), progress=False,
            )
            return {"ok": True, "summary": summary.model_dump(mode="json")}
        return {"ok": False, "error": f"unknown operation {op!r}", "exit_code": 2}
    except RagbotError as exc:
        return {"ok": False, "error": str(exc), "exit_code": exc.exit_code}
    except Exception as exc:
        log.exception("control request %s failed", op)
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}", "exit_code": 1}


class ControlServer:
    """The listening socket plus the requests it is serving."""

    def __init__(self, *, server: asyncio.Server, path: Path, active: set[asyncio.Task[Any]]) -> None:
        self.server = server
        self.path = path
        self.active = active

    async def aclose(self, *, grace: float = 60.0) -> None:
        """Stop listening, let requests in flight (an ingest, an answer) finish, remove the socket."""
        self.server.close()
        # Python 3.11's wait_closed() does not wait for handlers: an ingest still writing
        # must finish before the store is closed under it.
        if self.active:
            await asyncio.wait(self.active, timeout=grace)
        await self.server.wait_closed()
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()


async def serve_control(runtime: Runtime, path: Path) -> ControlServer:
    """Listen on ``path`` (a stale socket file from a crash is replaced).

    Raises:
        ConfigurationError: another ``ragbot serve`` already answers on ``path``.
    """
    if path.exists():
        if await ping(path):
            raise ConfigurationError(
                f"another `ragbot serve` is already running for this data folder ({path})"
            )
        path.unlink()
    active: set[asyncio.Task[Any]] = set()

    async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            active.add(task)
            task.add_done_callback(active.discard)
        try:
            while line := await reader.readline():
                try:
                    request = json.loads(line)
                except ValueError:
                    reply: dict[str, Any] = {"ok": False, "error": "request is not JSON", "exit_code": 2}
                else:
                    reply = await handle_request(runtime, request)
                writer.write(json.dumps(reply).encode() + b"\n")
                await writer.drain()
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    server = await asyncio.start_unix_server(client, path=str(path), limit=_LIMIT)
    return ControlServer(server=server, path=path, active=active)


async def call(path: Path, request: dict[str, Any], *, timeout: float | None = None) -> dict[str, Any] | None:
    """Send one request to a running server; None when nothing listens on ``path``."""
    if not path.exists():
        return None
    try:
        reader, writer = await asyncio.open_unix_connection(str(path), limit=_LIMIT)
    except (ConnectionError, FileNotFoundError, OSError):
        return None
    try:
        writer.write(json.dumps(request).encode() + b"\n")
        await writer.drain()
        line = await asyncio.wait_for(reader.readline(), timeout)
        return json.loads(line) if line else None
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()


async def ping(path: Path) -> bool:
    """True when a ``ragbot serve`` answers on ``path``."""
    with contextlib.suppress(TimeoutError, ValueError):
        reply = await call(path, {"op": "ping"}, timeout=2)
        return bool(reply and reply.get("ok"))
    return False
