"""Ingest a published docs site through its ``sitemap.xml``.

Pages are fetched concurrently (at most ``concurrency`` at a time) and parsed
with the same HTML extraction as local ``.html`` files; each page is stored
under its URL (``source_document`` = ``url`` = the page URL). A small JSON
state file remembers every page's ``<lastmod>``: a page whose lastmod did not
change, and whose chunks are still in the store, is not fetched at all. Pages
without a lastmod are always fetched, then skipped if their text is unchanged.

Like ``ingest_path``, a sitemap run makes the collection mirror the site:
pages gone from the sitemap lose their chunks. It only touches documents
stored under URLs of the hosts the sitemap lists, never folder-ingested ones,
and removes nothing when part of a sitemap index could not be read.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import logging
import os
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import aiohttp
from tqdm import tqdm

from core.errors import IngestSourceError
from core.ingest.chunking import DEFAULT_TITLE_REPEAT, chunk_document
from core.ingest.html import html_document
from core.ingest.options import IngestOptions, check_removal
from core.ingest.sync import DocumentSync, ingest_path, is_remote, show_progress, stored_documents
from core.ingest.text import decode_text
from core.models import DocumentChunk, IngestSummary
from core.protocols import DocumentState, Embedder, VectorStore
from core.retrieval.lexicon import LexiconFile

log = logging.getLogger(__name__)

#: Sitemap indexes nest; real sites use one level, this bounds hostile ones.
MAX_SITEMAP_DEPTH = 3
STATE_VERSION = 1
USER_AGENT = "ragbot-ingest (+https://github.com/ragbot)"


@dataclass(frozen=True, slots=True)
class SitemapEntry:
    """One ``<url>`` of a sitemap: the page and its ``<lastmod>`` (None when absent)."""

    url: str
    lastmod: str | None


def parse_sitemap(xml: bytes | str) -> tuple[list[SitemapEntry], list[str]]:
    """Read a sitemap or a sitemap index.

    Args:
        xml: the document (gzip-compressed bytes are accepted).

    Returns:
        (page entries, child sitemap URLs); one of the two is empty.

    Raises:
        ValueError: the text is not sitemap XML.
    """
    if isinstance(xml, bytes) and xml[:2] == b"\x1f\x8b":
        xml = gzip.decompress(xml)
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as exc:
        raise ValueError(f"not a sitemap: invalid XML ({exc})") from exc
    kind = _local(root.tag)
    if kind not in ("urlset", "sitemapindex"):
        raise ValueError(f"not a sitemap: root element is <{kind}>, expected <urlset> or <sitemapindex>")
    entries: list[SitemapEntry] = []
    children: list[str] = []
    seen: set[str] = set()
    for item in root:
        fields = {_local(child.tag): (child.text or "").strip() for child in item}
        loc = fields.get("loc")
        if not loc or loc in seen:
            continue
        seen.add(loc)
        if kind == "sitemapindex":
            children.append(loc)
        else:
            entries.append(SitemapEntry(loc, fields.get("lastmod") or None))
    return entries, children


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def load_state(path: Path) -> dict[str, str]:
    """Read the url -> lastmod state; a missing or unreadable file means "nothing known"."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.warning("ignoring unreadable sitemap state %s: %s", path, exc)
        return {}
    pages = data.get("pages") if isinstance(data, dict) else None
    if not isinstance(pages, dict):
        return {}
    return {str(k): str(v) for k, v in pages.items() if isinstance(v, str)}


