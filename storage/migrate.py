"""Apply the numbered SQL files in ``storage/migrations`` in order, each exactly once.

A migration is a file ``NNNN_name.sql`` (package data, read with importlib.resources).
Each one runs in its own ``BEGIN IMMEDIATE`` transaction (storage/transaction.py) together
with the row that records it in ``schema_migrations``, so a failed migration leaves no trace and two
processes starting at once cannot both apply the same file.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

import aiosqlite

from core.errors import StorageError
from core.models import utc_now
from storage.timestamps import to_db
from storage.transaction import immediate

MIGRATIONS_PACKAGE = "storage.migrations"
_FILE_RE = re.compile(r"^(\d{4})_([A-Za-z0-9_]+)\.sql$")


@dataclass(frozen=True, slots=True)
class Migration:
    """One numbered SQL file."""

    version: int
    name: str
    sql: str

    @property
    def filename(self) -> str:
        """The file's name, e.g. ``0001_init.sql``."""
        return f"{self.version:04d}_{self.name}.sql"

    def statements(self) -> list[str]:
        """Split the file into single statements.

        ``sqlite3.complete_statement`` decides where a statement ends, so semicolons
        inside strings, comments and trigger bodies do not split it.

        Raises:
            StorageError: the file ends inside an unterminated statement.
        """
        statements: list[str] = []
        *pieces, rest = self.sql.split(";")
        buffer = ""
        for piece in pieces:
            buffer += piece + ";"
            if sqlite3.complete_statement(buffer):
                if _strip_comments(buffer).strip(" \t\r\n;"):
                    statements.append(buffer.strip())
                buffer = ""
        rest = buffer + rest
        if _strip_comments(rest).strip():
            raise StorageError(
                f"migration {self.filename} ends with an unterminated statement: {rest.strip()!r}"
            )
        return statements


def _strip_comments(sql: str) -> str:
    return "\n".join(line.split("--", 1)[0] for line in sql.splitlines())


def load_migrations(package: str = MIGRATIONS_PACKAGE) -> list[Migration]:
    """Read the migration files of ``package``, ordered by version.

    Raises:
        StorageError: two files share a version, or a version is missing (1, 2, 4).
    """
    found: dict[int, Migration] = {}
    for entry in resources.files(package).iterdir():
        match = _FILE_RE.match(entry.name)
        if not match:
            continue
        version = int(match.group(1))
        if version in found:
            raise StorageError(
                f"migrations {found[version].filename} and {entry.name} share version {version}"
            )
        found[version] = Migration(version=version, name=match.group(2), sql=entry.read_text("utf-8"))
    versions = sorted(found)
    if versions != list(range(1, len(versions) + 1)):
        raise StorageError(f"migration versions must be 1, 2, 3 ... without gaps; found {versions}")
    return [found[v] for v in versions]


async def applied_versions(conn: aiosqlite.Connection) -> list[int]:
    """Versions recorded in ``schema_migrations`` (empty before the first migration)."""
    rows = await conn.execute_fetchall(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?", ("schema_migrations",)
    )
    if not list(rows):
        return []
    rows = await conn.execute_fetchall("SELECT version FROM schema_migrations ORDER BY version")
    return [int(row[0]) for row in rows]


async def migrate(conn: aiosqlite.Connection, *, migrations: Sequence[Migration] | None = None) -> list[int]:
    """Apply the migrations not yet recorded; applying twice is a no-op.

    Args:
        conn: an open connection with no transaction in progress.
        migrations: defaults to the files in ``storage/migrations``.

    Returns:
        The versions applied by this call, in order (empty when up to date).

    Raises:
        StorageError: a migration failed (it was rolled back, earlier ones stay), or the
            database was migrated by a newer ragbot than this one.
    """
    todo = list(load_migrations() if migrations is None else migrations)
    known = max((m.version for m in todo), default=0)
    try:
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version INTEGER PRIMARY KEY NOT NULL,"
            " name TEXT NOT NULL,"
            " applied_at TEXT NOT NULL)"
        )
        await conn.commit()
        current = await applied_versions(conn)
    except sqlite3.Error as exc:
        raise StorageError(f"cannot read the schema version: {exc}") from exc
    if current and current[-1] > known:
        raise StorageError(
            f"the database is at schema version {current[-1]} but this ragbot knows only up to "
            f"{known}; upgrade ragbot instead of opening a newer database with an older one"
        )
    applied: list[int] = []
    for migration in todo:
        if migration.version not in current and await _apply(conn, migration):
            applied.append(migration.version)
    return applied


async def _apply(conn: aiosqlite.Connection, migration: Migration) -> bool:
    """Run one migration and record it, in one transaction.

    Returns:
        False when another process applied it first (nothing is done), else True.

    Raises:
        StorageError: the migration failed and was rolled back.
    """
    statements = migration.statements()
    try:
        async with immediate(conn):
            # Inside the IMMEDIATE transaction, so this check cannot race another process.
            again = await conn.execute_fetchall(
                "SELECT 1 FROM schema_migrations WHERE version = ?", (migration.version,)
            )
            if list(again):
                return False
            for statement in statements:
                await conn.execute(statement)
            await conn.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                (migration.version, migration.name, to_db(utc_now())),
            )
    except sqlite3.Error as exc:
        raise StorageError(f"migration {migration.filename} failed and was rolled back: {exc}") from exc
    return True
