"""Which files of a docs folder are read: regular files that stay inside the folder, nothing else.

A docs folder may hold a link to ``~/.env`` or ``/etc/passwd``, a FIFO that blocks the
first reader forever, or a device. ``scan_folder`` opens no page: it classifies each entry
from ``lstat``. Symbolic links are skipped unless ``follow_symlinks`` is given, and even then
only a link whose resolved path stays inside the folder is read. Hidden entries, build
folders and what an ignore file names (``.ragbotignore``, Mintlify's ``.mintignore``: the only
files it reads, when they are regular files) are not walked; files over ``MAX_FILE_BYTES`` are
skipped. ``load_file`` checks the same things again when it opens a file, since the folder can
change between the walk and the read.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import stat
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import pathspec

from core.ingest.asciidoc import SUFFIXES as ASCIIDOC_SUFFIXES
from core.ingest.asciidoc import included_pages, is_unpublished
from core.ingest.loaders import MAX_FILE_BYTES, SUPPORTED_SUFFIXES, is_supported, read_regular_file
from core.ingest.partials import is_partial

log = logging.getLogger(__name__)

#: Folders never walked: build output, dependencies, and hidden folders (.git, .docusaurus ...).
SKIPPED_DIRS = frozenset({"node_modules", "build", "__pycache__", "site-packages"})

SYMLINK = "symbolic link, not followed (--follow-symlinks reads links that stay inside the folder)"
OUTSIDE = "symbolic link to a path outside the docs folder, not followed"
BROKEN = "symbolic link to nothing"
LOOP = "symbolic link to a folder read already"
TOO_LARGE = f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MB"
_KINDS = {stat.S_IFIFO: "FIFO", stat.S_IFSOCK: "socket", stat.S_IFCHR: "character device",
          stat.S_IFBLK: "block device"}


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file left out for safety or size: its path relative to the folder and why."""

    path: str
    reason: str

    def line(self) -> str:
        """``users.txt: symbolic link, not followed (...)``."""
        return f"{self.path}: {self.reason}"


@dataclass(slots=True)
class FolderScan:
    """What a folder holds: files to read, files of unsupported types, entries skipped."""

    files: list[Path] = field(default_factory=list)
    unsupported: list[Path] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    #: Folders named ``build`` left out, relative: named to the operator, as a site's pages may sit there.
    build_folders: list[str] = field(default_factory=list)
    #: Entries an ignore file (``IGNORE_FILES``) leaves out, relative (a folder ends with ``/``).
    ignored: list[str] = field(default_factory=list)

    def nothing_to_ingest(self, root: Path) -> str:
        """The message for a folder without a single file to read, naming what was found instead."""
        return f"nothing to ingest in {str(root)!r}: " + describe_left_out(self.unsupported, self.skipped)


def name_some(paths: list[str], *, shown: int) -> str:
    """``a.md, b.md and 4 more``: the first ``shown`` paths named, the rest counted."""
    return ", ".join(paths[:shown]) + (f" and {len(paths) - shown} more" if len(paths) > shown else "")


def describe_left_out(unsupported: list[Path], skipped: list[Skipped]) -> str:
    """``3 .pdf, 1 .docx: not supported (...); pipe.md: FIFO, never opened``, or "the folder is empty"."""
    parts: list[str] = []
    if unsupported:
        counts = Counter(p.suffix.lower() or "(no extension)" for p in unsupported)
        listed = ", ".join(f"{n} {suffix}" for suffix, n in counts.most_common())
        parts.append(f"{listed}: not supported (ragbot reads {', '.join(sorted(SUPPORTED_SUFFIXES))})")
    by_reason: dict[str, list[str]] = {}
    for item in skipped:
        by_reason.setdefault(item.reason, []).append(item.path)
    for reason, paths in by_reason.items():
        named = name_some(paths, shown=3)
        parts.append(f"{named}: {reason}")
    return "; ".join(parts) or "the folder is empty (hidden files and build folders are not read)"


def file_kind(mode: int) -> str | None:
    """None for a regular file, else what it is (``FIFO``, ``socket``, ``character device`` ...)."""
    if stat.S_ISREG(mode):
        return None
    return _KINDS.get(stat.S_IFMT(mode), "not a regular file")


