"""The composition root: build the real core from Settings.

The only place that picks implementations and imports ``storage``; everything it opens
is closed through one ``contextlib.AsyncExitStack``, registered the moment it is
opened, so a wiring step that fails closes what the earlier steps opened.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import getpass
import os
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from bots.chat.ratelimit import RateLimiter
from bots.chat.services import Services
from core.answer.generators.extractive import ExtractiveGenerator
from core.answer.pipeline import RagPipeline
from core.embedders.local import LocalEmbedder
from core.models import AgentLogEntry, EventType, IngestSummary
from core.private import private_dir
from core.protocols import ActivityLog, Embedder, FeedbackStore, Generator, Reranker, VectorStore
from core.retrieval.lexicon import LexiconCaches, LexiconFile
from core.settings import Settings
from storage.export import export_bundle, export_log, parse_when
from storage.sqlite import SqliteStore

if TYPE_CHECKING:
    from bots.chat.export import ExportBundle, ExportFormat
    from core.ingest.options import IngestOptions


@dataclass(kw_only=True)
class Runtime:
    """The opened core: what ``ragbot serve`` and the CLI hold for their lifetime."""

    settings: Settings
    services: Services
    store: VectorStore
    embedder: Embedder
    pipeline: RagPipeline
    database: SqliteStore

    async def prune_events(self, *, before: datetime) -> int:
        """Forget platform delivery ids seen before ``before``; return how many went."""
        return await self.database.prune_events(before=before)

    async def aclose(self) -> None:
        """Close everything the runtime opened (flushes the embedded engine)."""
        await self.services.aclose()


class StorageExports:
    """The adapters' ``ExportSource``: ``storage/export.py`` over the given log and votes."""

    def __init__(self, *, log: ActivityLog, feedback: FeedbackStore) -> None:
        self.log = log
        self.feedback = feedback

    def parse_when(self, text: str) -> datetime:
        """``storage.export.parse_when`` (dates, ISO datetimes, ages like ``7d``)."""
        return parse_when(text)

    async def bundle(self, *, fmt: ExportFormat, since: datetime | None) -> ExportBundle:
        """``storage.export.export_bundle`` over this log and these votes."""
        return await export_bundle(self.log, self.feedback, fmt=fmt, since=since)


def open_store(settings: Settings) -> VectorStore:
    """The vector store the settings ask for: a Qdrant server when QDRANT_URL is set."""
    if settings.qdrant_url:
        from core.stores.qdrant_server import QdrantServerStore

        return QdrantServerStore.from_settings(settings)
    from core.stores.qdrant_embedded import EdgeVectorStore

    return EdgeVectorStore(root=settings.store_dir)


def build_embedder(settings: Settings, local: LocalEmbedder, stack: contextlib.AsyncExitStack) -> Embedder:
    """Cohere embeddings when COHERE_API_KEY is set (keeping local BM25 for hybrid), else local."""
    if settings.cohere_api_key is None:
        return local
    from core.embedders.cohere import CohereEmbedder

    embedder = CohereEmbedder.from_settings(
        settings, sparse_query=local.sparse_query, sparse_document=local.sparse_document
    )
    stack.push_async_callback(embedder.aclose)  # an HTTP connection pool
    return embedder


def build_reranker(settings: Settings, stack: contextlib.AsyncExitStack) -> Reranker | None:
    """Cohere rerank when COHERE_API_KEY is set."""
    if settings.cohere_api_key is None:
        return None
    from core.retrieval.rerankers import CohereReranker

    reranker = CohereReranker.from_settings(settings)
    stack.push_async_callback(reranker.aclose)
    return reranker


def build_generator(settings: Settings, fallback: Generator, stack: contextlib.AsyncExitStack) -> Generator:
    """Gemini when GEMINI_API_KEY/GOOGLE_API_KEY is set, else the extractive answerer."""
    if settings.gemini_api_key is None:
        return fallback
    from core.answer.generators.gemini import GeminiGenerator

    generator = GeminiGenerator.from_settings(settings)
    stack.push_async_callback(generator.aclose)
    return generator


async def build_runtime(settings: Settings, *, recover: bool = True, **overrides: Any) -> Runtime:
    """Open SQLite and the vector store, recover from a crash, and assemble the pipeline.

    Args:
        settings: the configuration.
        recover: mark queries left PROCESSING as FAILED. Only the process that owns the data
            folder may do this: the CLI builds a runtime only when no ``ragbot serve`` answers
            on the control socket, and ``serve`` refuses to start beside another one.
        overrides: replace a built part (``store=``, ``embedder=``, ``generator=``), for tests;
            the runtime closes them too.
    """
    private_dir(settings.data_dir)
    stack = contextlib.AsyncExitStack()
    try:
        return await _wire(settings, stack, recover=recover, overrides=overrides)
    except BaseException:
        await stack.aclose()
        raise


async def _wire(
    settings: Settings, stack: contextlib.AsyncExitStack, *, recover: bool, overrides: dict[str, Any]
) -> Runtime:
    db = await SqliteStore.open(settings.sqlite_path)
    stack.push_async_callback(db.close)
    if recover:
        await db.fail_interrupted()
    local = LocalEmbedder()
    store: VectorStore = overrides.get("store") or open_store(settings)
    stack.push_async_callback(store.close)
    embedder: Embedder = overrides.get("embedder") or build_embedder(settings, local, stack)
    extractive = ExtractiveGenerator(max_sources=settings.answer_sources, cosines=local.cosines)
    generator: Generator = overrides.get("generator") or build_generator(settings, extractive, stack)
    pipeline = RagPipeline(
        settings=settings, embedder=embedder, store=store, generator=generator,
        fallback=extractive, conversations=db, queries=db, activity=db,
        terms=local.terms,
        similarity=local.similarity, reranker=build_reranker(settings, stack),
        cosine=None if embedder is local else local.cosines,
        lexicon=LexiconCaches(folder=settings.data_dir).get,
    )
    services = Services(
        settings=settings, answers=pipeline, conversations=db, queries=db, activity=db,
        feedback=db, events=db, rate_limiter=RateLimiter(limit=settings.rate_limit_per_minute),
        exports=StorageExports(log=db, feedback=db), resources=stack,
    )
    return Runtime(settings=settings, services=services, store=store, embedder=embedder,
                   pipeline=pipeline, database=db)


