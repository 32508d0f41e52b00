"""Incremental ingestion of a docs folder into a vector store collection.

One collection is one knowledge base. ``ingest_path`` makes the collection
mirror a folder: new files are added, changed files have exactly their chunks
replaced, unchanged files are not touched (no embedding, no write), and files
gone from the folder have their chunks removed. ``DocumentChunk`` cannot record
which root a document came from, so the mirror is scoped by kind instead: a
folder ingest owns every document stored under a relative path, and leaves
alone documents stored under an ``http(s)://`` URL (those belong to sitemap
ingestion, ``core.ingest.sitemap``). So that a second folder never silently replaces
the first, ``core.ingest.options.RootClaim`` records which folder each collection
mirrors and refuses another one unless asked to replace it. Ingesting a single file
updates that file only, named relative to the recorded folder.

Only regular files inside the folder are read (``core.ingest.walk``). A folder with
nothing to read is an error that names what it held, and changes nothing. A run that
would remove more than half of the collection, or all of it, is refused unless
``IngestOptions.prune``; ``IngestOptions.dry_run`` only reports what would change.

Writes are grouped per document: a document's chunks are embedded first and
upserted together, then its stale chunk ids are deleted, so an embedding
failure never leaves a half-replaced document behind. Embedding batches are
bounded in characters as well as in count, so one huge file cannot take
gigabytes at once (``bench/ingest_memory.py``).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import sys
import time
from array import array
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from core.errors import EmbeddingModelMismatchError, IngestSourceError, ProviderResponseError
from core.ingest.checks import check_chunks
from core.ingest.chunking import DEFAULT_TITLE_REPEAT, chunk_document, embedding_text
from core.ingest.loaders import MAX_FILE_BYTES, TEXT_SUFFIXES, is_supported, load_file, read_regular_file
from core.ingest.options import IngestOptions, check_removal
from core.ingest.sphinx_targets import SphinxTargets, sphinx_targets
from core.ingest.toc import book_titles
from core.ingest.urls import is_route_page, served_parts
from core.ingest.walk import IGNORE_FILES, FolderScan, describe_left_out, file_kind, name_some, scan_folder
from core.models import DocumentChunk, EmbeddingResponse, IngestSummary, SparseVector
from core.protocols import DocumentState, Embedder, VectorStore
from core.retrieval.lexicon import LexiconFile

log = logging.getLogger(__name__)

#: Padded characters per embedding call. A local model pads a batch to its longest text, so
#: 64 code blocks of 50,000 characters took 2 GB in one call; this keeps a call near 100 MB.
MAX_BATCH_CHARS = 200_000
#: Chunks per ``upsert`` call.
WRITE_BATCH = 512

def show_progress(progress: bool | None) -> bool:
    """Whether to draw a progress bar: as asked, or when stderr is a terminal."""
    if progress is None:
        return sys.stderr.isatty()
    return progress


def is_remote(source_document: str) -> bool:
    """True for documents stored under a URL (sitemap pages) rather than a relative path."""
    return source_document.startswith(("http://", "https://"))


def walk_files(root: Path) -> tuple[list[Path], list[Path]]:
    """A folder's regular files recursively, sorted, skipping hidden and build folders and links.

    Returns:
        (supported files, unsupported files such as ``_category_.json`` or images).
    """
    scan = scan_folder(root)
    return scan.files, scan.unsupported


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
    options: IngestOptions | None = None,
) -> IngestSummary:
    """Make ``collection`` mirror the docs under ``path`` (a folder, or one file).

    Args:
        path: the docs folder (or a single file, which then updates that file only).
        store: where chunks go.
        embedder: turns chunk texts into vectors; the collection remembers its model.
        collection: the collection name.
        base_url: the published docs' base URL, for Docusaurus-style links; None gives file:// links.
        progress: draw a tqdm bar on stderr; None draws one when stderr is a terminal.
        batch_size: texts per ``embed_documents`` call (fewer when the texts are long).
        title_repeat: title weighting of the embedded text (``Settings.title_repeat``).
        root: for a single file, the folder its name is relative to (the collection's
            recorded root, so it replaces its own stored copy); default: the file's folder.
        lexicon: the collection's vocabulary file, kept in step with the documents.
        options: follow links, allow a large removal, or only report (``IngestOptions``).

    Returns:
        What was added, updated, removed and skipped; ``files_failed`` lists unreadable files,
        ``files_skipped`` links and special files left out, ``changes`` a dry run's plan.

    Raises:
        IngestSourceError: ``path`` does not exist, holds nothing to ingest (the message names
            what was found instead), or ``base_url`` is not an http(s) URL.
        IngestRefusedError: the run would remove more than half of the collection without ``prune``.
        StoreError, ProviderError: the store or the embedder failed (the run stops).
    """
    started = time.perf_counter()
    options = options or IngestOptions()
    _check_arguments(path, base_url, batch_size)
    single = not path.is_dir()
    if single:  # its folder resolved, its own name kept: resolving that would follow a link
        path = path.parent.resolve() / path.name
    root = (root or path.parent) if single else path
    scan = (_single_file(path, root, options) if single
            else scan_folder(root, follow_symlinks=options.follow_symlinks))
    stored = await stored_documents(store, embedder, collection)
    names = {file.relative_to(root).as_posix() for file in scan.files}
    gone = [] if single else [doc for doc in stored if not is_remote(doc) and doc not in names]
    if not scan.files and not (options.prune and gone):
        raise IngestSourceError(scan.nothing_to_ingest(root))
    summary = IngestSummary(files=len(scan.files), dry_run=options.dry_run,
                            files_skipped=[item.line() for item in scan.skipped],
                            notices=_notices(root, scan, base_url))
    check_removal(stored, gone, collection=collection, prune=options.prune, summary=summary)
    if not options.dry_run:
        await store.ensure_collection(collection, model_id=embedder.model_id, dimension=embedder.dimension)
    sync = DocumentSync(
        store=store, embedder=embedder, collection=collection, stored=stored,
        summary=summary, batch_size=batch_size, title_repeat=title_repeat,
        lexicon=None if options.dry_run else lexicon, dry_run=options.dry_run,
    )
    read = functools.partial(read_regular_file, root=root, follow_symlinks=options.follow_symlinks)
    loader = functools.partial(_load_and_chunk, root=root, base_url=base_url, title_repeat=title_repeat,
                               follow_symlinks=options.follow_symlinks, titles=book_titles(root, read),
                               targets=sphinx_targets(root, scan.files, read))
    await _sync_files(scan.files, root, sync, loader, progress)
    await sync.remove_documents(gone)
    await sync.finish()
    summary.seconds = time.perf_counter() - started
    return summary


def _notices(root: Path, scan: FolderScan, base_url: str | None) -> list[str]:
    """What the operator may want to change: the pages' addresses, a ``build`` folder left out."""
    built = [f"{folder} is a build folder, not read (ingest it on its own to read it)"
             for folder in scan.build_folders]
    ignored = [f"{len(scan.ignored)} left out as {' or '.join(IGNORE_FILES)} says: "
               f"{name_some(scan.ignored, shown=NAMED_IN_NOTES)}"] if scan.ignored else []
    return [*_address_notices(root, scan.files, base_url), *built, *ignored]


