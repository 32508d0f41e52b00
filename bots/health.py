"""What ``ragbot serve`` tells its operator: each adapter's state, on the console and at ``/healthz``.

Adapters report through a ``Report`` callable (``report("connected", "Socket Mode")``); the
board prints each change on the console and answers ``GET /healthz`` with every adapter's
state and the knowledge base's (HTTP 200 when everything is up, 503 otherwise).
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from aiohttp import web

from core.models import utc_now

#: ``report(state, detail)``: how an adapter says what it is doing.
Report = Callable[[str, str], None]
STATES = ("starting", "connecting", "connected", "reconnecting", "failed", "stopped")
HEALTH_PATH = "/healthz"


@dataclass(frozen=True, slots=True)
class AdapterState:
    """One adapter's last reported state."""

    state: str
    detail: str
    since: datetime


def _to_console(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class HealthBoard:
    """Adapter states plus a probe of the knowledge base, for the console and ``/healthz``.

    Args:
        store_probe: returns the knowledge base's state (``{"ok": bool, ...}``).
        console: where state changes are printed (standard error by default).
    """

    def __init__(self, *, store_probe: Callable[[], Awaitable[dict[str, Any]]] | None = None,
                 console: Callable[[str], None] = _to_console) -> None:
        self.adapters: dict[str, AdapterState] = {}
        self.store_probe = store_probe
        self.console = console
        self.started = utc_now()
        #: Where ``/healthz`` is served, once ``ragbot serve`` listens (None before, or in Slack HTTP mode).
        self.url: str | None = None

    def report(self, name: str, state: str, detail: str = "") -> None:
        """Record ``name``'s state; a change is printed on the console.

        Raises:
            ValueError: ``state`` is not one of ``STATES``.
        """
        if state not in STATES:
            raise ValueError(f"unknown adapter state {state!r}; use one of {', '.join(STATES)}")
        old = self.adapters.get(name)
        if old is not None and (old.state, old.detail) == (state, detail):
            return
        self.adapters[name] = AdapterState(state=state, detail=detail, since=utc_now())
        word = "FAILED" if state == "failed" else state
        self.console(f"ragbot: {name} {word}" + (f": {detail}" if detail else ""))

    def reporter(self, name: str) -> Report:
        """A ``Report`` bound to one adapter."""
        def report(state: str, detail: str = "") -> None:
            self.report(name, state, detail)

        return report

    async def snapshot(self) -> dict[str, Any]:
        """Every adapter's state and the store's; ``ok`` when all adapters are connected and the store is."""
        store: dict[str, Any] = {"ok": True}
        if self.store_probe is not None:
            try:
                store = await self.store_probe()
            except Exception as exc:  # the probe's failure is the answer, not a 500
                store = {"ok": False, "detail": f"{type(exc).__name__}: {exc}"}
        adapters = {name: {"state": s.state, "detail": s.detail, "since": s.since.isoformat()}
                    for name, s in self.adapters.items()}
        ok = bool(store.get("ok")) and all(s.state == "connected" for s in self.adapters.values())
        return {"ok": ok, "adapters": adapters, "store": store, "started_at": self.started.isoformat()}

    async def respond(self, request: web.Request) -> web.Response:
        """The ``GET /healthz`` handler."""
        body = await self.snapshot()
        return web.json_response(body, status=200 if body["ok"] else 503)


def health_app(board: HealthBoard) -> web.Application:
    """An aiohttp application serving only ``GET /healthz`` (modes without Slack over HTTP)."""
    app = web.Application()
    app.router.add_get(HEALTH_PATH, board.respond)
    return app
