"""Wiring: build the real core from Settings (the only place that picks implementations)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bots.chat.ratelimit import RateLimiter
from bots.chat.services import Services
from core.answer.generators.extractive import ExtractiveGenerator
from core.answer.pipeline import RagPipeline
from core.embedders.local import LocalEmbedder
from core.models import IngestSummary
from core.protocols import Embedder, Generator, Reranker, VectorStore
from core.settings import Settings


@dataclass(kw_only=True)
class Runtime:
    """The opened core: what ``ragbot serve`` and the CLI hold for their lifetime."""

    settings: Settings
    services: Services
    store: VectorStore
    embedder: Embedder
    pipeline: RagPipeline

    async def aclose(self) -> None:
        """Close the stores (flushes the embedded engine)."""
        await self.services.aclose()


def open_store(settings: Settings) -> VectorStore:
    """The vector store the settings ask for: a Qdrant server when QDRANT_URL is set."""
    if settings.qdrant_url:
        from core.stores.qdrant_server import QdrantServerStore

        return QdrantServerStore.from_settings(settings)
    from core.stores.qdrant_embedded import EdgeVectorStore

    return EdgeVectorStore(root=settings.store_dir)


def build_embedder(settings: Settings, local: LocalEmbedder) -> Embedder:
    """Cohere embeddings when COHERE_API_KEY is set (keeping local BM25 for hybrid), else local."""
    if settings.cohere_api_key is None:
        return local
    from core.providers.cohere import CohereEmbedder

    return CohereEmbedder.from_settings(
        settings, sparse_query=local.sparse_query, sparse_document=local.sparse_document
    )


def build_reranker(settings: Settings) -> Reranker | None:
    """Cohere rerank when COHERE_API_KEY is set."""
    if settings.cohere_api_key is None:
        return None
    from core.providers.cohere import CohereReranker

    return CohereReranker.from_settings(settings)


def build_generator(settings: Settings, fallback: Generator) -> Generator:
    """Gemini when GEMINI_API_KEY/GOOGLE_API_KEY is set, else the extractive answerer."""
    if settings.gemini_api_key is None:
        return fallback
    from core.answer.generators.gemini import GeminiGenerator

    return GeminiGenerator.from_settings(settings)


async def build_runtime(settings: Settings, *, recover: bool = True, **overrides: Any) -> Runtime:
    """Open SQLite and the vector store, recover from a crash, and assemble the pipeline.

    Args:
        settings: the configuration.
        recover: mark queries left PROCESSING as FAILED. Only the process that owns the data
            folder may do this: the CLI builds a runtime only when no ``ragbot serve`` answers
            on the control socket, and ``serve`` refuses to start beside another one.
        overrides: replace a built part (``store=``, ``generator=``), for tests.
    """
    from storage.sqlite import SqliteStore

    settings.data_dir.mkdir(parents=True, exist_ok=True)
    db = await SqliteStore.open(settings.sqlite_path)
    store: VectorStore | None = None
    try:
        if recover:
            await db.fail_interrupted()
        local = LocalEmbedder()
        store = overrides.get("store") or open_store(settings)
        embedder: Embedder = overrides.get("embedder") or build_embedder(settings, local)
        extractive = ExtractiveGenerator(max_sentences=settings.answer_sentences)
        generator: Generator = overrides.get("generator") or build_generator(settings, extractive)
        reranker = build_reranker(settings)
        pipeline = RagPipeline(
            settings=settings, embedder=embedder, store=store, generator=generator,
            fallback=extractive, conversations=db, queries=db, activity=db,
            terms=lambda text: frozenset(local.sparse_query(text).indices),
            similarity=local.similarity, reranker=reranker,
            cosine=None if embedder is local else local.cosines,
        )
    except BaseException:
        if store is not None:
            await store.close()
        await db.close()
        raise
    services = Services(
        settings=settings, answers=pipeline, conversations=db, queries=db, activity=db,
        feedback=db, events=db, rate_limiter=RateLimiter(limit=settings.rate_limit_per_minute),
    )
    services.add_closer(db.close)
    services.add_closer(store.close)
    for part in (generator, embedder, reranker):
        closer = getattr(part, "aclose", None)
        if closer is not None:  # Gemini and Cohere clients hold HTTP connection pools
            services.add_closer(closer)
    return Runtime(settings=settings, services=services, store=store, embedder=embedder,
                   pipeline=pipeline)


async def ingest(
    runtime: Runtime,
    source: str,
    *,
    collection: str | None = None,
    base_url: str | None = None,
    replace: bool = False,
    progress: bool | None = None,
) -> IngestSummary:
    """Ingest a folder, file or sitemap URL with the runtime's store and embedder.

    Used by ``ragbot ingest`` and by a running ``ragbot serve`` the CLI hands the work to.

    Raises:
        IngestSourceError: missing path, or a folder other than the one the collection mirrors.
    """
    from core.ingest.sitemap import ingest_source
    from core.ingest.sync import claim_root

    settings = runtime.settings
    collection = collection or settings.collection
    root = None
    if not source.startswith(("http://", "https://")):
        root = claim_root(settings.data_dir / "ingest-roots.json", collection, Path(source), replace=replace)
    return await ingest_source(
        source, store=runtime.store, embedder=runtime.embedder, collection=collection,
        base_url=base_url, progress=progress, title_repeat=settings.title_repeat, root=root,
        state_path=settings.data_dir / f"sitemap-{collection}.json",
    )


async def build_services(settings: Settings) -> Services:
    """The adapters' entry point: the real Services (close with ``await services.aclose()``)."""
    return (await build_runtime(settings)).services
