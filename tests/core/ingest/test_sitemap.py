"""Sitemap ingestion against a tiny aiohttp docs site on 127.0.0.1."""

from __future__ import annotations

import asyncio
import gzip
import json
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from core.errors import IngestSourceError
from core.fakes import FakeEmbedder, InMemoryVectorStore
from core.ingest.sitemap import ingest_sitemap, ingest_source, parse_sitemap
from core.models import DocumentChunk, EmbeddingResponse, IngestSummary
from tests.support.loopback import start_app

COLLECTION = "site"
NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


class RecordingStore(InMemoryVectorStore):
    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    async def upsert(
        self, name: str, chunks: Sequence[DocumentChunk], embeddings: Sequence[EmbeddingResponse]
    ) -> None:
        self.writes += 1
        await super().upsert(name, chunks, embeddings)

    async def delete(self, name: str, chunk_ids: Sequence[str]) -> None:
        self.writes += 1
        await super().delete(name, chunk_ids)


def page_html(title: str, body: str) -> str:
    return (
        f"<html><head><title>{title} | Site</title><script>track()</script></head><body>"
        f"<nav>Menu</nav><main><article><header><h1>{title}</h1></header>"
        f"<h2>Overview</h2><p>{body} explained in depth, with enough words to matter.</p>"
        f"<h2>Details</h2><p>{body} details: " + "more words about robots. " * 12 + "</p>"
        "<pre class='language-python'><code>print('hi')</code></pre>"
        "</article></main><footer>Footer</footer></body></html>"
    )


