"""What stands between ragbot and the embedded engine (qdrant-edge): errors, disk space, the folder.

- One table (``MESSAGE_RULES``, ``ERRNO_RULES``) from an engine failure to the ``StoreError``
  raised, in the style of ``core/providers/errors.py``. The engine raises bare ``Exception``
  for every failure, and a Rust panic surfaces as ``pyo3_runtime.PanicException``, a
  ``BaseException`` that would escape every ``except Exception``: ``engine_call`` turns
  both into a ``StoreError`` (a panic is a damaged store) and logs it.
- ``SpaceCheck``: the engine writes through memory-mapped, sparse files; on a full disk a
  write into a hole is answered by SIGBUS, which kills the whole process with no message.
  Before each write the free space must cover what the store's files may still claim
  (their holes) plus ``RESERVE_BYTES`` for a new WAL segment and a new page; otherwise
  ``StoreFullError`` is raised and nothing is written.
- ``folder_identity``: the device and inode of a collection's folder when it was opened,
  so a folder deleted (or replaced) under a running process is noticed before a write
  that could never persist.
- ``FolderLock``: one process at a time per collection. The engine locks only shards
  that have a WAL; new shards have none, so ragbot holds an ``flock`` of its own.
"""

from __future__ import annotations

import errno
import fcntl
import json
import logging
import os
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from core.errors import StoreBusyError, StoreError, StoreFullError, StoreUnavailableError

log = logging.getLogger(__name__)
T = TypeVar("T")

MIB = 1024 * 1024
#: Kept free beyond the holes of existing files: a new WAL segment or page is 32 MiB each.
RESERVE_BYTES = 64 * MIB
#: What a new collection's files claim (measured: ~130 MB of sparse pages when empty).
NEW_SHARD_BYTES = 160 * MIB
#: How long a measured hole total is reused; between two measurements writes only fill holes.
HOLES_TTL_SECONDS = 2.0


@dataclass(frozen=True, slots=True)
class Rule:
    """What one kind of engine failure means: the error raised and its message.

    ``says`` is filled with ``{action}`` (what was being done), ``{folder}`` and ``{detail}``
    (the engine's own words).
    """

    error: type[StoreError]
    says: str


FULL = Rule(StoreFullError, "{action} failed: the disk holding {folder} is full; free some space "
                            "and run it again (what was stored before is kept)")
MISSING = Rule(StoreUnavailableError, "{action} failed: files of the knowledge base in {folder} are "
                                      "missing ({detail}); restart ragbot, then run `ragbot ingest` again")
LOCKED = Rule(StoreBusyError, "the knowledge base in {folder} is open in another ragbot process "
                                     "(is `ragbot serve` running? the CLI hands work to it when it is)")
DAMAGED = Rule(StoreUnavailableError, "{action} failed: the knowledge base in {folder} looks damaged "
                                      "(engine panic: {detail}); restore it from a backup, or delete that "
                                      "folder and run `ragbot ingest` again")
DEFAULT = Rule(StoreUnavailableError, "{action} failed on the knowledge base in {folder}: {detail}")

#: Engine messages with a meaning of their own, matched as substrings; the first match wins.
MESSAGE_RULES: tuple[tuple[str, Rule], ...] = (
    ("WouldBlock", LOCKED),
    ("No space left on device", FULL),
    ("os error 28", FULL),
    ("Disk quota exceeded", FULL),
    ("No such file or directory", MISSING),
)

#: Python-side OSErrors (our own files next to the shard), by errno.
ERRNO_RULES: dict[int, Rule] = {errno.ENOSPC: FULL, errno.EDQUOT: FULL, errno.ENOENT: MISSING}


def is_panic(exc: BaseException) -> bool:
    """True for a Rust panic raised through pyo3 (its class exists only once a panic happened)."""
    return type(exc).__name__ == "PanicException"


def rule_for(exc: BaseException) -> Rule:
    """Look a failure up in the tables above."""
    if is_panic(exc):
        return DAMAGED
    if isinstance(exc, OSError) and exc.errno in ERRNO_RULES:
        return ERRNO_RULES[exc.errno]
    text = str(exc)
    return next((rule for needle, rule in MESSAGE_RULES if needle in text), DEFAULT)