def save_state(path: Path, pages: dict[str, str]) -> None:
    """Write the url -> lastmod state atomically (a crash leaves the old file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(
        json.dumps({"version": STATE_VERSION, "pages": dict(sorted(pages.items()))}, indent=1),
        encoding="utf-8",
    )
    os.replace(tmp, path)


def default_state_path(collection: str) -> Path:
    """Where the lastmod state lives by default: ``<data_dir>/sitemap-<collection>.json``."""
    from core.settings import load_settings  # settings read the environment; only when needed

    return load_settings().data_dir / f"sitemap-{collection}.json"


async def ingest_sitemap(
    url: str,
    *,
    store: VectorStore,
    embedder: Embedder,
    collection: str,
    concurrency: int = 8,
    state_path: Path | None = None,
    timeout: float = 30.0,
    progress: bool | None = None,
    batch_size: int = 64,
    title_repeat: int = DEFAULT_TITLE_REPEAT,
    lexicon: LexiconFile | None = None,
    options: IngestOptions | None = None,
) -> IngestSummary:
    """Make ``collection`` mirror the pages listed by the sitemap at ``url``.

    Args:
        url: the ``sitemap.xml`` (or sitemap index) URL.
        store: where chunks go.
        embedder: turns chunk texts into vectors.
        collection: the collection name.
        concurrency: pages fetched at the same time.
        state_path: the JSON url -> lastmod file; default ``<data_dir>/sitemap-<collection>.json``.
        timeout: seconds allowed per HTTP request.
        progress: draw a tqdm bar on stderr; None draws one when stderr is a terminal.
        batch_size: texts per ``embed_documents`` call.
        title_repeat: title weighting of the embedded text (``Settings.title_repeat``).
        lexicon: the collection's vocabulary file, kept in step with the pages.
        options: ``prune`` allows removing most of the collection; ``dry_run`` fetches the
            changed pages but writes nothing (not even the lastmod state).

    Returns:
        The summary; ``files`` counts listed pages, ``files_failed`` names pages (or child
        sitemaps) that failed with their HTTP status or error.

    Raises:
        IngestSourceError: the sitemap itself cannot be fetched, is not a sitemap, or lists no page.
        IngestRefusedError: the run would remove more than half of the collection without ``prune``.
        StoreError, ProviderError: the store or the embedder failed.
    """
    started = time.perf_counter()
    options = options or IngestOptions()
    if not url.startswith(("http://", "https://")):
        raise IngestSourceError(f"sitemap URL {url!r} is not an http:// or https:// URL")
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    state_file = state_path if state_path is not None else default_state_path(collection)
    known = load_state(state_file)
    summary = IngestSummary()

    client_timeout = aiohttp.ClientTimeout(total=timeout)
    async with aiohttp.ClientSession(timeout=client_timeout, headers={"User-Agent": USER_AGENT}) as session:
        entries, complete = await _read_sitemaps(session, url, summary)
        summary.files, summary.dry_run = len(entries), options.dry_run
        stored = await stored_documents(store, embedder, collection)
        gone = _gone_pages(url, entries, stored) if complete else []
        if not entries and not (options.prune and gone):
            failed = f" ({'; '.join(summary.files_failed)})" if summary.files_failed else ""
            raise IngestSourceError(f"nothing to ingest: the sitemap at {url} lists no page{failed}")
        check_removal(stored, gone, collection=collection, prune=options.prune, summary=summary)
        if not options.dry_run:
            await store.ensure_collection(collection, model_id=embedder.model_id,
                                          dimension=embedder.dimension)
        sync = DocumentSync(
            store=store, embedder=embedder, collection=collection, stored=stored,
            summary=summary, batch_size=batch_size, title_repeat=title_repeat,
            lexicon=None if options.dry_run else lexicon, dry_run=options.dry_run,
        )
        to_fetch, new_state = _pages_to_fetch(entries, known, sync, lexicon=lexicon)
        await _sync_pages(session, to_fetch, sync, new_state, concurrency=concurrency,
                          title_repeat=title_repeat, progress=progress)

    await sync.remove_documents(gone)
    await sync.finish()
    # The state is written last: if anything above failed, the next run fetches again.
    if not options.dry_run:
        save_state(state_file, new_state)
    summary.seconds = time.perf_counter() - started
    return summary


def _pages_to_fetch(entries: list[SitemapEntry], known: dict[str, str], sync: DocumentSync, *,
                    lexicon: LexiconFile | None) -> tuple[list[SitemapEntry], dict[str, str]]:
    """The pages to fetch, and the lastmod state of those skipped (counted as unchanged in ``sync``).

    A page is skipped when its lastmod is the one recorded, its chunks are stored, and the
    vocabulary holds everything read today about it (an entry written before acronyms or
    versioned names were counted is not: the page is fetched once more).
    """
    to_fetch: list[SitemapEntry] = []
    new_state: dict[str, str] = {}
    for entry in entries:
        unchanged = (entry.lastmod is not None and known.get(entry.url) == entry.lastmod
                     and entry.url in sync.stored and (lexicon is None or lexicon.complete(entry.url)))
        if unchanged:
            sync.skip(entry.url)
            new_state[entry.url] = known[entry.url]
        else:
            to_fetch.append(entry)
    return to_fetch, new_state


async def _sync_pages(
    session: aiohttp.ClientSession, to_fetch: list[SitemapEntry], sync: DocumentSync,
    new_state: dict[str, str], *, concurrency: int, title_repeat: int, progress: bool | None,
) -> None:
    """Fetch, chunk and hand over each page; a failed page is reported and fetched again next time."""
    summary = sync.summary
    semaphore = asyncio.Semaphore(concurrency)
    with tqdm(total=len(to_fetch), unit="page", desc="sitemap", file=sys.stderr,
              disable=not show_progress(progress)) as bar:
        tasks = [asyncio.ensure_future(_fetch_page(session, semaphore, e)) for e in to_fetch]
        try:
            # Pages are handled as they arrive so at most a few are held in memory.
            for next_done in asyncio.as_completed(tasks):
                entry, html, error = await next_done
                bar.update(1)
                if html is None:
                    summary.files_failed.append(f"{entry.url}: {error}")
                    continue  # not recorded in the state: fetched again next time
                try:
                    chunks = await asyncio.to_thread(_page_chunks, html, entry.url, title_repeat)
                except Exception as exc:
                    log.warning("skipping %s: %s", entry.url, exc, exc_info=True)
                    summary.files_failed.append(f"{entry.url}: {exc}")
                    continue
                await sync.document(entry.url, chunks)
                if entry.lastmod is not None:
                    new_state[entry.url] = entry.lastmod
        finally:
            for task in tasks:
                task.cancel()
            # Collect cancelled tasks so none is left pending when the session closes.
            await asyncio.gather(*tasks, return_exceptions=True)


def _gone_pages(url: str, entries: list[SitemapEntry], stored: dict[str, DocumentState]) -> list[str]:
    """Stored pages of the sitemap's hosts that it no longer lists."""
    listed = {e.url for e in entries}
    hosts = {urlsplit(u).netloc for u in listed} | {urlsplit(url).netloc}
    return [doc for doc in stored if is_remote(doc) and urlsplit(doc).netloc in hosts and doc not in listed]


