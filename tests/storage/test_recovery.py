"""Issue 10 item 12: start-up recovery touches only queries whose owner process is gone."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

from core.models import QueryStatus, UserQuery
from core.processes import current_owner, owner_alive, process_started
from storage.sqlite import SqliteStore
from tests.support.paths import ROOT

OWNER = """
import asyncio, sys
from pathlib import Path
from core.models import QueryStatus, UserQuery
from storage.sqlite import SqliteStore

async def main():
    store = await SqliteStore.open(Path(sys.argv[1]))
    working, waiting = UserQuery(query_text="in flight"), UserQuery(query_text="queued")
    await store.create_query(working)
    await store.create_query(waiting)
    await store.set_query_status(working.query_id, QueryStatus.PROCESSING)
    print(working.query_id, waiting.query_id, flush=True)
    await asyncio.to_thread(sys.stdin.readline)  # a long batch, still answering

asyncio.run(main())
"""


async def test_a_running_batch_keeps_its_queries_and_a_killed_one_loses_them(tmp_path: Path) -> None:
    db = tmp_path / "ragbot.sqlite3"
    async with await SqliteStore.open(db):
        pass  # migrated before the other process starts
    owner = await asyncio.create_subprocess_exec(
        sys.executable, "-c", OWNER, str(db), env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    try:
        assert owner.stdout is not None
        working, waiting = (await asyncio.wait_for(owner.stdout.readline(), 60)).decode().split()
        async with await SqliteStore.open(db) as store:  # a second `ragbot ask` starting up
            assert await store.fail_interrupted() == 0
            assert await store.get_query_status(working) is QueryStatus.PROCESSING
            assert await store.get_query_status(waiting) is QueryStatus.PENDING
            await store.set_query_status(working, QueryStatus.COMPLETED)  # the batch goes on fine
        owner.send_signal(signal.SIGKILL)
        await asyncio.wait_for(owner.wait(), 30)
    finally:
        if owner.returncode is None:
            owner.kill()
            await owner.wait()
    async with await SqliteStore.open(db) as store:  # the next start after the crash
        assert await store.fail_interrupted() == 1
        assert await store.get_query_status(waiting) is QueryStatus.FAILED  # PENDING is recovered too
        assert await store.get_query_status(working) is QueryStatus.COMPLETED


async def test_rows_from_before_the_owner_was_recorded_are_recovered(tmp_path: Path) -> None:
    async with await SqliteStore.open(tmp_path / "ragbot.sqlite3") as store:
        old = UserQuery(query_text="asked by an older ragbot")
        await store.create_query(old)
        conn = store._connection()
        await conn.execute("UPDATE queries SET owner_pid = NULL, owner_started = NULL")
        await conn.commit()
        assert await store.fail_interrupted() == 1


def test_owner_identity_tells_a_recycled_pid_from_the_owner() -> None:
    pid, started = current_owner()
    assert pid == os.getpid() and started == process_started(pid)
    assert owner_alive(pid, started)
    assert not owner_alive(None, None)
    if started is not None:  # /proc is there: a different start time is another process
        assert not owner_alive(pid, "1")
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True)
    assert not owner_alive(int(done.stdout), None)
