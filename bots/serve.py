"""``ragbot serve``: every adapter whose credentials are set, over one core, in one event loop.

The embedded store can be opened by one process only, so Slack, Discord and the
control socket (through which ``ragbot ask``/``ingest`` hand work over) share
one ``Runtime`` here.
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

from bots.runtime import Runtime, build_runtime
from core.errors import ConfigurationError
from core.settings import Settings

log = logging.getLogger(__name__)
EVENT_RETENTION_DAYS = 7


def adapter_coroutines(settings: Settings, runtime: Runtime) -> dict[str, Coroutine[Any, Any, Any]]:
    """The adapters to run, by name, according to which credentials are set."""
    adapters: dict[str, Coroutine[Any, Any, Any]] = {}
    if settings.slack_bot_token is not None:
        from bots.slack.app import run_slack

        adapters["slack"] = run_slack(runtime.services)
    if settings.discord_token is not None:
        from bots.discord.client import run_discord

        adapters["discord"] = run_discord(runtime.services)
    return adapters


async def serve(settings: Settings, *, ready: asyncio.Event | None = None,
                stop: asyncio.Event | None = None) -> int:
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
    server = None
    tasks: dict[str, asyncio.Task[Any]] = {}
    code = 0
    try:
        # Platforms retry for minutes, not weeks: older delivery ids only take space.
        await runtime.prune_events(before=datetime.now(UTC) - timedelta(days=EVENT_RETENTION_DAYS))
        stop = stop or asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, stop.set)
        server = await serve_control(runtime, settings.control_socket)
        tasks = {name: asyncio.create_task(coro, name=name)
                 for name, coro in adapter_coroutines(settings, runtime).items()}
        names = ", ".join(tasks) or "no chat adapter (set SLACK_BOT_TOKEN or DISCORD_TOKEN)"
        print(f"ragbot serving: {names}; CLI hand-off at {settings.control_socket}", file=sys.stderr)
        if ready is not None:
            ready.set()
        waiter = asyncio.create_task(stop.wait())
        done, _ = await asyncio.wait([waiter, *tasks.values()], return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            if task is not waiter and task.exception() is not None:
                exc = task.exception()
                log.error("adapter %s stopped: %s", task.get_name(), exc, exc_info=exc)
                print(f"ragbot: {task.get_name()} adapter stopped: {exc}", file=sys.stderr)
                code = 1
        waiter.cancel()
    finally:
        for task in tasks.values():
            task.cancel()
        await asyncio.gather(*tasks.values(), return_exceptions=True)
        if server is not None:
            await server.aclose()
        await runtime.aclose()
    return code