def _page_chunks(html: str, url: str, title_repeat: int) -> list[DocumentChunk]:
    return chunk_document(html_document(html, source_document=url, url=url), title_repeat=title_repeat)


async def _read_sitemaps(
    session: aiohttp.ClientSession, url: str, summary: IngestSummary
) -> tuple[list[SitemapEntry], bool]:
    """Fetch a sitemap, following sitemap indexes; returns (entries, whether every part was read)."""
    body, error = await _get(session, url)
    if body is None:
        raise IngestSourceError(f"cannot fetch sitemap {url!r}: {error}")
    try:
        entries, children = parse_sitemap(body)
    except ValueError as exc:
        raise IngestSourceError(f"{url!r} is not a sitemap: {exc}") from exc
    complete = True
    pending = [(urljoin(url, child), 1) for child in children]
    visited = {url}
    while pending:
        child, depth = pending.pop(0)
        if child in visited:
            continue
        visited.add(child)
        body, error = await _get(session, child)
        if body is None:
            summary.files_failed.append(f"{child}: {error}")
            complete = False
            continue
        try:
            more, nested = parse_sitemap(body)
        except ValueError as exc:
            summary.files_failed.append(f"{child}: {exc}")
            complete = False
            continue
        entries.extend(more)
        if nested and depth >= MAX_SITEMAP_DEPTH:
            summary.files_failed.append(f"{child}: sitemap indexes nested deeper than {MAX_SITEMAP_DEPTH}")
            complete = False
            continue
        pending.extend((urljoin(child, n), depth + 1) for n in nested)
    unique: dict[str, SitemapEntry] = {}
    for entry in entries:
        unique.setdefault(urljoin(url, entry.url), SitemapEntry(urljoin(url, entry.url), entry.lastmod))
    return list(unique.values()), complete


