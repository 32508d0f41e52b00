"""The data folder and what ragbot writes in it are private to the user running it, whatever the umask.

The folder holds every question, user id and thread (SQLite), the log and the control socket,
so it is 0700 and those files 0600: another local user reads nothing and cannot reach the
socket. Files are created with their final mode (``O_CREAT`` with 0600, never created first
and narrowed later) and existing ones are narrowed on start, so an install made under a
permissive umask is repaired by the next run.
"""

from __future__ import annotations

import io
import logging
import logging.handlers
import os
import stat
from pathlib import Path
from typing import Any, TextIO, cast

log = logging.getLogger(__name__)

DIR_MODE = 0o700
FILE_MODE = 0o600
#: ragbot.log is rotated at this size, keeping this many old files (60 MB at most in all).
LOG_MAX_BYTES = 10 * 1024 * 1024
LOG_BACKUPS = 5


def private_dir(path: Path) -> Path:
    """Create ``path`` (and parents) and make it 0700 when it is ours.

    A folder owned by someone else, or a shared sticky one such as /tmp, is left as it is
    (with a warning): ragbot must never lock other people out of a folder it was pointed at.

    Raises:
        OSError: the folder cannot be created.
    """
    path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    info = path.stat()
    if stat.S_IMODE(info.st_mode) & 0o077 == 0:
        return path
    if info.st_uid != os.getuid() or info.st_mode & stat.S_ISVTX:
        log.warning("data folder %s is readable by other users (mode %o) and not ours to narrow: "
                    "point RAGBOT_DATA_DIR at a folder of your own", path, stat.S_IMODE(info.st_mode))
        return path
    os.chmod(path, DIR_MODE)
    return path


def private_file(path: Path) -> Path:
    """Create ``path`` empty as 0600 if missing, else narrow it to 0600; return it."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0), FILE_MODE)
    try:
        _narrow_fd(fd)
    finally:
        os.close(fd)
    return path


def _narrow_fd(fd: int) -> None:
    # Only regular files: `-o /dev/stdout` must not chmod the terminal.
    info = os.fstat(fd)
    if stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) != FILE_MODE:
        os.fchmod(fd, FILE_MODE)


def narrow(path: Path) -> None:
    """Make an existing file 0600 (missing files are fine: SQLite creates its -wal/-shm later)."""
    try:
        if stat.S_IMODE(path.lstat().st_mode) != FILE_MODE and not path.is_symlink():
            os.chmod(path, FILE_MODE)
    except FileNotFoundError:
        return


def open_private(path: Path, mode: str = "w", **kwargs: Any) -> TextIO:
    """``open(path, mode)`` for writing text, the file created (or truncated) as 0600."""
    if mode not in ("w", "a"):
        raise ValueError(f"open_private writes text files; mode {mode!r} is not 'w' or 'a'")
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if mode.startswith("a") else os.O_TRUNC)
    fd = os.open(path, flags, FILE_MODE)
    try:
        _narrow_fd(fd)
        return cast(TextIO, os.fdopen(fd, mode, **kwargs))
    except BaseException:
        os.close(fd)
        raise


class PrivateLogHandler(logging.handlers.RotatingFileHandler):
    """ragbot.log: rotated at ``LOG_MAX_BYTES`` (``LOG_BACKUPS`` kept), every file 0600."""

    def __init__(self, path: Path, *, max_bytes: int = LOG_MAX_BYTES, backups: int = LOG_BACKUPS) -> None:
        super().__init__(path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8")

    def _open(self) -> io.TextIOWrapper:
        stream = open_private(Path(self.baseFilename), self.mode, encoding=self.encoding, errors=self.errors)
        assert isinstance(stream, io.TextIOWrapper)  # text mode: fdopen gives a TextIOWrapper
        return stream