class Site:
    """Serves /sitemap.xml (or a sitemap index) and pages under /docs/, counting page requests."""

    def __init__(self) -> None:
        self.pages: dict[str, str] = {
            name: page_html(name.title(), f"The {name} page") for name in ("intro", "nodes", "topics")
        }
        self.lastmod: dict[str, str | None] = dict.fromkeys(self.pages, "2025-01-01")
        self.status: dict[str, int] = {}
        self.slow: set[str] = set()
        self.use_index = False
        self.hits: Counter[str] = Counter()
        self.active = 0
        self.max_active = 0
        self.delay = 0.0
        self.release = asyncio.Event()
        self.base = ""

    def urlset(self) -> str:
        items = []
        for name in self.pages:
            lastmod = f"<lastmod>{self.lastmod[name]}</lastmod>" if self.lastmod.get(name) else ""
            items.append(f"<url><loc>{self.base}/docs/{name}</loc>{lastmod}</url>")
        return f'<?xml version="1.0" encoding="UTF-8"?><urlset {NS}>{"".join(items)}</urlset>'

    async def sitemap(self, request: web.Request) -> web.Response:
        if self.use_index:
            body = (f'<sitemapindex {NS}><sitemap><loc>{self.base}/sitemap-docs.xml.gz</loc></sitemap>'
                    f'<sitemap><loc>/missing-sitemap.xml</loc></sitemap></sitemapindex>')
            return web.Response(text=body, content_type="application/xml")
        return web.Response(text=self.urlset(), content_type="application/xml")

    async def not_a_sitemap(self, request: web.Request) -> web.Response:
        return web.Response(text="<html><body>hello</body></html>", content_type="text/html")

    async def child_sitemap(self, request: web.Request) -> web.Response:
        body = gzip.compress(self.urlset().encode())
        return web.Response(body=body, content_type="application/octet-stream")

    async def page(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        self.hits[name] += 1
        self.active += 1
        self.max_active = max(self.max_active, self.active)
        try:
            if name in self.slow:
                await self.release.wait()
            if self.delay:
                await asyncio.sleep(self.delay)
            if name in self.status:
                return web.Response(status=self.status[name], text="nope")
            if name not in self.pages:
                return web.Response(status=404)
            return web.Response(text=self.pages[name], content_type="text/html")
        finally:
            self.active -= 1


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    state = Site()
    app = web.Application()
    app.router.add_get("/sitemap.xml", state.sitemap)
    app.router.add_get("/sitemap-docs.xml.gz", state.child_sitemap)
    app.router.add_get("/docs/{name}", state.page)
    app.router.add_get("/not-a-sitemap.xml", state.not_a_sitemap)
    runner, port = await start_app(app, shutdown_timeout=1.0)
    state.base = f"http://127.0.0.1:{port}"
    try:
        yield state
    finally:
        state.release.set()
        await runner.cleanup()


async def run(site: Site, store: InMemoryVectorStore, state: Path, **kwargs: Any) -> IngestSummary:
    return await ingest_sitemap(f"{site.base}/sitemap.xml", store=store, embedder=FakeEmbedder(),
                                collection=COLLECTION, state_path=state, progress=False, **kwargs)


def test_parse_sitemap_urlset_index_and_gzip() -> None:
    entries, children = parse_sitemap(
        f'<urlset {NS}><url><loc> https://x.dev/a </loc><lastmod>2025-01-02</lastmod></url>'
        f'<url><loc>https://x.dev/b</loc></url><url><loc>https://x.dev/b</loc></url></urlset>'
    )
    assert [(e.url, e.lastmod) for e in entries] == [
        ("https://x.dev/a", "2025-01-02"), ("https://x.dev/b", None),
    ]
    assert children == []
    entries, children = parse_sitemap(gzip.compress(
        f"<sitemapindex {NS}><sitemap><loc>https://x.dev/s1.xml</loc></sitemap></sitemapindex>".encode()
    ))
    assert (entries, children) == ([], ["https://x.dev/s1.xml"])
    with pytest.raises(ValueError, match="root element is <html>"):
        parse_sitemap("<html></html>")
    with pytest.raises(ValueError, match="invalid XML"):
        parse_sitemap("not xml")


async def test_lastmod_skips_unchanged_pages_without_fetching(site: Site, tmp_path: Path) -> None:
    store = RecordingStore()
    state = tmp_path / "state.json"
    first = await run(site, store, state)
    assert first.files == 3 and first.files_failed == []
    assert first.chunks_added >= 3
    assert site.hits == Counter({"intro": 1, "nodes": 1, "topics": 1})
    documents = await store.documents(COLLECTION)
    assert set(documents) == {f"{site.base}/docs/{n}" for n in ("intro", "nodes", "topics")}
    payloads = [p for _, p in store._points[COLLECTION].values()]
    payload = next(p for p in payloads if p["source_document"].endswith("/nodes"))
    assert payload["url"] == payload["source_document"] and payload["title"] == "Nodes"
    assert "Menu" not in payload["content"] and "Footer" not in payload["content"]
    assert json.loads(state.read_text())["pages"][f"{site.base}/docs/nodes"] == "2025-01-01"

    # Same lastmod: no page is fetched, nothing is written.
    site.hits.clear()
    store.writes = 0
    second = await run(site, store, state)
    assert sum(site.hits.values()) == 0 and store.writes == 0
    assert second.chunks_skipped == first.chunks_added and second.chunks_added == 0

    # One page changed: only it is fetched and only its chunks are replaced.
    site.lastmod["nodes"] = "2025-02-01"
    site.pages["nodes"] = page_html("Nodes", "The rewritten nodes page")
    third = await run(site, store, state)
    assert site.hits == Counter({"nodes": 1})
    assert third.chunks_updated == len(documents[f"{site.base}/docs/nodes"].chunk_ids)
    assert third.chunks_skipped == first.chunks_added - third.chunks_updated
    after = await store.documents(COLLECTION)
    assert after[f"{site.base}/docs/intro"] == documents[f"{site.base}/docs/intro"]
    assert after[f"{site.base}/docs/nodes"].content_hash != documents[f"{site.base}/docs/nodes"].content_hash


async def test_wiped_store_refetches_despite_state(site: Site, tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    await run(site, RecordingStore(), state)
    site.hits.clear()
    fresh = RecordingStore()
    summary = await run(site, fresh, state)
    assert sum(site.hits.values()) == 3 and summary.chunks_added > 0


async def test_pages_without_lastmod_are_fetched_but_not_rewritten(site: Site, tmp_path: Path) -> None:
    site.lastmod = dict.fromkeys(site.pages)
    store = RecordingStore()
    await run(site, store, tmp_path / "s.json")
    store.writes = 0
    site.hits.clear()
    again = await run(site, store, tmp_path / "s.json")
    assert sum(site.hits.values()) == 3
    assert store.writes == 0 and again.chunks_added == again.chunks_updated == 0


async def test_http_errors_and_timeouts_are_reported_not_fatal(site: Site, tmp_path: Path) -> None:
    site.pages["broken"] = "x"
    site.pages["slow"] = "x"
    site.lastmod["broken"] = site.lastmod["slow"] = "2025-01-01"
    site.status["broken"] = 500
    site.slow.add("slow")
    site.use_index = True  # also exercises a sitemap index with a gzipped child and a missing one
    state = tmp_path / "state.json"
    store = RecordingStore()
    summary = await run(site, store, state, timeout=0.3)
    failed = sorted(summary.files_failed)
    assert len(failed) == 3, failed
    assert failed[0].endswith("/docs/broken: HTTP 500")
    assert failed[1].endswith("/docs/slow: timed out")
    assert failed[2].endswith("/missing-sitemap.xml: HTTP 404")
    assert summary.files == 5
    assert len(await store.documents(COLLECTION)) == 3
    recorded = json.loads(state.read_text())["pages"]
    assert not any(url.endswith(("/broken", "/slow")) for url in recorded)  # retried next run


async def test_removed_pages_lose_their_chunks_but_other_sources_stay(site: Site, tmp_path: Path) -> None:
    store = RecordingStore()
    await store.ensure_collection(COLLECTION, model_id="fake-hash-32", dimension=32)
    local = DocumentChunk(chunk_id="local-0", content="a local file", url="file:///docs/a.md", title="A",
                          chunk_index=0, source_document="a.md", content_hash="h")
    await store.upsert(COLLECTION, [local], await FakeEmbedder().embed_documents(["a local file"]))
    state = tmp_path / "state.json"
    await run(site, store, state)
    removed_ids = (await store.documents(COLLECTION))[f"{site.base}/docs/topics"].chunk_ids
    del site.pages["topics"]
    summary = await run(site, store, state)
    documents = await store.documents(COLLECTION)
    assert f"{site.base}/docs/topics" not in documents and "a.md" in documents
    assert summary.chunks_removed == len(removed_ids)


async def test_fetches_are_bounded_by_concurrency(site: Site, tmp_path: Path) -> None:
    for i in range(6):
        site.pages[f"extra{i}"] = page_html(f"Extra {i}", f"Extra page {i}")
        site.lastmod[f"extra{i}"] = "2025-01-01"
    site.delay = 0.02
    summary = await run(site, RecordingStore(), tmp_path / "s.json", concurrency=2)
    assert summary.files == 9 and summary.files_failed == []
    assert site.max_active == 2


async def test_bad_sitemaps_raise_naming_the_url(site: Site, tmp_path: Path) -> None:
    with pytest.raises(IngestSourceError, match=r"nothing\.xml.*HTTP 404"):
        await ingest_sitemap(f"{site.base}/nothing.xml", store=RecordingStore(), embedder=FakeEmbedder(),
                             collection=COLLECTION, state_path=tmp_path / "s.json")
    with pytest.raises(IngestSourceError, match=r"not-a-sitemap\.xml.*root element"):
        await ingest_sitemap(f"{site.base}/not-a-sitemap.xml", store=RecordingStore(),
                             embedder=FakeEmbedder(), collection=COLLECTION, state_path=tmp_path / "s.json")


async def test_ingest_source_dispatches_sitemap_urls(site: Site, tmp_path: Path) -> None:
    summary = await ingest_source(f"{site.base}/sitemap.xml", store=RecordingStore(), embedder=FakeEmbedder(),
                                  collection=COLLECTION, state_path=tmp_path / "s.json", progress=False)
    assert summary.files == 3 and summary.chunks_added > 0


async def test_a_page_recorded_before_acronyms_were_read_is_fetched_once_more(
    site: Site, tmp_path: Path
) -> None:
    from core.retrieval.lexicon import LexiconFile

    store, state, path = RecordingStore(), tmp_path / "state.json", tmp_path / "lexicon.json"
    await run(site, store, state, lexicon=LexiconFile(path=path))
    # As an older version wrote it: the same page and hash, without acronyms.
    written = json.loads(path.read_text())
    del written["documents"][f"{site.base}/docs/nodes"]["acronyms"]
    path.write_text(json.dumps(written))
    site.hits.clear()
    await run(site, store, state, lexicon=LexiconFile(path=path))
    assert site.hits == Counter({"nodes": 1})  # the others are skipped as before
    assert LexiconFile(path=path).complete(f"{site.base}/docs/nodes")
