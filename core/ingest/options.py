"""What an ingest may do to a collection: the run's options, the removal guard, the folder claim.

- ``IngestOptions``: follow symbolic links, allow a large removal (``prune``), or only
  report what would change (``dry_run``); sent as JSON over the control socket too.
- ``check_removal``: an emptied or half checked-out docs folder must not wipe the
  knowledge base, so removing more than half of a collection's chunks, or every
  document, needs ``prune``.
- ``RootClaim``: which folder each collection mirrors. It is checked before an ingest
  (another folder is refused unless ``replace``) and recorded only after a run that
  read at least one file, so an empty or unsupported-only folder claims nothing.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from core.errors import IngestRefusedError, IngestSourceError
from core.models import IngestSummary
from core.protocols import DocumentState


@dataclass(frozen=True, slots=True)
class IngestOptions:
    """How far one ingest may go."""

    #: Read symbolic links whose resolved path stays inside the folder.
    follow_symlinks: bool = False
    #: Allow removing more than half of the collection, or all of it.
    prune: bool = False
    #: Write nothing; the summary lists what would be added, updated and removed.
    dry_run: bool = False
    #: Refuse the whole ingest while a page looks like instructions to an assistant.
    strict: bool = False

    @classmethod
    def from_request(cls, value: Any) -> IngestOptions:
        """The options a CLI sent over the control socket (missing or unknown keys: defaults)."""
        if not isinstance(value, dict):
            return cls()
        names = ("follow_symlinks", "prune", "dry_run", "strict")
        return cls(**{name: bool(value.get(name)) for name in names})

    def as_request(self) -> dict[str, bool]:
        """The JSON form ``from_request`` reads."""
        return asdict(self)


def check_removal(
    stored: dict[str, DocumentState], gone: list[str], *, collection: str, prune: bool,
    summary: IngestSummary | None = None,
) -> None:
    """Refuse to remove more than half of the collection's chunks, or every document, unless ``prune``.

    A dry run (``summary.dry_run``) is not refused: the refusal becomes the first of its changes.

    Raises:
        IngestRefusedError: naming how much would go and how to proceed.
    """
    if prune or not gone:
        return
    total = sum(len(state.chunk_ids) for state in stored.values())
    removing = sum(len(stored[name].chunk_ids) for name in gone)
    if removing * 2 <= total and len(gone) < len(stored):
        return
    refusal = (
        f"refusing to remove {removing} of {total} chunks ({len(gone)} of {len(stored)} documents) "
        f"from collection {collection!r}: the folder looks emptied or only partly checked out. "
        "Check it; `--dry-run` lists what would change, `--prune` removes them"
    )
    if summary is not None and summary.dry_run:
        summary.changes.insert(0, f"without --prune a real run stops here: {refusal}")
        return
    raise IngestRefusedError(refusal)


class RootClaim:
    """The folder a collection mirrors, checked before an ingest and recorded after it.

    Args:
        state_path: JSON file mapping collection names to their folders.
        collection: the collection ingested into.
        source: the folder or file given to ``ragbot ingest``.
        replace: let a different folder take over the collection.

    Raises:
        IngestSourceError: ``source`` is another folder than the recorded one (without
            ``replace``), or a single file outside it.
    """

    def __init__(self, state_path: Path, collection: str, source: Path, *, replace: bool = False) -> None:
        self.state_path = state_path
        self.collection = collection
        self.is_file = not source.is_dir()
        # A file's own name is kept unresolved: ingest refuses a link it was not asked to follow.
        self.source = source.parent.resolve() / source.name if self.is_file else source.resolve()
        roots = self._roots()
        self.recorded = Path(roots[collection]) if collection in roots else None
        if self.is_file and self.recorded is not None and not self.source.is_relative_to(self.recorded):
            raise IngestSourceError(
                f"{str(self.source)!r} is outside {str(self.recorded)!r}, the folder collection "
                f"{collection!r} mirrors: copy the file into that folder and run `ragbot ingest "
                f"{self.recorded}`, or ingest it into another knowledge base with --collection NAME"
            )
        if not self.is_file and self.recorded not in (None, self.source) and not replace:
            raise IngestSourceError(
                f"collection {collection!r} mirrors {str(self.recorded)!r}; ingesting {str(self.source)!r} "
                "would remove its documents. Use --collection NAME for a second knowledge base, or --replace"
            )

    @property
    def root(self) -> Path | None:
        """For a single file, the recorded folder its name is relative to (None: its own folder)."""
        return self.recorded if self.is_file else None

    def record(self, summary: IngestSummary) -> bool:
        """Record the folder once a real run read at least one file; return whether it was recorded."""
        if self.is_file or summary.dry_run or summary.files - len(summary.files_failed) < 1:
            return False
        roots = self._roots()
        roots[self.collection] = str(self.source)
        self.state_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.state_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(roots, indent=1), "utf-8")
        tmp.replace(self.state_path)
        return True

    def _roots(self) -> dict[str, str]:
        if not self.state_path.exists():
            return {}
        try:
            roots = json.loads(self.state_path.read_text("utf-8"))
        except (OSError, ValueError) as exc:
            raise IngestSourceError(
                f"{self.state_path} is unreadable ({exc}): delete it and ingest again") from exc
        return roots if isinstance(roots, dict) else {}