async def export_activity_log(settings: Settings, out: TextIO, **filters: Any) -> int:
    """Stream the activity log to ``out`` without opening models or the vector store.

    ``ragbot logs export`` uses it; ``filters`` are ``storage.export.export_log``'s (fmt, since ...).
    The export then writes its own ``admin_export`` entry, as the chat exports do.
    """
    db = await SqliteStore.open(settings.sqlite_path)
    try:
        started = time.perf_counter()
        count = await export_log(db, out, **filters)
        shown = ", ".join(f"{k} {v.isoformat() if isinstance(v, datetime) else v}"
                          for k, v in filters.items() if v is not None and k != "fmt")
        await db.log(AgentLogEntry(
            event_type=EventType.ADMIN_EXPORT, execution_time=time.perf_counter() - started,
            response_summary=(f"cli: user {_local_user()} exported {count} log entries as "
                              f"{filters.get('fmt', 'jsonl')} ({shown or 'everything'})")))
        return count
    finally:
        await db.close()


def _local_user() -> str:
    """Who ran the command, as the operating system names them."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (some containers)
        return f"uid {os.getuid()}"


async def ingest(
    runtime: Runtime,
    source: str,
    *,
    collection: str | None = None,
    base_url: str | None = None,
    replace: bool = False,
    progress: bool | None = None,
    options: IngestOptions | None = None,
) -> IngestSummary:
    """Ingest a folder, file or sitemap URL with the runtime's store and embedder.

    Used by ``ragbot ingest`` and by a running ``ragbot serve`` the CLI hands the work to.
    The folder is recorded as the collection's only after a run that read a file;
    ``replace`` lets the previous folder's documents go (it implies ``options.prune``).

    Raises:
        IngestSourceError: missing path, nothing to ingest, or a folder other than the one
            the collection mirrors.
        IngestRefusedError: the run would remove most of the collection without ``prune``.
    """
    from core.ingest.options import IngestOptions, RootClaim
    from core.ingest.sitemap import ingest_source

    settings = runtime.settings
    collection = collection or settings.collection
    options = options or IngestOptions()
    if replace and not options.prune:
        options = dataclasses.replace(options, prune=True)
    claim = None
    try:
        if not source.startswith(("http://", "https://")):
            claim = RootClaim(settings.data_dir / "ingest-roots.json", collection, Path(source),
                              replace=replace)
        instructions = await check_instructions(source, root=claim.root if claim else None,
                                                strict=options.strict)
        summary = await ingest_source(
            source, store=runtime.store, embedder=runtime.embedder, collection=collection,
            base_url=base_url, progress=progress, title_repeat=settings.title_repeat,
            root=claim.root if claim else None, options=options,
            state_path=settings.data_dir / f"sitemap-{collection}.json",
            lexicon=LexiconFile(path=LexiconCaches(folder=settings.data_dir).path(collection)),
        )
        summary.instructions = instructions
        if claim is not None:
            claim.record(summary)
    except Exception as exc:
        # Best effort while already failing: the ingest's own error must reach the user.
        with contextlib.suppress(Exception):
            await record_ingest(runtime.services.activity, source=source, collection=collection, error=exc)
        raise
    await record_ingest(runtime.services.activity, source=source, collection=collection, summary=summary)
    return summary


async def record_ingest(
    activity: ActivityLog, *, source: str, collection: str, summary: IngestSummary | None = None,
    error: Exception | None = None,
) -> None:
    """Write an ingest run to the activity log: ``ingest_completed`` with its counts, or an ``error``.

    ``ragbot doctor`` and ``ragbot stats`` read it to say when the docs were last synced.
    """
    if summary is not None:
        await activity.log(AgentLogEntry(
            event_type=EventType.INGEST_COMPLETED, execution_time=summary.seconds,
            response_summary=f"{source} -> {collection}: {summary.line()}"))
        return
    await activity.log(AgentLogEntry(
        event_type=EventType.ERROR, error_details=f"ingest of {source} into {collection} failed: {error}"))


async def check_instructions(source: str, *, root: Path | None, strict: bool) -> list[str]:
    """Pages of a local ``source`` that look like instructions to an assistant (``--strict``: refuse).

    Raises:
        IngestSourceError: ``strict`` and at least one such page; nothing is ingested.
    """
    from core.errors import IngestSourceError
    from core.ingest.injection import scan_folder

    if source.startswith(("http://", "https://")):
        if strict:
            raise IngestSourceError("--strict checks local folders only; a sitemap's pages are not scanned")
        return []
    found = [s.line() for s in await asyncio.to_thread(scan_folder, Path(source), root=root)]
    if strict and found:
        raise IngestSourceError(
            f"refused (--strict): {len(found)} page(s) look like instructions to an assistant, "
            f"not documentation: {'; '.join(found[:5])}. Fix them, or ingest without --strict")
    return found


async def build_services(settings: Settings) -> Services:
    """The adapters' entry point: the real Services (close with ``await services.aclose()``)."""
    return (await build_runtime(settings)).services
