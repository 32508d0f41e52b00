"""One storage contract, run against ``InMemoryStorage`` and ``SqliteStore``.

Modelled on haystack's ``testing/document_store.py``: each ``*Contract`` class holds the
behaviour tests of one storage Protocol (core/protocols.py) and uses a ``storage``
fixture; the ``Test*`` classes at the bottom provide that fixture for one
implementation. A behaviour either implementation gets wrong fails here, by name.

The SQLite store is opened with ``page_size=2`` so that every export test also walks
the keyset pages (and their tie-breaks) rather than one page holding everything.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Protocol

import pytest

from core.fakes import InMemoryStorage
from core.models import (
    AgentLogEntry,
    AgentResponse,
    ConversationTurn,
    EventType,
    Feedback,
    QueryStatus,
    ResponseState,
    ResponseStatus,
    RetrievedChunk,
    Source,
    TurnRole,
    UserQuery,
)
from core.protocols import (
    INTERRUPTED_ERROR,
    ActivityLog,
    ConversationStore,
    EventLedger,
    FeedbackStore,
    QueryStore,
)
from storage.sqlite import SqliteStore

T0 = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
NAIVE = datetime(2025, 1, 1)  # no time zone, on purpose


class Storage(ConversationStore, QueryStore, ActivityLog, FeedbackStore, EventLedger, Protocol):
    """What both implementations offer beyond the Protocols, and the contract relies on."""

    async def get_query_error(self, query_id: str) -> str | None: ...

    async def prune_events(self, *, before: datetime) -> int: ...


def _entry(minutes: float, event_type: EventType = EventType.QUERY_RECEIVED, **kw: Any) -> AgentLogEntry:
    return AgentLogEntry(timestamp=T0 + timedelta(minutes=minutes), event_type=event_type, **kw)


def _vote(response_id: str, user_id: str, vote: int, *, seconds: float = 0) -> Feedback:
    return Feedback(response_id=response_id, user_id=user_id, vote=vote,  # type: ignore[arg-type]
                    platform="slack", timestamp=T0 + timedelta(seconds=seconds))


def _response(query: UserQuery, text: str = "Install with pip [1].") -> AgentResponse:
    chunk = RetrievedChunk(chunk_id="c1", content="pip install ragbot", score=0.8, chunk_index=0,
                           url="https://ragbot.dev/install", title="Install", source_document="install.md")
    return AgentResponse(
        query_id=query.query_id, query_text=query.query_text, thread_id=query.thread_id,
        response_text=text, status=ResponseStatus.ANSWERED, retrieved_chunks=[chunk], model_used="scripted",
        sources=[Source(index=1, chunk_id="c1", url=chunk.url, title="Install", chunk_index=0, score=0.8)],
    )


async def _log_ids(storage: Storage, **filters: Any) -> list[str]:
    return [e.entry_id async for e in storage.export(**filters)]


# --------------------------------------------------------------------------- contracts


class ConversationContract:
    """ConversationStore: the turns of each thread."""

    async def test_recent_turns_are_the_last_n_oldest_first(self, storage: Storage) -> None:
        for i in range(6):
            role = TurnRole.USER if i % 2 == 0 else TurnRole.ASSISTANT
            await storage.add_turn(ConversationTurn(thread_id="a", role=role, content=f"a{i}",
                                                    query_id=f"q{i}", response_id=f"r{i}"))
            await storage.add_turn(ConversationTurn(thread_id="b", role=role, content=f"b{i}"))
        turns = await storage.recent_turns("a", limit=3)
        assert [t.content for t in turns] == ["a3", "a4", "a5"]
        assert [t.role for t in turns] == [TurnRole.ASSISTANT, TurnRole.USER, TurnRole.ASSISTANT]
        assert (turns[0].query_id, turns[0].response_id) == ("q3", "r3")
        assert [t.content for t in await storage.recent_turns("a", limit=100)] == [f"a{i}" for i in range(6)]
        assert await storage.recent_turns("unknown", limit=5) == []

    async def test_turns_keep_their_fields(self, storage: Storage) -> None:
        turn = ConversationTurn(thread_id="t", role=TurnRole.USER, content="hé, [1] `code`",
                                timestamp=T0.astimezone(timezone(timedelta(hours=2))))
        await storage.add_turn(turn)
        assert await storage.recent_turns("t", limit=1) == [turn]

    async def test_limit_zero_is_empty_and_negative_is_refused(self, storage: Storage) -> None:
        await storage.add_turn(ConversationTurn(thread_id="a", role=TurnRole.USER, content="hi"))
        assert await storage.recent_turns("a", limit=0) == []
        with pytest.raises(ValueError, match="limit -1"):
            await storage.recent_turns("a", limit=-1)


class QueryLifecycleContract:
    """QueryStore: PENDING -> PROCESSING -> COMPLETED | FAILED, errors and responses."""

    async def test_a_new_query_is_pending_whatever_it_says(self, storage: Storage) -> None:
        query = UserQuery(query_text="What is ragbot?", status=QueryStatus.COMPLETED)
        await storage.create_query(query)
        assert await storage.get_query_status(query.query_id) is QueryStatus.PENDING
        assert await storage.get_query_error(query.query_id) is None
        with pytest.raises(ValueError, match="already exists"):
            await storage.create_query(query)

    async def test_allowed_transitions(self, storage: Storage) -> None:
        done, failed_early, failed_late = (UserQuery(query_text=f"q{i}") for i in range(3))
        for query in (done, failed_early, failed_late):
            await storage.create_query(query)
        await storage.set_query_status(done.query_id, QueryStatus.PROCESSING)
        await storage.set_query_status(done.query_id, QueryStatus.COMPLETED)
        await storage.set_query_status(failed_early.query_id, QueryStatus.FAILED, error="empty question")
        await storage.set_query_status(failed_late.query_id, QueryStatus.PROCESSING)
        await storage.set_query_status(failed_late.query_id, QueryStatus.FAILED, error="search failed")
        assert await storage.get_query_status(done.query_id) is QueryStatus.COMPLETED
        assert await storage.get_query_status(failed_early.query_id) is QueryStatus.FAILED
        assert await storage.get_query_status(failed_late.query_id) is QueryStatus.FAILED

    @pytest.mark.parametrize(
        ("path", "illegal"),
        [
            ([], QueryStatus.COMPLETED),
            ([QueryStatus.PROCESSING], QueryStatus.PENDING),
            ([QueryStatus.PROCESSING, QueryStatus.COMPLETED], QueryStatus.FAILED),
            ([QueryStatus.FAILED], QueryStatus.PROCESSING),
        ],
        ids=["pending-to-completed", "processing-to-pending", "completed-to-failed", "failed-to-processing"],
    )
    async def test_illegal_transitions_are_refused_and_change_nothing(
        self, storage: Storage, path: list[QueryStatus], illegal: QueryStatus
    ) -> None:
        query = UserQuery(query_text="q")
        await storage.create_query(query)
        for status in path:
            await storage.set_query_status(query.query_id, status, error="first")
        before = await storage.get_query_status(query.query_id)
        with pytest.raises(ValueError, match=f"from {before.value if before else ''} to {illegal.value}"):
            await storage.set_query_status(query.query_id, illegal, error="late")
        assert await storage.get_query_status(query.query_id) is before
        assert await storage.get_query_error(query.query_id) == ("first" if path else None)

    async def test_unknown_query_ids(self, storage: Storage) -> None:
        with pytest.raises(ValueError, match="unknown query id 'nope'"):
            await storage.set_query_status("nope", QueryStatus.PROCESSING)
        assert await storage.get_query_status("nope") is None
        assert await storage.get_query_error("nope") is None

    async def test_the_stored_error_is_kept_when_none_is_given(self, storage: Storage) -> None:
        query = UserQuery(query_text="q")
        await storage.create_query(query)
        await storage.set_query_status(query.query_id, QueryStatus.PROCESSING, error="retrying Gemini")
        assert await storage.get_query_error(query.query_id) == "retrying Gemini"
        await storage.set_query_status(query.query_id, QueryStatus.FAILED)
        assert await storage.get_query_error(query.query_id) == "retrying Gemini"

    async def test_a_new_error_replaces_the_old_one(self, storage: Storage) -> None:
        query = UserQuery(query_text="q")
        await storage.create_query(query)
        await storage.set_query_status(query.query_id, QueryStatus.PROCESSING, error="slow")
        await storage.set_query_status(query.query_id, QueryStatus.FAILED, error="retrieval failed")
        assert await storage.get_query_error(query.query_id) == "retrieval failed"

    async def test_responses_belong_to_a_stored_query(self, storage: Storage) -> None:
        query = UserQuery(query_text="How do I install?", thread_id="t1")
        await storage.create_query(query)
        response = _response(query)
        await storage.save_response(response)
        await storage.save_response(response.model_copy(update={"response_text": "Use pip [1]."}))
        with pytest.raises(ValueError, match="call create_query first"):
            await storage.save_response(_response(UserQuery(query_text="never stored")))


class CrashRecoveryContract:
    """QueryStore.fail_interrupted: what a restart does with queries cut off mid-answer."""

    async def test_open_queries_of_a_gone_owner_fail_with_one_text_and_one_error_entry(
        self, storage: Storage
    ) -> None:
        processing = [UserQuery(query_text=f"stuck {i}", thread_id=f"t{i}") for i in range(3)]
        pending, done = UserQuery(query_text="pending", thread_id="tp"), UserQuery(query_text="done")
        for query in [*processing, pending, done]:
            await storage.create_query(query)
        for query in [*processing, done]:
            await storage.set_query_status(query.query_id, QueryStatus.PROCESSING)
        await storage.set_query_status(done.query_id, QueryStatus.COMPLETED)

        # Their owner (this process) still runs: another command starting must not touch them.
        assert await storage.fail_interrupted() == 0
        assert await storage.get_query_status(pending.query_id) is QueryStatus.PENDING

        def gone(pid: int | None, started: str | None) -> bool:
            return False

        stuck = [*processing, pending]
        assert await storage.fail_interrupted(is_alive=gone) == 4
        assert await storage.fail_interrupted(is_alive=gone) == 0
        for query in stuck:
            assert await storage.get_query_status(query.query_id) is QueryStatus.FAILED
            assert await storage.get_query_error(query.query_id) == INTERRUPTED_ERROR
        assert await storage.get_query_status(done.query_id) is QueryStatus.COMPLETED
        errors = [e async for e in storage.export(event_type=EventType.ERROR)]
        assert sorted((e.query_id, e.thread_id, e.query_text) for e in errors) == [
            (q.query_id, q.thread_id, q.query_text) for q in sorted(stuck, key=lambda q: q.query_id)
        ]
        assert {e.error_details for e in errors} == {INTERRUPTED_ERROR}

    async def test_nothing_to_recover(self, storage: Storage) -> None:
        assert await storage.fail_interrupted() == 0
        assert await _log_ids(storage) == []


class ActivityLogContract:
    """ActivityLog: append entries, export them oldest first with filters."""

    async def test_export_is_oldest_first_with_ties_broken_by_entry_id(self, storage: Storage) -> None:
        entries = [_entry(i // 3) for i in range(9)]  # three entries share each timestamp
        for entry in reversed(entries):  # written out of order
            await storage.log(entry)
        expected = sorted(entries, key=lambda e: (e.timestamp, e.entry_id))
        assert [e async for e in storage.export()] == expected

    async def test_export_filters(self, storage: Storage) -> None:
        entries = [
            _entry(0, thread_id="t1"),
            _entry(1, EventType.RETRIEVAL_PERFORMED, thread_id="t1"),
            _entry(2, EventType.ERROR, thread_id="t2", error_details="boom"),
            _entry(3, thread_id="t2"),
            _entry(4, EventType.ERROR, thread_id="t1", execution_time=0.25),
        ]
        for entry in entries:
            await storage.log(entry)
        ids = [e.entry_id for e in entries]
        assert await _log_ids(storage, since=T0 + timedelta(minutes=1)) == ids[1:]  # inclusive
        assert await _log_ids(storage, until=T0 + timedelta(minutes=3)) == ids[:3]  # exclusive
        assert await _log_ids(storage, since=T0 + timedelta(minutes=1), until=T0 + timedelta(minutes=4)) \
            == ids[1:4]
        assert await _log_ids(storage, event_type=EventType.ERROR) == [ids[2], ids[4]]
        assert await _log_ids(storage, event_type="error") == [ids[2], ids[4]]
        assert await _log_ids(storage, thread_id="t2") == ids[2:4]
        assert await _log_ids(storage, event_type=EventType.ERROR, thread_id="t1") == [ids[4]]
        assert await _log_ids(storage, since=T0 + timedelta(hours=1)) == []
        new_york = timezone(timedelta(hours=-5))  # the same instant in another time zone
        assert await _log_ids(storage, since=(T0 + timedelta(minutes=3)).astimezone(new_york)) == ids[3:]

    async def test_an_empty_thread_id_filters_too(self, storage: Storage) -> None:
        await storage.log(_entry(0, thread_id=""))
        await storage.log(_entry(1, thread_id="t1"))
        assert len(await _log_ids(storage, thread_id="")) == 1

    @pytest.mark.parametrize("bound", ["since", "until"])
    async def test_naive_bounds_are_refused(self, storage: Storage, bound: str) -> None:
        await storage.log(_entry(0))
        with pytest.raises(ValueError, match=f"{bound} .* no time zone"):
            await _log_ids(storage, **{bound: NAIVE})

    async def test_a_duplicate_entry_id_is_refused(self, storage: Storage) -> None:
        entry = _entry(0)
        await storage.log(entry)
        with pytest.raises(ValueError, match=f"log entry '{entry.entry_id}' already exists"):
            await storage.log(entry.model_copy(update={"error_details": "again"}))
        assert [e async for e in storage.export()] == [entry]

    async def test_the_consumer_may_write_while_exporting(self, storage: Storage) -> None:
        entries = [_entry(i) for i in range(5)]
        for entry in entries:
            await storage.log(entry)
        seen = []
        async for entry in storage.export(until=T0 + timedelta(hours=1)):
            await storage.log(_entry(120, EventType.ADMIN_EXPORT))  # after `until`: never exported here
            seen.append(entry)
        assert seen == entries
        assert len(await _log_ids(storage, event_type=EventType.ADMIN_EXPORT)) == 5

    async def test_concurrent_writers_lose_nothing(self, storage: Storage) -> None:
        entries = [AgentLogEntry(event_type=EventType.QUERY_RECEIVED, thread_id=f"t{i % 7}")
                   for i in range(60)]
        turns = [ConversationTurn(thread_id="busy", role=TurnRole.USER, content=f"m{i}") for i in range(20)]
        await asyncio.gather(*(storage.log(e) for e in entries), *(storage.add_turn(t) for t in turns))
        assert sorted(await _log_ids(storage)) == sorted(e.entry_id for e in entries)
        assert len(await storage.recent_turns("busy", limit=100)) == 20


class FeedbackContract:
    """FeedbackStore: one vote per user and response, exported by latest change."""

    async def test_a_second_vote_replaces_the_first(self, storage: Storage) -> None:
        await storage.record_feedback(_vote("r1", "u1", 1, seconds=0))
        await storage.record_feedback(_vote("r1", "u2", 1, seconds=60))
        changed = _vote("r1", "u1", -1, seconds=300)
        await storage.record_feedback(changed)
        votes = [f async for f in storage.export_feedback()]
        assert [(f.user_id, f.vote) for f in votes] == [("u2", 1), ("u1", -1)]  # oldest change first
        assert votes[1] == changed

    async def test_export_since_is_inclusive(self, storage: Storage) -> None:
        votes = [_vote("r1", f"u{i}", 1, seconds=i) for i in range(4)]
        for vote in votes:
            await storage.record_feedback(vote)
        assert [f async for f in storage.export_feedback(since=T0 + timedelta(seconds=2))] == votes[2:]
        with pytest.raises(ValueError, match=r"since .* no time zone"):
            [f async for f in storage.export_feedback(since=NAIVE)]

    async def test_ties_are_broken_by_response_then_user(self, storage: Storage) -> None:
        votes = [_vote(f"r{i % 2}", f"u{i}", 1) for i in range(5)]  # all at the same instant
        for vote in reversed(votes):
            await storage.record_feedback(vote)
        expected = sorted(votes, key=lambda f: (f.response_id, f.user_id))
        assert [f async for f in storage.export_feedback()] == expected


class EventLedgerContract:
    """EventLedger: a retried platform delivery is processed once; old ids are pruned."""

    async def test_first_delivery_only(self, storage: Storage) -> None:
        assert await storage.first_delivery("slack", "Ev1") is True
        assert await storage.first_delivery("slack", "Ev1") is False
        assert await storage.first_delivery("discord", "Ev1") is True
        results = await asyncio.gather(*(storage.first_delivery("slack", "Ev2") for _ in range(20)))
        assert results.count(True) == 1

    async def test_prune_forgets_ids_received_before_the_cutoff(self, storage: Storage) -> None:
        assert await storage.first_delivery("slack", "old") is True
        assert await storage.prune_events(before=datetime.now(UTC) - timedelta(hours=1)) == 0
        assert await storage.first_delivery("slack", "old") is False
        assert await storage.prune_events(before=datetime.now(UTC) + timedelta(seconds=1)) == 1
        assert await storage.first_delivery("slack", "old") is True
        with pytest.raises(ValueError, match=r"before .* no time zone"):
            await storage.prune_events(before=NAIVE)


class StatusHistoryContract:
    """QueryStore.status_history and set_response_state: when each state was entered (issue 12)."""

    async def test_every_state_is_recorded_oldest_first(self, storage: Storage) -> None:
        query = UserQuery(query_text="how do I install?")
        await storage.create_query(query)
        await storage.set_query_status(query.query_id, QueryStatus.PROCESSING)
        await storage.set_response_state(query.query_id, ResponseState.PROCESSING)
        await storage.set_response_state(query.query_id, ResponseState.COMPLETED)
        await storage.set_query_status(query.query_id, QueryStatus.COMPLETED)
        history = await storage.status_history(query.query_id)
        assert [(c.machine, c.status) for c in history] == [
            ("query", "PENDING"), ("query", "PROCESSING"), ("response", "PROCESSING"),
            ("response", "COMPLETED"), ("query", "COMPLETED")]
        assert history[0].entered_at == query.timestamp
        assert [c.entered_at for c in history] == sorted(c.entered_at for c in history)
        assert all(c.entered_at.tzinfo is not None and c.error is None for c in history)

    async def test_errors_are_kept_with_the_state(self, storage: Storage) -> None:
        query = UserQuery(query_text="q")
        await storage.create_query(query)
        await storage.set_query_status(query.query_id, QueryStatus.PROCESSING)
        await storage.set_response_state(query.query_id, ResponseState.PROCESSING)
        await storage.set_response_state(query.query_id, ResponseState.ERROR, error="store down")
        await storage.set_query_status(query.query_id, QueryStatus.FAILED, error="store down")
        history = await storage.status_history(query.query_id)
        assert [(c.machine, c.status, c.error) for c in history[-2:]] == [
            ("response", "ERROR", "store down"), ("query", "FAILED", "store down")]

    async def test_illegal_moves_record_nothing(self, storage: Storage) -> None:
        query = UserQuery(query_text="q")
        await storage.create_query(query)
        with pytest.raises(ValueError, match="cannot start at ERROR"):
            await storage.set_response_state(query.query_id, ResponseState.ERROR)
        await storage.set_response_state(query.query_id, ResponseState.PROCESSING)
        await storage.set_response_state(query.query_id, ResponseState.COMPLETED)
        with pytest.raises(ValueError, match="response state cannot go from COMPLETED to ERROR"):
            await storage.set_response_state(query.query_id, ResponseState.ERROR)
        with pytest.raises(ValueError, match="query status cannot go from PENDING to COMPLETED"):
            await storage.set_query_status(query.query_id, QueryStatus.COMPLETED)
        with pytest.raises(ValueError, match="unknown query id 'nope'"):
            await storage.set_response_state("nope", ResponseState.PROCESSING)
        assert [c.status for c in await storage.status_history(query.query_id)] == [
            "PENDING", "PROCESSING", "COMPLETED"]
        assert await storage.status_history("nope") == []

    async def test_recovery_ends_an_open_response_in_error(self, storage: Storage) -> None:
        query = UserQuery(query_text="cut off")
        await storage.create_query(query)
        await storage.set_query_status(query.query_id, QueryStatus.PROCESSING)
        await storage.set_response_state(query.query_id, ResponseState.PROCESSING)
        # Its process is gone (told to a store that checks owners, which the others ignore).
        checks_owners = "is_alive" in inspect.signature(storage.fail_interrupted).parameters
        gone: dict[str, Any] = {"is_alive": lambda pid, started: False} if checks_owners else {}
        assert await storage.fail_interrupted(**gone) == 1
        history = await storage.status_history(query.query_id)
        assert [(c.machine, c.status, c.error) for c in history[-2:]] == [
            ("response", "ERROR", INTERRUPTED_ERROR), ("query", "FAILED", INTERRUPTED_ERROR)]


class StorageContract(
    ConversationContract,
    QueryLifecycleContract,
    StatusHistoryContract,
    CrashRecoveryContract,
    ActivityLogContract,
    FeedbackContract,
    EventLedgerContract,
):
    """Every storage contract; subclass it and provide a ``storage`` fixture."""

    def test_it_implements_every_storage_protocol(self, storage: Storage) -> None:
        for protocol in (ConversationStore, QueryStore, ActivityLog, FeedbackStore, EventLedger):
            assert isinstance(storage, protocol)


# --------------------------------------------------------------------------- implementations


class TestInMemoryStorage(StorageContract):
    @pytest.fixture
    def storage(self) -> Storage:
        return InMemoryStorage()


class TestSqliteStore(StorageContract):
    @pytest.fixture
    async def storage(self, tmp_path: Path) -> AsyncIterator[Storage]:
        store = await SqliteStore.open(tmp_path / "ragbot.sqlite3", page_size=2)
        try:
            yield store
        finally:
            await store.close()
