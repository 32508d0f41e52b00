"""The connection under every SQLite table module: open, lock, transactions, reads, pages.

``SqliteBase`` owns one aiosqlite connection and an asyncio lock. The table modules
(storage/turns.py, queries.py, activity.py, feedback.py, events.py) subclass it and
only write SQL; ``storage/sqlite.py:SqliteStore`` puts them together.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import aiosqlite

from core.errors import StorageError
from core.private import narrow, private_file
from storage.migrate import migrate
from storage.transaction import immediate

#: Rows fetched per page by the exports; memory stays flat however large the table.
DEFAULT_PAGE_SIZE = 500
#: How long a writer waits for another process's lock before SQLITE_BUSY.
BUSY_TIMEOUT_MS = 5000


class SqliteBase:
    """One connection, serialised by an asyncio lock.

    Writes run in their own ``BEGIN IMMEDIATE`` transaction committed before the call
    returns. Reads take the same lock so they never see another coroutine's half-done
    transaction.

    Durability: a write is flushed to disk when it commits (``synchronous=FULL``) unless
    its caller says it is one step of a longer piece of work (``durable=False``): an
    answer writes a dozen log entries and state changes, and an fsync each cost about a
    sixth of its time. Those commit with ``synchronous=NORMAL``, which in WAL mode survives
    a killed process but not a power cut; the answer's last write (its final status) is
    durable, and its flush covers every WAL frame written before it. So a power cut loses
    only the answer in progress (possibly its query row too, so there is nothing to mark
    failed); a killed process loses nothing.
    """

    def __init__(self, *, path: Path, conn: aiosqlite.Connection, page_size: int = DEFAULT_PAGE_SIZE) -> None:
        """Wrap an already configured and migrated connection; use ``open`` instead."""
        if page_size < 1:
            raise ValueError(f"page_size {page_size} must be at least 1")
        self._path = path
        self._conn: aiosqlite.Connection | None = conn
        self._page_size = page_size
        self._lock = asyncio.Lock()
        #: The connection's current ``synchronous`` setting (None: not set by us yet).
        self._flushing: bool | None = None

    @classmethod
    async def open(cls, path: Path, *, page_size: int = DEFAULT_PAGE_SIZE) -> Self:
        """Open (or create) the database at ``path`` and bring its schema up to date.

        Args:
            path: the database file; missing parent folders are created.
            page_size: rows per page when streaming exports.

        Returns:
            An open store; call ``close()`` (or use ``async with``) when done.

        Raises:
            StorageError: the folder cannot be created, the file is not a SQLite
                database, or a migration failed. The file is left exactly as it was.
        """
        path = Path(path)
        return cls(path=path, conn=await connect(path), page_size=page_size)

    @property
    def path(self) -> Path:
        """The database file."""
        return self._path

    async def close(self) -> None:
        """Close the connection; safe to call twice. Later calls raise StorageError."""
        conn, self._conn = self._conn, None
        if conn is None:
            return
        async with self._lock:
            try:
                await conn.close()
            except sqlite3.Error as exc:
                raise StorageError(f"cannot close the SQLite database {self._path}: {exc}") from exc

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def _connection(self) -> aiosqlite.Connection:
        if self._conn is None:
            raise StorageError(f"the SQLite store {self._path} is closed")
        return self._conn

    @asynccontextmanager
    async def _write(self, what: str, *, durable: bool = True) -> AsyncIterator[aiosqlite.Connection]:
        """One write transaction under the lock (see ``storage.transaction.immediate``).

        Args:
            what: names the write in errors.
            durable: flush it to disk at commit; False for a step that a later durable
                write of the same work completes (see the class docstring).

        ``sqlite3.Error`` becomes StorageError naming ``what``; other exceptions
        (ValueError for a caller's mistake) roll back and pass through unchanged.
        """
        async with self._lock:
            try:
                conn = self._connection()
                if self._flushing is not durable:
                    # Unknown until the PRAGMA has run: a write cancelled while waiting for it
                    # must not leave a durable write believing it will be flushed.
                    self._flushing = None
                    # Outside any transaction; the value is one of our two constants.
                    await conn.execute("PRAGMA synchronous=FULL" if durable else "PRAGMA synchronous=NORMAL")
                    self._flushing = durable
                async with immediate(conn) as conn:
                    yield conn
            except sqlite3.Error as exc:
                raise StorageError(f"cannot {what} in {self._path}: {exc}") from exc

    async def _read(self, what: str, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        async with self._lock:
            conn = self._connection()
            try:
                return list(await conn.execute_fetchall(sql, params))
            except sqlite3.Error as exc:
                raise StorageError(f"cannot {what} in {self._path}: {exc}") from exc

    async def _pages(
        self,
        what: str,
        *,
        select: str,
        where: Sequence[str],
        params: Sequence[Any],
        keyset: Sequence[str],
    ) -> AsyncIterator[sqlite3.Row]:
        """Yield the rows of ``SELECT <select>`` ordered by ``keyset``, one page at a time.

        Each page starts after the last row of the one before (keyset pagination), so
        it is an index range scan and rows written meanwhile do not shift the pages.
        The lock is released between pages: the consumer may write to the store.

        Args:
            what: what is read, for the error message.
            select: ``"<columns> FROM <table>"``, our own constants; never user input.
            where: conditions with ``?`` placeholders, joined with AND.
            params: the values of those placeholders.
            keyset: columns that order the rows and together identify one.
        """
        order = ", ".join(keyset)
        after: list[Any] = []
        while True:
            conditions = [*where, f"({order}) > ({', '.join('?' * len(keyset))})"] if after else list(where)
            sql = (
                f"SELECT {select}"
                + (f" WHERE {' AND '.join(conditions)}" if conditions else "")
                + f" ORDER BY {order} LIMIT ?"
            )
            rows = await self._read(what, sql, [*params, *after, self._page_size])
            for row in rows:
                yield row
            if len(rows) < self._page_size:
                return
            after = [rows[-1][column] for column in keyset]


async def connect(path: Path) -> aiosqlite.Connection:
    """Open ``path``, set the connection up (busy timeout, foreign keys, WAL) and migrate it.

    Raises:
        StorageError: the folder cannot be created, the file is not a SQLite database,
            or a migration failed; the file is left untouched and the connection closed.
    """
    try:
        await asyncio.to_thread(path.parent.mkdir, parents=True, exist_ok=True)
        # Created 0600 before SQLite opens it: its -wal and -shm files then get the same mode.
        await asyncio.to_thread(_private_files, path)
    except OSError as exc:
        raise StorageError(f"cannot create the folder {path.parent} for the SQLite database: {exc}") from exc
    # isolation_level=None: the module never opens transactions behind our back;
    # every write says BEGIN IMMEDIATE itself (storage/transaction.py).
    conn = aiosqlite.connect(path, isolation_level=None)
    try:
        await conn
    except sqlite3.Error as exc:
        await _worker_stopped(conn)
        raise StorageError(f"cannot open the SQLite database {path}: {exc}") from exc
    except asyncio.CancelledError:
        await asyncio.shield(_worker_stopped(conn))  # Ctrl-C or a deadline while opening
        raise
    try:
        await _configure(conn)
        await migrate(conn)
    except sqlite3.Error as exc:
        await _close_quietly(conn)
        raise StorageError(
            f"cannot open the SQLite database {path}: {exc}. The file was left untouched; "
            "if it is damaged, move it aside (or restore a backup) and start again"
        ) from exc
    except StorageError as exc:
        await _close_quietly(conn)
        raise StorageError(f"cannot open the SQLite database {path}: {exc}") from exc
    except BaseException:
        await _close_quietly(conn)
        raise
    return conn


def _private_files(path: Path) -> None:
    """The database and its -wal/-shm files readable by their owner only (core/private.py)."""
    if path.exists() and not path.is_file():
        return  # a folder or device: SQLite's own error names the problem
    private_file(path)
    for suffix in ("-wal", "-shm", "-journal"):
        narrow(path.with_name(path.name + suffix))


async def _configure(conn: aiosqlite.Connection) -> None:
    conn.row_factory = sqlite3.Row
    # First, so that a `ragbot logs export` opening the file while `serve` writes waits
    # for the lock instead of failing. PRAGMA takes no ? parameters; the value is our
    # own integer constant.
    await conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS:d}")
    await conn.execute("PRAGMA foreign_keys=ON")
    # Read the header before anything that could write: a file that is not a database
    # must fail here, untouched, never be "repaired" into an empty one.
    await conn.execute_fetchall("SELECT count(*) FROM sqlite_master")
    await conn.execute_fetchall("PRAGMA journal_mode=WAL")


async def rowcount(conn: aiosqlite.Connection, sql: str, params: Sequence[Any]) -> int:
    """Run one statement and return how many rows it changed."""
    async with conn.execute(sql, params) as cursor:
        return cursor.rowcount


async def _worker_stopped(conn: aiosqlite.Connection) -> None:
    """Wait for the worker thread aiosqlite stops, without waiting, after a failed connect.

    The thread reports its stop to this event loop; a command that exits at once (a data
    folder SQLite cannot open) would close the loop first, and the thread would print a
    traceback ("Event loop is closed") after the clear message.
    """
    thread = getattr(conn, "_thread", None)  # aiosqlite has no public handle on it
    if thread is not None and thread.is_alive():
        await asyncio.to_thread(thread.join, 5)


async def _close_quietly(conn: aiosqlite.Connection) -> None:
    # Used only while already raising the real error, which must not be masked.
    with suppress(sqlite3.Error):
        await conn.close()