def _address_notices(root: Path, files: list[Path], base_url: str | None) -> list[str]:
    """A notice when every page sits in one folder whose name the pages' addresses will carry.

    A repository's ``docs/`` ingested from the repository's root gives ``{base}/docs/guide``
    where the site (MkDocs' ``docs_dir``) serves ``{base}/guide``.
    """
    # The parts its address carries: Next.js' ``app/docs/page.mdx`` is served at ``docs``.
    pages = [served_parts(file.relative_to(root).as_posix(), route=is_route_page(file.resolve()))
             for file in files if file.suffix.lower() not in TEXT_SUFFIXES]
    if base_url is None or not pages:
        return []  # a plain text file (SOURCE.txt, NOTES.txt) beside the folder is no page of the site
    tops = {parts[0] if parts else "" for parts in pages}
    folder = tops.pop() if len(tops) == 1 else ""
    if not folder or all(len(parts) <= 1 for parts in pages) or not (root / folder).is_dir():
        return []  # ... nor a folder to ingest instead (a route: ``app/docs/page.mdx``)
    return [f"every page is under {folder}/, so their links read {base_url.rstrip('/')}/{folder}/...; "
            f"if the site serves {folder}/ at {base_url}, ingest {root / folder} instead"]


def _check_arguments(path: Path, base_url: str | None, batch_size: int) -> None:
    if not path.exists() and not path.is_symlink():
        raise IngestSourceError(f"cannot ingest {str(path)!r}: no such file or folder")
    if base_url is not None and not base_url.startswith(("http://", "https://")):
        raise IngestSourceError(f"base URL {base_url!r} is not an http:// or https:// URL")
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")