def to_store_error(exc: BaseException, *, action: str, folder: Path) -> StoreError:
    """The StoreError to raise for ``exc`` (the caller chains ``exc``)."""
    rule = rule_for(exc)
    detail = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
    return rule.error(rule.says.format(action=action, folder=folder, detail=detail))


def engine_call(action: str, folder: Path, fn: Callable[..., T], *args: Any) -> T:
    """Run one engine call; its failures, panics included, become a logged StoreError.

    Raises:
        StoreError: as ``rule_for`` decides.
    """
    try:
        return fn(*args)
    except StoreError:
        raise
    except BaseException as exc:
        if not (isinstance(exc, Exception) or is_panic(exc)):
            raise  # KeyboardInterrupt, SystemExit: not the engine's
        error = to_store_error(exc, action=action, folder=folder)
        # A traceback helps with a panic or an unknown failure; a full disk or a lock speaks for itself.
        unknown = is_panic(exc) or type(error) is StoreUnavailableError
        log.error("%s", error, exc_info=exc if unknown else None)
        raise error from exc


def folder_identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of a folder, or None when it does not exist."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    return info.st_dev, info.st_ino


class FolderLock:
    """An exclusive ``flock`` on ``<folder>/.lock``, held while this process has the collection open."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock (a no-op when held already).

        Raises:
            StoreUnavailableError: another process holds it, or the folder cannot be made.
        """
        if self._fd is not None:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.folder / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise to_store_error(exc, action="opening the knowledge base", folder=self.folder) from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            raise LOCKED.error(LOCKED.says.format(action="", folder=self.folder, detail="")) from exc
        self._fd = fd

    def release(self) -> None:
        """Let the lock go (closing the file releases the flock)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def holes(folder: Path) -> int:
    """Bytes the files under ``folder`` may still claim: their apparent size beyond allocated blocks."""
    total = 0
    for dirpath, _, files in os.walk(folder):
        for name in files:
            try:
                info = os.stat(os.path.join(dirpath, name))
            except FileNotFoundError:
                continue  # the engine replaced it meanwhile
            total += max(0, info.st_size - info.st_blocks * 512)
    return total


def free_bytes(path: Path) -> int:
    """Free space available to this user on the disk holding ``path`` (or its nearest existing parent)."""
    while not path.exists() and path != path.parent:
        path = path.parent
    return shutil.disk_usage(path).free


class SpaceCheck:
    """Refuses a write when the disk cannot take what the store's files may claim."""

    def __init__(self, *, reserve: int = RESERVE_BYTES, ttl: float = HOLES_TTL_SECONDS) -> None:
        self.reserve = reserve
        self.ttl = ttl
        self._holes: dict[Path, tuple[float, int]] = {}
        self._lock = threading.Lock()

    def require(self, folder: Path, *, action: str, extra: int = 0) -> None:
        """Check before writing under ``folder``.

        Args:
            folder: the shard folder written to (need not exist yet).
            action: named in the error.
            extra: bytes the write adds besides filling holes (a new shard's files).

        Raises:
            StoreFullError: the free space is below holes + ``extra`` + the reserve.
        """
        need = self._cached_holes(folder) + extra + self.reserve
        free = free_bytes(folder)
        if free < need:
            error = StoreFullError(
                f"{action} refused: {free / MIB:.0f} MB free on the disk holding {folder}, the knowledge "
                f"base needs {need / MIB:.0f} MB to write safely; free some space and run it again "
                "(what was stored before is kept)"
            )
            log.error("%s", error)
            raise error

    def forget(self, folder: Path) -> None:
        """Drop the cached measurement (after a new shard was created or removed)."""
        with self._lock:
            self._holes.pop(folder, None)

    def _cached_holes(self, folder: Path) -> int:
        now = time.monotonic()
        with self._lock:
            cached = self._holes.get(folder)
            if cached is not None and now - cached[0] < self.ttl:
                return cached[1]
        measured = holes(folder) if folder.exists() else 0
        with self._lock:
            self._holes[folder] = (now, measured)
        return measured


def write_json_durably(path: Path, value: Any) -> None:
    """Write ``path`` atomically and durably: temp file, fsync, rename, fsync the folder.

    Raises:
        OSError: the disk refused the write (the previous file, if any, is intact).
    """
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(value, handle)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
