"""Which process owns a query: its pid and start time, and whether it still runs.

Used by start-up recovery (storage/recovery.py, and InMemoryStorage for parity) to fail
only the queries whose owner process is gone.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

#: (owner pid, owner start time) -> whether that process still runs.
OwnerAlive = Callable[[int | None, str | None], bool]


def process_started(pid: int) -> str | None:
    """When process ``pid`` started (clock ticks since boot, from /proc), or None where unknown."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after its closing one.
    fields = stat[stat.rfind(")") + 2:].split()
    return fields[19] if len(fields) > 19 else None  # field 22, starttime


def current_owner() -> tuple[int, str | None]:
    """This process, as recorded on the queries it creates."""
    pid = os.getpid()
    return pid, process_started(pid)


def owner_alive(pid: int | None, started: str | None) -> bool:
    """Whether the process that created a query still runs (False for rows without an owner)."""
    if pid is None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # it runs, as another user
    if started is not None:
        now = process_started(pid)
        if now is not None and now != started:
            return False  # the pid was recycled by an unrelated process
    return True