def _single_file(path: Path, root: Path, options: IngestOptions) -> FolderScan:
    """The one file of a single-file ingest, if it may be read.

    Raises:
        IngestSourceError: it is a link (without ``follow_symlinks``), a FIFO or device, outside
            ``root``, of an unsupported type or too large.
    """
    if path.is_symlink() and not options.follow_symlinks:
        raise IngestSourceError(f"{path}: is a symbolic link; ragbot does not follow links unless "
                                "asked to (--follow-symlinks)")
    if not path.exists():
        raise IngestSourceError(f"{path}: symbolic link to nothing")
    info = path.stat()
    kind = file_kind(info.st_mode)
    if kind is not None:
        raise IngestSourceError(f"{path}: is a {kind}, not a regular file; nothing was read")
    real = path.resolve()
    if not real.is_relative_to(root.resolve()):
        where = f"resolves to {str(real)!r}, which is" if real != path else "is"
        raise IngestSourceError(f"{str(path)!r} {where} not inside {str(root)!r}; nothing was read")
    if not is_supported(path):
        raise IngestSourceError(f"cannot ingest {str(path)!r}: {describe_left_out([path], [])}")
    if info.st_size > MAX_FILE_BYTES:
        raise IngestSourceError(f"{path}: larger than {MAX_FILE_BYTES // (1024 * 1024)} MB, not read")
    return FolderScan(files=[path])


async def stored_documents(
    store: VectorStore, embedder: Embedder, collection: str
) -> dict[str, DocumentState]:
    """What the collection holds, without creating it; {} when it does not exist yet.

    Raises:
        EmbeddingModelMismatchError: the collection was built with another model.
    """
    info = await store.collection_info(collection)
    if info is None:
        return {}
    if (info.model_id, info.dimension) != (embedder.model_id, embedder.dimension):
        raise EmbeddingModelMismatchError(
            collection=collection, stored_model=info.model_id, stored_dim=info.dimension,
            model=embedder.model_id, dim=embedder.dimension,
        )
    return await store.documents(collection)


async def _sync_files(
    files: list[Path], root: Path, sync: DocumentSync,
    loader: Callable[[Path], list[DocumentChunk]], progress: bool | None,
) -> None:
    """Load, chunk and hand over each file; one bad file is reported and keeps its stored chunks."""
    with tqdm(total=len(files), unit="file", desc="ingest", file=sys.stderr,
              disable=not show_progress(progress)) as bar:
        for file in files:
            relative = file.relative_to(root).as_posix()
            try:
                chunks = await asyncio.to_thread(loader, file)
            except Exception as exc:
                log.warning("skipping %s: %s", relative, exc, exc_info=not isinstance(exc, IngestSourceError))
                sync.summary.files_failed.append(f"{relative}: {_reason(exc, file)}")
            else:
                await sync.document(relative, chunks)
            bar.update(1)


def _load_and_chunk(
    path: Path, *, root: Path, base_url: str | None, title_repeat: int, follow_symlinks: bool,
    titles: Mapping[str, str], targets: SphinxTargets,
) -> list[DocumentChunk]:
    document = load_file(path, root=root, base_url=base_url, follow_symlinks=follow_symlinks, titles=titles,
                         targets=targets)
    return chunk_document(document, title_repeat=title_repeat)


def _reason(exc: Exception, path: Path) -> str:
    # IngestSourceError messages start with the path already; keep only what went wrong.
    text = str(exc) or type(exc).__name__
    prefix = f"{path}: "
    return text[len(prefix) :] if text.startswith(prefix) else text


@dataclass(slots=True)
class _PendingDocument:
    chunks: int
    stale_ids: list[str]


@dataclass(frozen=True, slots=True)
class _Packed:
    """An embedding held until its document is written, in arrays (a float list costs 4x more)."""

    dense: array[float]
    indices: array[int] | None
    values: array[float] | None
    model_used: str

    @classmethod
    def of(cls, emb: EmbeddingResponse) -> _Packed:
        sparse = emb.sparse_vector
        return cls(array("d", emb.embedding_vector), None if sparse is None else array("q", sparse.indices),
                   None if sparse is None else array("d", sparse.values), emb.model_used)

    def unpack(self) -> EmbeddingResponse:
        sparse = None
        if self.indices is not None and self.values is not None:
            sparse = SparseVector.model_construct(indices=self.indices.tolist(), values=self.values.tolist())
        return EmbeddingResponse.model_construct(embedding_vector=self.dense.tolist(), sparse_vector=sparse,
                                                 model_used=self.model_used, execution_time=0.0)


#: How many files an ingest note names (holding no text, left out by an ignore file); the rest are counted.
NAMED_IN_NOTES = 5