async def _get(session: aiohttp.ClientSession, url: str) -> tuple[bytes | None, str | None]:
    """GET a URL: (body, None) on success, (None, reason) on HTTP errors and timeouts."""
    try:
        async with session.get(url) as response:
            if response.status >= 400:
                return None, f"HTTP {response.status}"
            return await response.read(), None
    except TimeoutError:
        return None, "timed out"
    except aiohttp.ClientError as exc:
        return None, f"{type(exc).__name__}: {exc}"


async def _fetch_page(
    session: aiohttp.ClientSession, semaphore: asyncio.Semaphore, entry: SitemapEntry
) -> tuple[SitemapEntry, str | None, str | None]:
    """Fetch one page: (entry, html, None) or (entry, None, reason)."""
    async with semaphore:
        body, error = await _get(session, entry.url)
    if body is None:
        return entry, None, error
    try:
        return entry, decode_text(body, name=entry.url), None
    except IngestSourceError as exc:
        return entry, None, str(exc).removeprefix(f"{entry.url}: ")


async def ingest_source(
    source: str,
    *,
    store: VectorStore,
    embedder: Embedder,
    collection: str,
    base_url: str | None = None,
    progress: bool | None = None,
    batch_size: int = 64,
    concurrency: int = 8,
    state_path: Path | None = None,
    title_repeat: int = DEFAULT_TITLE_REPEAT,
    root: Path | None = None,
    lexicon: LexiconFile | None = None,
    options: IngestOptions | None = None,
) -> IngestSummary:
    """Ingest a folder, a file or a sitemap URL, whichever ``source`` names.

    Args:
        source: a path, a ``file://`` URL, or an ``http(s)://`` sitemap URL (``.xml`` / ``.xml.gz``).
        store, embedder, collection, base_url, progress, batch_size: as for ``ingest_path``.
        concurrency, state_path: as for ``ingest_sitemap``.
        root: as for ``ingest_path`` (the folder a single file is named relative to).
        lexicon: the collection's vocabulary file, kept in step with the documents.
        options: links, large removals, dry run (``IngestOptions``).

    Returns:
        The run's summary.

    Raises:
        IngestSourceError: the path does not exist, or the URL is not a sitemap URL.
    """
    scheme = urlsplit(source).scheme.lower()
    if scheme in ("http", "https"):
        path_part = urlsplit(source).path.lower()
        if not path_part.endswith((".xml", ".xml.gz")):
            raise IngestSourceError(
                f"cannot ingest {source!r}: only sitemap URLs (ending in .xml) can be ingested over HTTP"
            )
        return await ingest_sitemap(
            source, store=store, embedder=embedder, collection=collection,
            concurrency=concurrency, state_path=state_path, progress=progress, batch_size=batch_size,
            title_repeat=title_repeat, lexicon=lexicon, options=options,
        )
    if scheme == "file":
        from urllib.request import url2pathname

        path = Path(url2pathname(urlsplit(source).path))
    elif scheme and len(scheme) > 1:  # one letter is a Windows drive, not a scheme
        raise IngestSourceError(f"cannot ingest {source!r}: unsupported URL scheme {scheme!r}")
    else:
        path = Path(source).expanduser()
    return await ingest_path(
        path, store=store, embedder=embedder, collection=collection,
        base_url=base_url, progress=progress, batch_size=batch_size, title_repeat=title_repeat,
        root=root, lexicon=lexicon, options=options,
    )


__all__ = [
    "SitemapEntry",
    "default_state_path",
    "ingest_sitemap",
    "ingest_source",
    "load_state",
    "parse_sitemap",
    "save_state",
]
