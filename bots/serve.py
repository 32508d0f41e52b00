"""``ragbot serve``: every adapter whose credentials are set, over one core, in one event loop.

The embedded store can be opened by one process only, so Slack, Discord and the
control socket (through which ``ragbot ask``/``ingest`` hand work over) share
one ``Runtime`` here. Each adapter reports its state to a ``HealthBoard``: the console
says which adapters connected and which failed and why, and ``GET /healthz`` on ``PORT``
answers in every mode (Slack over HTTP serves it beside ``/slack/events``). With
``RAGBOT_LOG_RETENTION_DAYS`` set, old history is deleted once a day in small batches.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Coroutine
from datetime import UTC, datetime, timedelta
from typing import Any

from aiohttp import web

from bots.health import HEALTH_PATH, HealthBoard, health_app
from bots.runtime import Runtime, build_runtime
from core.errors import ConfigurationError, RagbotError
from core.settings import Settings

log = logging.getLogger(__name__)
EVENT_RETENTION_DAYS = 7
#: Seconds between two retention runs.
RETENTION_EVERY = 24 * 3600.0


def _slack_over_http(settings: Settings) -> bool:
    return settings.slack_bot_token is not None and settings.slack_app_token is None


def adapter_coroutines(
    settings: Settings, runtime: Runtime, board: HealthBoard | None = None
) -> dict[str, Coroutine[Any, Any, Any]]:
    """The adapters to run, by name, according to which credentials are set."""
    adapters: dict[str, Coroutine[Any, Any, Any]] = {}
    if settings.slack_bot_token is not None:
        from bots.slack.app import run_slack

        adapters["slack"] = run_slack(runtime.services, report=board.reporter("slack") if board else None,
                                      health=board.respond if board else None)
    if settings.discord_token is not None:
        from bots.discord.client import run_discord

        adapters["discord"] = run_discord(runtime.services,
                                          report=board.reporter("discord") if board else None)
    return adapters


def store_probe(runtime: Runtime) -> Any:
    """The health board's check of the knowledge base: the collection exists and holds chunks."""
    collection = runtime.settings.collection

    async def probe() -> dict[str, Any]:
        health = await runtime.store.health()
        if not health.ok or not health.writable:
            # A deleted folder or a full disk: answers or ingests would fail, so say it here.
            return {"collection": collection, **health.as_dict(), "ok": False}
        info = await runtime.store.collection_info(collection)
        if info is None:
            return {"ok": False, "collection": collection, "detail": "not ingested yet: run ragbot ingest"}
        return {"ok": info.points > 0, "collection": collection, "points": info.points,
                "model": info.model_id, "dimension": info.dimension}

    return probe


async def start_health(board: HealthBoard, settings: Settings) -> web.AppRunner | None:
    """Serve ``/healthz`` on ``PORT`` (unless Slack over HTTP already does); None if it cannot listen."""
    if _slack_over_http(settings):
        return None
    runner = web.AppRunner(health_app(board), access_log=None)
    await runner.setup()
    try:
        await web.TCPSite(runner, settings.slack_host, settings.port).start()
    except OSError as exc:
        await runner.cleanup()
        log.error("cannot serve %s on port %d: %s", HEALTH_PATH, settings.port, exc)
        print(f"ragbot: no {HEALTH_PATH}: cannot listen on {settings.slack_host}:{settings.port} "
              f"({exc.strerror or exc}); set PORT to a free port", file=sys.stderr)
        return None
    board.url = f"http://{settings.slack_host}:{runner.addresses[0][1]}{HEALTH_PATH}"
    return runner


async def retention(settings: Settings, *, every: float = RETENTION_EVERY) -> None:
    """Delete history older than ``RAGBOT_LOG_RETENTION_DAYS``, now and then every ``every`` seconds."""
    from storage.history import HistoryTables

    days = settings.log_retention_days
    while True:
        try:
            async with await HistoryTables.open(settings.sqlite_path) as db:
                deleted = await db.purge(datetime.now(UTC) - timedelta(days=days))
            if any(deleted.values()):
                log.warning("retention (%d days) deleted %s", days, deleted)
        except RagbotError as exc:  # a locked or full database: try again tomorrow, keep answering
            log.error("retention failed: %s", exc)
        await asyncio.sleep(every)


async def serve(settings: Settings, *, ready: asyncio.Event | None = None,
                stop: asyncio.Event | None = None, board: HealthBoard | None = None) -> int:
    """Run until SIGINT/SIGTERM (or ``stop`` is set); return the exit code.

    Raises:
        ConfigurationError: another ``ragbot serve`` already runs on this data folder.
    """
    from bots.control import ping, serve_control

    if await ping(settings.control_socket):
        raise ConfigurationError(
            f"another `ragbot serve` is already running for {settings.data_dir}; stop it first"
        )
    runtime = await build_runtime(settings)
    board = board or HealthBoard()
    board.store_probe = store_probe(runtime)
    server = health = None
    tasks: dict[str, asyncio.Task[Any]] = {}
    try:
        # Platforms retry for minutes, not weeks: older delivery ids only take space.
        await runtime.prune_events(before=datetime.now(UTC) - timedelta(days=EVENT_RETENTION_DAYS))
        stop = stop or asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, stop.set)
        server = await serve_control(runtime, settings.control_socket)
        health = await start_health(board, settings)
        tasks = {name: asyncio.create_task(coro, name=name)
                 for name, coro in adapter_coroutines(settings, runtime, board).items()}
        if settings.log_retention_days:
            tasks["retention"] = asyncio.create_task(retention(settings), name="retention")
        _announce(settings, [n for n in tasks if n != "retention"], board.url)
        if ready is not None:
            ready.set()
        return await _run(board, stop, tasks)
    finally:
        for task in tasks.values():
            task.cancel()
        await asyncio.gather(*tasks.values(), return_exceptions=True)
        if health is not None:
            await health.cleanup()
        if server is not None:
            await server.aclose()
        await runtime.aclose()


def _announce(settings: Settings, adapters: list[str], url: str | None) -> None:
    names = ", ".join(adapters) or "no chat adapter (set SLACK_BOT_TOKEN or DISCORD_TOKEN)"
    if url is None and _slack_over_http(settings):
        url = f"http://{settings.slack_host}:{settings.port}{HEALTH_PATH}"
    where = f"; health at {url}" if url else ""
    print(f"ragbot serving: {names}; CLI hand-off at {settings.control_socket}{where}", file=sys.stderr)


async def _run(board: HealthBoard, stop: asyncio.Event, tasks: dict[str, asyncio.Task[Any]]) -> int:
    """Wait for ``stop`` or the first task to end; an adapter that ends is reported failed (exit 1)."""
    waiter = asyncio.create_task(stop.wait())
    try:
        done, _ = await asyncio.wait([waiter, *tasks.values()], return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
    code = 0
    for task in done:
        if task is waiter:
            continue
        exc = task.exception()
        reason = f"{exc}" if exc is not None else "stopped without an error"
        log.error("adapter %s stopped: %s", task.get_name(), reason, exc_info=exc)
        board.report(task.get_name(), "failed", reason)
        print(f"ragbot: {task.get_name()} adapter stopped: {reason}", file=sys.stderr)
        code = 1
    return code