class DocumentSync:
    """Applies per-document chunk sets to a collection, writing only what changed.

    Feed each document's fresh chunks to ``document``; chunks are embedded in
    batches of ``batch_size`` (fewer when they are long: ``MAX_BATCH_CHARS``) and a
    document is written once all of its chunks are embedded. Call ``finish`` at the
    end to write what is left. With ``dry_run`` nothing is embedded or written: the
    summary counts what would be, and ``summary.changes`` names each document.
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
        dry_run: bool = False,
    ) -> None:
        self.store = store
        self.dry_run = dry_run
        self.lexicon = lexicon
        self.title_repeat = title_repeat
        self.embedder = embedder
        self.collection = collection
        self.stored = stored
        self.summary = summary
        self.batch_size = batch_size
        self._queue: list[DocumentChunk] = []
        self._embedded: list[tuple[DocumentChunk, _Packed]] = []
        self._documents: list[_PendingDocument] = []
        #: Leading entries of ``_embedded`` whose documents are complete, and their stale ids.
        self._ready = 0
        self._stale: list[str] = []
        #: Documents read to no text at all: said once at the end, not left out without a word.
        self._textless: list[str] = []

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
        if not chunks:
            self._textless.append(source_document)
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
        if self.dry_run:
            verb = "update" if state else "add"
            self.summary.changes.append(f"{verb} {source_document} ({len(new)} chunks)")
            return
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
            if self.dry_run:
                self.summary.changes.append(f"remove {name} ({len(state.chunk_ids)} chunks)")
                continue
            self._documents.append(_PendingDocument(0, sorted(state.chunk_ids)))
        await self._drain(final=False)

    async def finish(self) -> None:
        """Embed and write everything still queued, then the vocabulary; name files with no text."""
        await self._drain(final=True)
        if self.lexicon is not None:
            self.lexicon.save()
        if self._textless:
            self.summary.notices.append(
                f"{len(self._textless)} file(s) hold no text to answer from (an empty page, a redirect stub, "
                f"a generator's index or code listing, a site's template): "
                f"{name_some(self._textless, shown=NAMED_IN_NOTES)}")

    def _next_batch(self) -> tuple[list[DocumentChunk], list[str]]:
        """Up to ``batch_size`` queued chunks whose padded size stays within ``MAX_BATCH_CHARS``."""
        batch: list[DocumentChunk] = []
        texts: list[str] = []
        longest = 0
        for chunk in self._queue[: self.batch_size]:
            text = embedding_text(chunk, title_repeat=self.title_repeat)
            if batch and max(longest, len(text)) * (len(batch) + 1) > MAX_BATCH_CHARS:
                break
            batch.append(chunk)
            texts.append(text)
            longest = max(longest, len(text))
        del self._queue[: len(batch)]
        return batch, texts

    async def _drain(self, *, final: bool) -> None:
        while len(self._queue) >= self.batch_size or (final and self._queue):
            batch, texts = self._next_batch()
            try:
                vectors = await self.embedder.embed_documents(texts)
            except Exception:
                await self._save_before_failing()
                raise
            if len(vectors) != len(batch):
                raise ProviderResponseError(
                    f"asked for {len(batch)} embeddings, got {len(vectors)}", provider=self.embedder.model_id
                )
            self._embedded.extend((c, _Packed.of(v)) for c, v in zip(batch, vectors, strict=True))
        await self._write_complete(final=final)

    async def _save_before_failing(self) -> None:
        """Write the documents already complete, so the next run starts after them."""
        try:
            await self._write_complete(final=True)
        except Exception as exc:  # the embedding failure is the error to report
            log.warning("could not save the documents embedded before the failure: %s", exc)

    async def _write_complete(self, *, final: bool) -> None:
        """Write the documents whose chunks are all embedded, once ``WRITE_BATCH`` of them are ready.

        Fewer, larger writes: the store flushes each one to disk before it returns.
        """
        while self._documents and self._documents[0].chunks <= len(self._embedded) - self._ready:
            pending = self._documents.pop(0)
            self._ready += pending.chunks
            self._stale.extend(pending.stale_ids)
        if not final and self._ready < WRITE_BATCH and len(self._stale) < WRITE_BATCH:
            return
        done, self._embedded = self._embedded[: self._ready], self._embedded[self._ready :]
        stale, self._stale, self._ready = self._stale, [], 0
        # In slices: a document of 30,000 chunks must not become 30,000 points in memory at once.
        for start in range(0, len(done), WRITE_BATCH):
            part = done[start : start + WRITE_BATCH]
            await self.store.upsert(self.collection, [c for c, _ in part], [v.unpack() for _, v in part])
        if stale:
            await self.store.delete(self.collection, stale)
