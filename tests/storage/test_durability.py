"""What is flushed to disk when: an answer's steps ride on its final status write."""

from __future__ import annotations

import asyncio
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
        await store.log(AgentLogEntry(event_type=EventType.QUERY_RECEIVED, query_id=query.query_id))
        await store.set_query_status(query.query_id, QueryStatus.PROCESSING)
        await store.set_response_state(query.query_id, ResponseState.PROCESSING)
        assert await synchronous(store) == NORMAL
        await store.set_query_status(query.query_id, QueryStatus.COMPLETED)
        assert await synchronous(store) == FULL  # this commit flushes the WAL, every step with it


async def test_other_writes_are_flushed_when_they_commit(tmp_path: Path) -> None:
    async with await SqliteStore.open(tmp_path / "ragbot.sqlite3") as store:
        await store.log(AgentLogEntry(event_type=EventType.QUERY_RECEIVED))
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
    await store.log(AgentLogEntry(event_type=EventType.QUERY_RECEIVED, query_id=query.query_id))
    print(query.query_id, flush=True)
    os._exit(9)  # no close, no checkpoint: as if killed

asyncio.run(main())
"""


async def test_a_killed_process_loses_no_step_written_without_a_flush(tmp_path: Path) -> None:
    db = tmp_path / "ragbot.sqlite3"
    async with await SqliteStore.open(db):
        pass
    done = await asyncio.to_thread(subprocess.run, [sys.executable, "-c", KILLED, str(db)], cwd=ROOT,
                                   capture_output=True, text=True, check=False, timeout=60)
    query_id = done.stdout.split()[0]
    async with await SqliteStore.open(db) as store:
        assert [e.event_type async for e in store.export(query_id=query_id)][:1] == [EventType.QUERY_RECEIVED]
