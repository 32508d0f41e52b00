"""What is flushed to disk when: an answer's steps ride on its final status write."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
from pathlib import Path

from core.models import AgentLogEntry, EventType, QueryStatus, ResponseState, UserQuery
from storage.sqlite import SqliteStore
from tests.support.paths import ROOT

#: SQLite's values of PRAGMA synchronous.
NORMAL, FULL = 1, 2


async def synchronous(store: SqliteStore) -> int:
    rows = await store._read("read synchronous", "PRAGMA synchronous")
    return int(rows[0][0])


async def test_an_answers_steps_commit_without_a_flush_and_its_final_status_with_one(tmp_path: Path) -> None:
    async with await SqliteStore.open(tmp_path / "ragbot.sqlite3") as store:
        query = UserQuery(query_text="how do I install it?")
        await store.create_query(query)
        assert await synchronous(store) == NORMAL
        received = AgentLogEntry(event_type=EventType.QUERY_RECEIVED, query_id=query.query_id)
        await store.log(received, durable=False)
        await store.set_query_status(query.query_id, QueryStatus.PROCESSING)
        await store.set_response_state(query.query_id, ResponseState.PROCESSING)
        assert await synchronous(store) == NORMAL
        await store.set_query_status(query.query_id, QueryStatus.COMPLETED)
        assert await synchronous(store) == FULL  # this commit flushes the WAL, every step with it


async def test_other_writes_are_flushed_when_they_commit(tmp_path: Path) -> None:
    async with await SqliteStore.open(tmp_path / "ragbot.sqlite3") as store:
        await store.log(AgentLogEntry(event_type=EventType.QUERY_RECEIVED), durable=False)
        assert await store.first_delivery("slack", "Ev1")
        assert await synchronous(store) == FULL
        await store.log(AgentLogEntry(event_type=EventType.ADMIN_EXPORT))  # an entry standing alone
        assert await synchronous(store) == FULL


async def test_a_write_cancelled_while_switching_leaves_the_next_durable_one_flushed(tmp_path: Path) -> None:
    # The answer deadline cancels a search mid-way, possibly while one of its steps waits for
    # its PRAGMA; the thread still runs it, so the next durable write must switch back.
    async with await SqliteStore.open(tmp_path / "ragbot.sqlite3") as store:
        assert await store.first_delivery("slack", "Ev0")
        entry = AgentLogEntry(event_type=EventType.QUERY_RECEIVED)
        step = asyncio.create_task(store.log(entry, durable=False))
        await asyncio.sleep(0)  # the step now waits for its PRAGMA
        step.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await step
        assert await store.first_delivery("slack", "Ev1")
        assert await synchronous(store) == FULL


KILLED = """
import asyncio, os, sys
from pathlib import Path
from core.models import AgentLogEntry, EventType, UserQuery
from storage.sqlite import SqliteStore

async def main():
    store = await SqliteStore.open(Path(sys.argv[1]))
    query = UserQuery(query_text="in flight")
    await store.create_query(query)
    received = AgentLogEntry(event_type=EventType.QUERY_RECEIVED, query_id=query.query_id)
    await store.log(received, durable=False)
    print(query.query_id, flush=True)
    os._exit(9)  # no close, no checkpoint: as if killed

asyncio.run(main())
"""


async def test_steps_written_without_a_flush_survive_a_killed_process(tmp_path: Path) -> None:
    # What NORMAL promises in WAL mode (a power cut cannot be made in a test).
    db = tmp_path / "ragbot.sqlite3"
    async with await SqliteStore.open(db):
        pass
    done = await asyncio.to_thread(subprocess.run, [sys.executable, "-c", KILLED, str(db)], cwd=ROOT,
                                   capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 9, done.stderr
    query_id = done.stdout.split()[0]
    async with await SqliteStore.open(db) as store:
        assert [e.event_type async for e in store.export(query_id=query_id)][:1] == [EventType.QUERY_RECEIVED]
