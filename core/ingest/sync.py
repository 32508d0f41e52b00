"""Incremental ingestion of a docs folder into a vector store collection.

One collection is one knowledge base. ``ingest_path`` makes the collection
mirror a folder: new files are added, changed files have exactly their chunks
replaced, unchanged files are not touched (no embedding, no write), and files
gone from the folder have their chunks removed. ``DocumentChunk`` cannot record
which root a document came from, so the mirror is scoped by kind instead: a
folder ingest owns every document stored under a relative path, and leaves
alone documents stored under an ``http(s)://`` URL (those belong to sitemap
ingestion, ``core.ingest.sitemap``). So that a second folder never silently replaces
the first, ``claim_root`` records which folder each collection mirrors and
refuses another one unless asked to replace it. Ingesting a single file updates
that file only, named relative to the recorded folder.

Writes are grouped per document: a document's chunks are embedded first and
upserted together, then its stale chunk ids are deleted, so an embedding
failure never leaves a half-replaced document behind.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from core.errors import IngestSourceError, ProviderResponseError
from core.ingest.checks import check_chunks
from core.ingest.chunking import DEFAULT_TITLE_REPEAT, chunk_document, embedding_text
from core.ingest.loaders import is_supported, load_file
from core.models import DocumentChunk, EmbeddingResponse, IngestSummary
from core.protocols import DocumentState, Embedder, VectorStore
from core.retrieval.lexicon import LexiconFile

log = logging.getLogger(__name__)

#: Folders never walked: build output, dependencies, and hidden folders (.git, .docusaurus ...).
SKIPPED_DIRS = frozenset({"node_modules", "build", "__pycache__", "site-packages"})


def show_progress(progress: bool | None) -> bool:
    """Whether to draw a progress bar: as asked, or when stderr is a terminal."""
    if progress is None:
        return sys.stderr.isatty()
    return progress


def is_remote(source_document: str) -> bool:
    """True for documents stored under a URL (sitemap pages) rather than a relative path."""
    return source_document.startswith(("http://", "https://"))


def walk_files(root: Path) -> tuple[list[Path], list[Path]]:
    """List a folder's files recursively, sorted, skipping hidden and build folders.

    Returns:
        (supported files, unsupported files such as ``_category_.json`` or images).
    """
    supported: list[Path] = []
    unsupported: list[Path] = []
    for folder, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in SKIPPED_DIRS)
        for name in sorted(filenames):
            if name.startswith("."):
                continue
            path = Path(folder) / name
            (supported if is_supported(path) else unsupported).append(path)
    return supported, unsupported


async def ingest_path(
    path: Path,
    *,
    store: VectorStore,
    embedder: Embedder,
    collection: str,
    base_url: str | None = None,
    progress: bool | None = None,
    batch_size: int = 64,
    title_repeat: int = DEFAULT_TITLE_REPEAT,
    root: Path | None = None,
    lexicon: LexiconFile | None = None,
) -> IngestSummary:
    """Make ``collection`` mirror the docs under ``path`` (a folder, or one file).

    Args:
        path: the docs folder (or a single file, which then updates that file only).
        store: where chunks go.
        embedder: turns chunk texts into vectors; the collection remembers its model.
        collection: the collection name.
        base_url: the published docs' base URL, for Docusaurus-style links; None gives file:// links.
        progress: draw a tqdm bar on stderr; None draws one when stderr is a terminal.
        batch_size: texts per ``embed_documents`` call.
        title_repeat: title weighting of the embedded text (``Settings.title_repeat``).
        root: for a single file, the folder its name is relative to (the collection's
            recorded root, so it replaces its own stored copy); default: the file's folder.
        lexicon: the collection's vocabulary file, kept in step with the documents.

    Returns:
        What was added, updated, removed and skipped; ``files_failed`` lists unreadable files.

    Raises:
        IngestSourceError: ``path`` does not exist, or ``base_url`` is not an http(s) URL.
        StoreError, ProviderError: the store or the embedder failed (the run stops).
    """
    started = time.perf_counter()
    if not path.exists():
        raise IngestSourceError(f"cannot ingest {str(path)!r}: no such file or folder")
    if base_url is not None and not base_url.startswith(("http://", "https://")):
        raise IngestSourceError(f"base URL {base_url!r} is not an http:// or https:// URL")
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    if path.is_dir():
        root, single = path, False
        files, unsupported = walk_files(root)
    else:
        root, single = (root or path.parent), True
        if not path.resolve().is_relative_to(root.resolve()):
            raise IngestSourceError(f"{str(path)!r} is not inside {str(root)!r}")
        files, unsupported = ([path], []) if is_supported(path) else ([], [path])
    for skipped in unsupported:
        log.info("skipping %s: unsupported file type", skipped.relative_to(root).as_posix())

    await store.ensure_collection(collection, model_id=embedder.model_id, dimension=embedder.dimension)
    stored = await store.documents(collection)
    summary = IngestSummary(files=len(files))
    sync = DocumentSync(
        store=store, embedder=embedder, collection=collection, stored=stored,
        summary=summary, batch_size=batch_size, title_repeat=title_repeat, lexicon=lexicon,
    )
    seen: set[str] = set()
    with tqdm(total=len(files), unit="file", desc="ingest", file=sys.stderr,
              disable=not show_progress(progress)) as bar:
        for file in files:
            relative = file.relative_to(root).as_posix()
            seen.add(relative)
            try:
                chunks = await asyncio.to_thread(_load_and_chunk, file, root, base_url, title_repeat)
            except Exception as exc:
                # One bad file must not stop the run; its stored chunks stay as they were.
                log.warning("skipping %s: %s", relative, exc, exc_info=not isinstance(exc, IngestSourceError))
                summary.files_failed.append(f"{relative}: {_reason(exc, file)}")
            else:
                await sync.document(relative, chunks)
            bar.update(1)
    if not single:
        gone = [doc for doc in stored if not is_remote(doc) and doc not in seen]
        await sync.remove_documents(gone)
    await sync.finish()
    summary.seconds = time.perf_counter() - started
    return summary


def claim_root(state_path: Path, collection: str, source: Path, *, replace: bool = False) -> Path | None:
    """Record the folder ``collection`` mirrors, and return the root to ingest ``source`` under.

    Args:
        state_path: JSON file mapping collection names to their folders.
        collection: the collection ingested into.
        source: the folder or file given to ``ragbot ingest``.
        replace: let a different folder take over the collection (its documents replace the
            previous folder's).

    Returns:
        The recorded root for a single file inside it (None when none is recorded yet).

    Raises:
        IngestSourceError: ``source`` is another folder than the recorded one (without
            ``replace``), or a single file outside it.
    """
    import json

    source = source.resolve()
    roots: dict[str, str] = json.loads(state_path.read_text("utf-8")) if state_path.exists() else {}
    recorded = Path(roots[collection]) if collection in roots else None
    if source.is_file():
        if recorded is not None and not source.is_relative_to(recorded):
            raise IngestSourceError(
                f"{str(source)!r} is outside {str(recorded)!r}, the folder collection {collection!r} "
                "mirrors: ingest that folder, or use another --collection"
            )
        return recorded
    if recorded is not None and recorded != source and not replace:
        raise IngestSourceError(
            f"collection {collection!r} mirrors {str(recorded)!r}; ingesting {str(source)!r} would "
            "remove its documents. Use --collection NAME for a second knowledge base, or --replace"
        )
    roots[collection] = str(source)
    state_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = state_path.with_suffix(".tmp")
    tmp.write_text(json.dumps(roots, indent=1), "utf-8")
    tmp.replace(state_path)
    return None


def _load_and_chunk(path: Path, root: Path, base_url: str | None, title_repeat: int) -> list[DocumentChunk]:
    return chunk_document(load_file(path, root=root, base_url=base_url), title_repeat=title_repeat)


def _reason(exc: Exception, path: Path) -> str:
    # IngestSourceError messages start with the path already; keep only what went wrong.
    text = str(exc) or type(exc).__name__
    prefix = f"{path}: "
    return text[len(prefix) :] if text.startswith(prefix) else text


@dataclass(slots=True)
class _PendingDocument:
    chunks: int
    stale_ids: list[str]


class DocumentSync:
    """Applies per-document chunk sets to a collection, writing only what changed.

    Feed each document's fresh chunks to ``document``; chunks are embedded in
    batches of ``batch_size`` and a document is written once all of its chunks
    are embedded. Call ``finish`` at the end to write what is left.
    """

    def __init__(
        self,
        *,
        store: VectorStore,
        embedder: Embedder,
        collection: str,
        stored: dict[str, DocumentState],
        summary: IngestSummary,
        batch_size: int = 64,
        title_repeat: int = DEFAULT_TITLE_REPEAT,
        lexicon: LexiconFile | None = None,
    ) -> None:
        self.store = store
        self.lexicon = lexicon
        self.title_repeat = title_repeat
        self.embedder = embedder
        self.collection = collection
        self.stored = stored
        self.summary = summary
        self.batch_size = batch_size
        self._queue: list[DocumentChunk] = []
        self._embedded: list[tuple[DocumentChunk, EmbeddingResponse]] = []
        self._documents: list[_PendingDocument] = []

    def unchanged(self, source_document: str, chunks: Sequence[DocumentChunk]) -> bool:
        """True when the store already holds exactly these chunks (same hash, same ids)."""
        state = self.stored.get(source_document)
        return (
            state is not None
            and bool(chunks)
            and state.content_hash == chunks[0].content_hash
            and state.chunk_ids == frozenset(c.chunk_id for c in chunks)
        )

    def skip(self, source_document: str) -> None:
        """Count a document known to be unchanged without looking at its chunks."""
        state = self.stored.get(source_document)
        if state is not None:
            self.summary.chunks_skipped += len(state.chunk_ids)

    async def document(self, source_document: str, chunks: Sequence[DocumentChunk]) -> None:
        """Queue one document's current chunks; unchanged documents cost nothing.

        Chunks breaking a chunk rule are repaired or skipped first (``core.ingest.checks``).
        """
        checked = check_chunks(chunks)
        self.summary.chunks_invalid.extend(checked.invalid)
        self.summary.chunks_repaired += checked.repaired
        chunks = checked.chunks
        lexicon = self.lexicon
        if lexicon is not None and chunks and not lexicon.has(source_document, chunks[0].content_hash):
            lexicon.put(source_document, chunks[0].content_hash,
                             [f"{c.title} {c.section} {c.content}" for c in chunks])
        if self.unchanged(source_document, chunks):
            self.summary.chunks_skipped += len(chunks)
            return
        state = self.stored.get(source_document)
        old = state.chunk_ids if state else frozenset()
        new = {c.chunk_id for c in chunks}
        self.summary.chunks_updated += len(new & old)
        self.summary.chunks_added += len(new - old)
        self.summary.chunks_removed += len(old - new)
        self._queue.extend(chunks)
        self._documents.append(_PendingDocument(len(chunks), sorted(old - new)))
        await self._drain(final=False)

    async def remove_documents(self, source_documents: Iterable[str]) -> None:
        """Queue the removal of every chunk of documents that no longer exist."""
        source_documents = list(source_documents)
        if self.lexicon is not None:
            self.lexicon.drop(source_documents)
        for name in source_documents:
            state = self.stored.get(name)
            if state is None or not state.chunk_ids:
                continue
            self.summary.chunks_removed += len(state.chunk_ids)
            self._documents.append(_PendingDocument(0, sorted(state.chunk_ids)))
        await self._drain(final=False)

    async def finish(self) -> None:
        """Embed and write everything still queued, then the vocabulary."""
        await self._drain(final=True)
        if self.lexicon is not None:
            self.lexicon.save()

    async def _drain(self, *, final: bool) -> None:
        while len(self._queue) >= self.batch_size or (final and self._queue):
            batch = self._queue[: self.batch_size]
            del self._queue[: self.batch_size]
            texts = [embedding_text(c, title_repeat=self.title_repeat) for c in batch]
            vectors = await self.embedder.embed_documents(texts)
            if len(vectors) != len(batch):
                raise ProviderResponseError(
                    f"asked for {len(batch)} embeddings, got {len(vectors)}", provider=self.embedder.model_id
                )
            self._embedded.extend(zip(batch, vectors, strict=True))
        await self._write_complete()

    async def _write_complete(self) -> None:
        chunks: list[DocumentChunk] = []
        vectors: list[EmbeddingResponse] = []
        stale: list[str] = []
        taken = 0
        while self._documents and self._documents[0].chunks <= len(self._embedded) - taken:
            pending = self._documents.pop(0)
            for chunk, vector in self._embedded[taken : taken + pending.chunks]:
                chunks.append(chunk)
                vectors.append(vector)
            taken += pending.chunks
            stale.extend(pending.stale_ids)
        del self._embedded[:taken]
        if chunks:
            await self.store.upsert(self.collection, chunks, vectors)
        if stale:
            await self.store.delete(self.collection, stale)