def scan_folder(root: Path, *, follow_symlinks: bool = False) -> FolderScan:
    """Classify every entry under ``root``, sorted, folders after the files beside them.

    Raises:
        OSError: ``root`` itself cannot be listed.
    """
    real_root = root.resolve()
    scan = FolderScan()
    visited = {real_root}
    pending: list[tuple[Path, tuple[_Ignore, ...]]] = [(root, ())]
    while pending:
        folder, ignores = pending.pop()
        ignores = (*ignores, *_ignore_file(folder))
        subfolders: list[Path] = []
        with os.scandir(folder) as listing:
            entries = sorted(listing, key=lambda e: e.name)
        for entry in entries:
            if entry.name.startswith("."):
                continue
            path = Path(entry.path)
            relative = path.relative_to(root).as_posix()
            if ignores and _is_ignored(path, entry.is_dir(), ignores):
                scan.ignored.append(f"{relative}/" if entry.is_dir() else relative)
                continue
            if entry.is_symlink():
                target = _link_target(path, real_root, follow_symlinks, visited, scan, relative)
                if target is None:
                    continue
                if target.is_dir():
                    visited.add(target)
                    subfolders.append(path)
                    continue
                info = os.stat(target)
                mode, size = info.st_mode, info.st_size
            elif entry.is_dir(follow_symlinks=False):
                if entry.name not in SKIPPED_DIRS:
                    subfolders.append(path)
                elif entry.name == "build":
                    scan.build_folders.append(f"{relative}/")
                continue
            else:
                info = entry.stat(follow_symlinks=False)
                mode, size = info.st_mode, info.st_size
            _classify(scan, path, relative, mode, size, root=root)
        pending.extend((subfolder, ignores) for subfolder in reversed(subfolders))
    if any(path.suffix.lower() in ASCIIDOC_SUFFIXES for path in scan.files):
        included = included_pages(scan.files, root=root, read=functools.partial(
            read_regular_file, root=root, follow_symlinks=follow_symlinks))
        for path in included:
            log.info("skipping %s: another page includes it whole, and is read with it",
                     path.relative_to(root).as_posix())
        scan.files = [path for path in scan.files if path not in included]
    return scan


#: A folder's own list of what the docs leave out, in ``.gitignore``'s syntax: ragbot's, and Mintlify's
#: (``agent-context/``: files its site does not publish).
IGNORE_FILES = (".ragbotignore", ".mintignore")
#: An ignore file longer than this is not read (a docs folder's is a few lines).
_MAX_IGNORE_BYTES = 256 * 1024


class _Ignore(NamedTuple):
    folder: Path
    spec: pathspec.PathSpec


def _ignore_file(folder: Path) -> list[_Ignore]:
    """The patterns of the ignore files in ``folder`` (regular files, not links), if it holds any."""
    lines: list[str] = []
    for name in IGNORE_FILES:
        try:
            info = os.stat(folder / name, follow_symlinks=False)
            if stat.S_ISREG(info.st_mode) and info.st_size <= _MAX_IGNORE_BYTES:
                lines.extend((folder / name).read_text(encoding="utf-8", errors="replace").splitlines())
        except OSError:
            continue  # none there, or not readable: nothing is left out by it
    patterns = [line for line in lines if _is_pattern(line, folder)]
    return [_Ignore(folder, pathspec.GitIgnoreSpec.from_lines(patterns))] if patterns else []


def _is_pattern(line: str, folder: Path) -> bool:
    """Whether a line of an ignore file is a pattern ``pathspec`` reads; a bad one is named and skipped."""
    try:
        pathspec.GitIgnoreSpec.from_lines([line])
    except (ValueError, re.error) as exc:  # git ignores such a line too ("!", "foo\\", "[z-a].md")
        log.warning("%s: an ignore file's line %r is no pattern, skipped: %s", folder, line, exc)
        return False
    return True


def _is_ignored(path: Path, is_dir: bool, ignores: tuple[_Ignore, ...]) -> bool:
    for ignore in ignores:
        relative = path.relative_to(ignore.folder).as_posix() + ("/" if is_dir else "")
        if ignore.spec.match_file(relative):
            return True
    return False


def _link_target(
    path: Path, real_root: Path, follow: bool, visited: set[Path], scan: FolderScan, relative: str
) -> Path | None:
    """The resolved target of a link that may be read, or None (recorded as skipped)."""
    reason: str | None = SYMLINK if not follow else None
    target = path.resolve()
    if reason is None:
        if not target.exists():
            reason = BROKEN
        elif not target.is_relative_to(real_root):
            reason = OUTSIDE
        elif target.is_dir() and target in visited:
            reason = LOOP
    if reason is not None:
        log.warning("skipping %s: %s", relative, reason)
        scan.skipped.append(Skipped(relative, reason))
        return None
    return target


def _classify(scan: FolderScan, path: Path, relative: str, mode: int, size: int, *, root: Path) -> None:
    kind = file_kind(mode)
    if kind is not None:
        reason = f"{kind}, never opened"
    elif not is_supported(path):
        log.info("skipping %s: unsupported file type", relative)
        scan.unsupported.append(path)
        return
    elif is_partial(path) or (path.suffix.lower() in ASCIIDOC_SUFFIXES and is_unpublished(path, root=root)):
        log.info("skipping %s: a partial, read where pages import it", relative)
        return
    elif size > MAX_FILE_BYTES:
        reason = TOO_LARGE
    else:
        scan.files.append(path)
        return
    log.warning("skipping %s: %s", relative, reason)
    scan.skipped.append(Skipped(relative, reason))
