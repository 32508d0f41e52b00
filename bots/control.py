"""A local control socket so the CLI can hand work to a running ``ragbot serve``.

The embedded vector store can be opened by one process only (qdrant-edge locks
its WAL). While ``ragbot serve`` holds it, ``ragbot ask`` and ``ragbot ingest``
send their request over a Unix socket in the data folder and print the
serving process's reply; users never see a lock error. One JSON object per
line each way.

The socket is created 0600 whatever the umask (and sits in the 0700 data folder), and
each connection's peer is checked with ``SO_PEERCRED``: only the user running the
server (or root) may hand it work, so another local user cannot make a root-run
server ingest a file only root can read.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import struct
from pathlib import Path
from typing import Any

from bots.chat.asking import log_sent
from bots.chat.loglimit import LimitedLog
from bots.runtime import Runtime, ingest
from core.errors import ConfigurationError, RagbotError
from core.ingest.options import IngestOptions
from core.private import FILE_MODE

log = logging.getLogger(__name__)
refusals = LimitedLog(log)
_LIMIT = 16 * 1024 * 1024


class HandOffLost(RagbotError):
    """The server took the request and closed the connection without a reply (it stopped or crashed)."""


def peer_uid(sock: Any) -> int | None:
    """The uid of the process at the other end of a Unix socket; None where the OS cannot tell."""
    if not hasattr(socket, "SO_PEERCRED"):
        return None
    fmt = "3i"  # struct ucred: pid, uid, gid
    raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize(fmt))
    _, uid, _ = struct.unpack(fmt, raw)
    return int(uid)


def peer_allowed(uid: int | None) -> bool:
    """Only the server's own user, or root, may hand it work."""
    return uid is None or uid in (os.getuid(), 0)


def _private_socket(path: Path) -> socket.socket:
    """A listening-ready Unix socket at ``path`` whose file is 0600 whatever the umask."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        # Linux gives the socket file the mode of the unbound socket's inode: no window
        # in which it exists with the umask's mode.
        os.fchmod(sock.fileno(), FILE_MODE)
        sock.bind(str(path))
        os.chmod(path, FILE_MODE)  # where fchmod before bind has no effect
    except BaseException:
        sock.close()
        raise
    return sock


async def handle_request(runtime: Runtime, request: dict[str, Any]) -> dict[str, Any]:
    """Run one request against the live runtime and describe the outcome as JSON."""
    op = request.get("op")
    try:
        if op == "ping":
            return {"ok": True}
        if op == "ask":
            response = await runtime.pipeline.answer(
                str(request.get("question", "")), thread_id=request.get("thread_id"),
                user_context=request.get("user_context"), top_k=request.get("top_k"),
                threshold=request.get("threshold"), collection=request.get("collection"),
            )
            await log_sent(runtime.services.activity, response, platform="cli")
            return {"ok": True, "response": response.model_dump(mode="json")}
        if op in ("search", "validate"):
            from bots.cli_spec import execute

            return await execute(runtime, request)
        if op == "ingest":
            summary = await ingest(
                runtime, str(request["source"]), collection=request.get("collection"),
                base_url=request.get("base_url"), replace=bool(request.get("replace")), progress=False,
                options=IngestOptions.from_request(request.get("options")),
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


async def _refused(writer: asyncio.StreamWriter) -> bool:
    """Refuse (and close) a connection from another user; True when refused."""
    uid = peer_uid(writer.get_extra_info("socket"))
    if peer_allowed(uid):
        return False
    refusals.warning(f"refused a control connection from uid {uid}: only uid {os.getuid()} "
                     "(the user running ragbot serve) or root may hand it work")
    reply = {"ok": False, "exit_code": 2,
             "error": "permission denied: only the user running `ragbot serve` may hand it work"}
    writer.write(json.dumps(reply).encode() + b"\n")
    with contextlib.suppress(ConnectionError):
        await writer.drain()
    writer.close()
    return True


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
        if await _refused(writer):
            return
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

    server = await asyncio.start_unix_server(client, sock=_private_socket(path), limit=_LIMIT)
    return ControlServer(server=server, path=path, active=active)


async def call(path: Path, request: dict[str, Any], *, timeout: float | None = None) -> dict[str, Any] | None:
    """Send one request to a running server; None when nothing listens on ``path``.

    Raises:
        HandOffLost: the server accepted the request but closed the connection without
            replying: it stopped or crashed while working on it, and the outcome is unknown.
    """
    if not path.exists():
        return None
    try:
        reader, writer = await asyncio.open_unix_connection(str(path), limit=_LIMIT)
    except (ConnectionError, FileNotFoundError, OSError):
        return None
    try:
        try:
            writer.write(json.dumps(request).encode() + b"\n")
            await writer.drain()
            line = await asyncio.wait_for(reader.readline(), timeout)
        except (ConnectionError, asyncio.IncompleteReadError) as exc:
            raise _lost(path, request) from exc
        if not line:
            raise _lost(path, request)
        return json.loads(line)
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()


def _lost(path: Path, request: dict[str, Any]) -> HandOffLost:
    op = request.get("op")
    return HandOffLost(
        f"the running `ragbot serve` stopped before it finished the {op} handed to it (socket {path}); "
        f"whether the {op} was done is unknown. Check the server and its log "
        f"({path.parent / 'ragbot.log'}), then run the command again"
    )


async def ping(path: Path) -> bool:
    """True when a ``ragbot serve`` answers on ``path``."""
    with contextlib.suppress(TimeoutError, ValueError, HandOffLost):
        reply = await call(path, {"op": "ping"}, timeout=2)
        return bool(reply and reply.get("ok"))
    return False
