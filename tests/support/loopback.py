"""Serve an aiohttp app on a free 127.0.0.1 port: the base of every fake platform API."""

from __future__ import annotations

from typing import Any

from aiohttp import web


async def start_app(app: web.Application, **runner_options: Any) -> tuple[web.AppRunner, int]:
    """Start ``app`` on 127.0.0.1 with an OS-chosen port; return the runner and the port.

    Stop it with ``await runner.cleanup()``.
    """
    runner = web.AppRunner(app, **{"access_log": None, **runner_options})
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    return runner, int(runner.addresses[0][1])
