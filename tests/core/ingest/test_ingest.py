"""Folder ingestion: incremental sync against the in-memory fakes, bad files, progress, the textbook."""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from core.errors import IngestSourceError, ProviderTimeoutError
from core.fakes import FakeEmbedder, InMemoryVectorStore
from core.ingest.chunking import chunk_id
from core.ingest.loaders import load_file
from core.ingest.sitemap import ingest_source
from core.ingest.sync import ingest_path, walk_files
from core.models import DocumentChunk, EmbeddingResponse, IngestSummary
from tests.support.paths import SHARED_DATA

SHARED_DOCS = SHARED_DATA / "robotics-textbook" / "docs"
COLLECTION = "docs"


class RecordingStore(InMemoryVectorStore):
    """The in-memory store, counting writes."""

    def __init__(self) -> None:
        super().__init__()
        self.upserts: list[list[str]] = []
        self.deletes: list[list[str]] = []

    async def upsert(
        self, name: str, chunks: Sequence[DocumentChunk], embeddings: Sequence[EmbeddingResponse]
    ) -> None:
        self.upserts.append([c.chunk_id for c in chunks])
        await super().upsert(name, chunks, embeddings)

    async def delete(self, name: str, chunk_ids: Sequence[str]) -> None:
        self.deletes.append(list(chunk_ids))
        await super().delete(name, chunk_ids)

    def reset(self) -> None:
        self.upserts.clear()
        self.deletes.clear()


def paragraphs(topic: str, n: int) -> str:
    return "\n\n".join(
        f"The {topic} paragraph {i} explains how a {topic} works in a robot, step by step, with care. " * 3
        for i in range(n)
    )


def write_docs(root: Path) -> None:
    (root / "module-1").mkdir(parents=True)
    (root / "module-1" / "intro.md").write_text(
        f"---\ntitle: Intro\ntags: [basics]\n---\n\n# Intro\n\n## Why\n\n{paragraphs('robot', 3)}\n\n"
        f"## How\n\n{paragraphs('sensor', 4)}\n",
        encoding="utf-8",
    )
    (root / "module-1" / "nodes.mdx").write_text(
        f"import Tabs from '@theme/Tabs';\n\n# Nodes\n\n{paragraphs('node', 6)}\n", encoding="utf-8"
    )
    (root / "module-1" / "_category_.json").write_text('{"label": "Module 1"}', encoding="utf-8")
    (root / "guide.txt").write_text(paragraphs("guide", 2), encoding="utf-8")
    for skipped in (".git", "node_modules", "build"):
        (root / skipped).mkdir()
        (root / skipped / "hidden.md").write_text("# Should not be read\n\ntext\n", encoding="utf-8")


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    write_docs(root)
    return root


async def ingest(root: Path, store: RecordingStore) -> IngestSummary:
    return await ingest_path(root, store=store, embedder=FakeEmbedder(), collection=COLLECTION,
                             base_url="https://book.dev/docs", progress=False)


def test_walk_skips_hidden_and_build_folders(docs: Path) -> None:
    supported, unsupported = walk_files(docs)
    assert [p.relative_to(docs).as_posix() for p in supported] == [
        "guide.txt", "module-1/intro.md", "module-1/nodes.mdx",
    ]
    assert [p.name for p in unsupported] == ["_category_.json"]


async def test_first_run_adds_everything_with_urls_and_payloads(docs: Path) -> None:
    store = RecordingStore()
    embedder = FakeEmbedder()
    summary = await ingest_path(docs, store=store, embedder=embedder, collection=COLLECTION,
                                base_url="https://book.dev/docs", progress=False, batch_size=4)
    assert summary.files == 3 and summary.files_failed == []
    assert embedder.calls == -(-summary.chunks_added // 4)  # full batches of 4, then the rest
    assert summary.chunks_added > 3 and summary.chunks_updated == summary.chunks_removed == 0
    stored = await store.documents(COLLECTION)
    assert set(stored) == {"guide.txt", "module-1/intro.md", "module-1/nodes.mdx"}
    assert sum(len(s.chunk_ids) for s in stored.values()) == summary.chunks_added
    payloads = [p for _, p in store._points[COLLECTION].values()]
    intro = [p for p in payloads if p["source_document"] == "module-1/intro.md"]
    assert {p["url"] for p in intro} == {"https://book.dev/docs/module-1/intro"}
    assert {p["section"] for p in intro} == {"Intro > Why", "Intro > How"}
    assert all(p["tags"] == ["basics"] for p in intro)
    # Each document is written in one upsert, even when its chunks span several embedding batches.
    for ids in store.upserts:
        docs_in_call = {stored_doc for stored_doc, s in stored.items() if s.chunk_ids & set(ids)}
        for name in docs_in_call:
            assert stored[name].chunk_ids <= set(ids)


async def test_unchanged_folder_writes_nothing(docs: Path) -> None:
    store = RecordingStore()
    first = await ingest(docs, store)
    store.reset()
    embedder = FakeEmbedder()
    again = await ingest_path(docs, store=store, embedder=embedder, collection=COLLECTION,
                              base_url="https://book.dev/docs", progress=False)
    assert store.upserts == [] and store.deletes == []
    assert embedder.calls == 0
    assert again.chunks_skipped == first.chunks_added
    assert (again.chunks_added, again.chunks_updated, again.chunks_removed) == (0, 0, 0)


async def test_edit_add_and_delete_touch_only_those_documents(docs: Path) -> None:
    store = RecordingStore()
    await ingest(docs, store)
    before = await store.documents(COLLECTION)
    intro_ids = before["module-1/intro.md"].chunk_ids
    store.reset()

    # Shrink intro.md to one section, add a file, delete guide.txt.
    (docs / "module-1" / "intro.md").write_text(
        f"# Intro\n\n## Why\n\n{paragraphs('robot', 1)}\n", encoding="utf-8"
    )
    (docs / "module-1" / "new.md").write_text(f"# New\n\n{paragraphs('planner', 1)}\n", encoding="utf-8")
    (docs / "guide.txt").unlink()
    summary = await ingest(docs, store)

    after = await store.documents(COLLECTION)
    assert set(after) == {"module-1/intro.md", "module-1/nodes.mdx", "module-1/new.md"}
    assert after["module-1/nodes.mdx"] == before["module-1/nodes.mdx"]
    new_intro = after["module-1/intro.md"].chunk_ids
    assert new_intro == {chunk_id("module-1/intro.md", i) for i in range(len(new_intro))}
    upserted = {cid for call in store.upserts for cid in call}
    deleted = {cid for call in store.deletes for cid in call}
    assert upserted == new_intro | after["module-1/new.md"].chunk_ids
    assert deleted == (intro_ids - new_intro) | before["guide.txt"].chunk_ids
    assert summary.chunks_updated == len(new_intro)
    assert summary.chunks_added == len(after["module-1/new.md"].chunk_ids)
    assert summary.chunks_removed == len(deleted)
    assert summary.chunks_skipped == len(before["module-1/nodes.mdx"].chunk_ids)


class FailingEmbedder(FakeEmbedder):
    """Fails on its second call, like a provider going down mid-run."""

    async def embed_documents(self, texts: Sequence[str]) -> list[EmbeddingResponse]:
        if self.calls >= 1:
            raise ProviderTimeoutError("no answer", provider="fake")
        return await super().embed_documents(texts)


async def test_embedding_failure_never_leaves_a_half_written_document(docs: Path) -> None:
    store = RecordingStore()
    with pytest.raises(ProviderTimeoutError):
        await ingest_path(docs, store=store, embedder=FailingEmbedder(), collection=COLLECTION,
                          progress=False, batch_size=3)
    reference = InMemoryVectorStore()
    complete = await ingest_path(docs, store=reference, embedder=FakeEmbedder(),
                                 collection=COLLECTION, progress=False)
    expected = await reference.documents(COLLECTION)
    written = await store.documents(COLLECTION)
    assert 0 < len(written) < len(expected)
    for name, state in written.items():
        assert state == expected[name]  # every written document is whole
    # The next run finishes the job.
    summary = await ingest_path(docs, store=store, embedder=FakeEmbedder(), collection=COLLECTION,
                                progress=False)
    assert summary.chunks_added + summary.chunks_skipped == complete.chunks_added


async def test_changing_base_url_rewrites_links(docs: Path) -> None:
    store = RecordingStore()
    await ingest(docs, store)
    store.reset()
    summary = await ingest_path(docs, store=store, embedder=FakeEmbedder(), collection=COLLECTION,
                                base_url="https://new.dev/docs", progress=False)
    assert summary.chunks_skipped == 0 and summary.chunks_updated > 0
    assert all(p["url"].startswith("https://new.dev/") or p["url"].startswith("file://")
               for _, p in store._points[COLLECTION].values())


async def test_pages_all_in_one_folder_get_a_notice_about_their_addresses(tmp_path: Path) -> None:
    (tmp_path / "docs" / "guide").mkdir(parents=True)
    (tmp_path / "docs" / "guide" / "a.md").write_text("# A\n\nSome text.\n", encoding="utf-8")
    (tmp_path / "SOURCE.txt").write_text("where these came from\n", encoding="utf-8")

    async def notices(folder: Path, base_url: str | None) -> list[str]:
        summary = await ingest_path(folder, store=RecordingStore(), embedder=FakeEmbedder(),
                                    collection=COLLECTION, base_url=base_url, progress=False)
        return summary.notices

    assert await notices(tmp_path, "https://site.dev") == [
        "every page is under docs/, so their links read https://site.dev/docs/...; if the site serves docs/ "
        f"at https://site.dev, ingest {tmp_path / 'docs'} instead"]
    assert await notices(tmp_path, None) == []  # file:// links name the files as they are
    inside = await notices(tmp_path / "docs", "https://site.dev")
    assert inside[0].startswith("every page is under guide/")
    # Next.js serves app/docs/page.mdx at docs/: no folder to ingest instead.
    (tmp_path / "site" / "app" / "docs").mkdir(parents=True)
    (tmp_path / "site" / "app" / "docs" / "page.mdx").write_text("# Docs\n\nText.\n", encoding="utf-8")
    assert await notices(tmp_path / "site", "https://site.dev") == []
    # A build folder is never read, and the run says so: an HTML export's pages may sit in one.
    (tmp_path / "docs" / "guide" / "build").mkdir()
    (tmp_path / "docs" / "guide" / "build" / "b.html").write_text("<p>built</p>", encoding="utf-8")
    assert await notices(tmp_path / "docs", None) == [
        "guide/build/ is a build folder, not read (ingest it on its own to read it)"]
    # Files read to no text at all are named, not left out without a word.
    (tmp_path / "docs" / "moved.html").write_text(
        '<html><head><meta http-equiv="refresh" content="0; url=a.html"></head></html>', encoding="utf-8")
    assert (await notices(tmp_path / "docs", None))[-1] == (
        "1 file(s) hold no text to answer from (an empty page, a redirect stub, a generator's index or code "
        "listing, a site's template): moved.html")


async def test_bad_file_is_reported_and_keeps_its_old_chunks(docs: Path) -> None:
    store = RecordingStore()
    await ingest(docs, store)
    (docs / "module-1" / "nodes.mdx").write_bytes(b"# Nodes\n\xff\xfe\xfd not utf-8")
    (docs / "binary.md").write_bytes(b"\x00\x01\x02")
    summary = await ingest(docs, store)
    assert len(summary.files_failed) == 2
    assert any(f.startswith("module-1/nodes.mdx: not valid UTF-8") for f in summary.files_failed)
    assert any(f.startswith("binary.md:") for f in summary.files_failed)
    assert "module-1/nodes.mdx" in await store.documents(COLLECTION)  # not deleted for being unreadable


async def test_missing_path_and_bad_base_url_raise(tmp_path: Path) -> None:
    with pytest.raises(IngestSourceError, match="nope"):
        await ingest_path(tmp_path / "nope", store=InMemoryVectorStore(), embedder=FakeEmbedder(),
                          collection=COLLECTION)
    with pytest.raises(IngestSourceError, match="ftp://x"):
        await ingest_path(tmp_path, store=InMemoryVectorStore(), embedder=FakeEmbedder(),
                          collection=COLLECTION, base_url="ftp://x")


async def test_single_file_updates_only_that_file(docs: Path) -> None:
    store = RecordingStore()
    await ingest(docs, store)
    summary = await ingest_path(docs / "guide.txt", store=store, embedder=FakeEmbedder(),
                                collection=COLLECTION, progress=False)
    assert summary.files == 1 and summary.chunks_removed == 0
    assert len(await store.documents(COLLECTION)) == 3


async def test_folder_ingest_leaves_sitemap_documents_alone(docs: Path) -> None:
    store = RecordingStore()
    await store.ensure_collection(COLLECTION, model_id="fake-hash-32", dimension=32)
    page = DocumentChunk(chunk_id="p0", content="web page", url="https://site.dev/p", title="P",
                         chunk_index=0, source_document="https://site.dev/p", content_hash="h")
    await store.upsert(COLLECTION, [page], await FakeEmbedder().embed_documents(["web page"]))
    await ingest(docs, store)
    assert "https://site.dev/p" in await store.documents(COLLECTION)


async def test_ingest_source_dispatches_paths_and_refuses_other_urls(docs: Path) -> None:
    store = RecordingStore()
    summary = await ingest_source(str(docs), store=store, embedder=FakeEmbedder(), collection=COLLECTION,
                                  progress=False)
    assert summary.files == 3
    again = await ingest_source(docs.as_uri(), store=store, embedder=FakeEmbedder(), collection=COLLECTION,
                                progress=False)
    assert again.chunks_skipped == summary.chunks_added
    with pytest.raises(IngestSourceError, match="only sitemap URLs"):
        await ingest_source("https://site.dev/docs/intro", store=store, embedder=FakeEmbedder(),
                            collection=COLLECTION)
    with pytest.raises(IngestSourceError, match="unsupported URL scheme 'ftp'"):
        await ingest_source("ftp://site.dev/x.xml", store=store, embedder=FakeEmbedder(),
                            collection=COLLECTION)


async def test_progress_bar_draws_on_stderr_only_when_asked(
    docs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async def run(progress: bool | None) -> None:
        await ingest_path(docs, store=RecordingStore(), embedder=FakeEmbedder(), collection=COLLECTION,
                          progress=progress)

    await run(True)
    assert "3/3" in capsys.readouterr().err
    await run(False)
    assert capsys.readouterr().err == ""
    await run(None)  # None means "only on a terminal"; pytest's captured stderr is not one
    assert capsys.readouterr().err == ""


@pytest.mark.shared
@pytest.mark.skipif(not SHARED_DOCS.is_dir(), reason="../shared/data/robotics-textbook is absent")
async def test_robotics_textbook_ingests_sanely() -> None:
    store = RecordingStore()
    started = time.perf_counter()
    summary = await ingest_path(SHARED_DOCS, store=store, embedder=FakeEmbedder(), collection=COLLECTION,
                                base_url="https://book.dev/docs", progress=False)
    elapsed = time.perf_counter() - started
    assert summary.files == 89 and summary.files_failed == []
    assert elapsed < 15
    documents = await store.documents(COLLECTION)
    # Every file with text is stored; a page holding only a heading and a comment has no chunk.
    on_disk = {p.relative_to(SHARED_DOCS).as_posix() for p in SHARED_DOCS.rglob("*.md")}
    for missing in on_disk - set(documents):
        assert load_file(SHARED_DOCS / missing, root=SHARED_DOCS).sections == [], missing
    assert len(documents) >= 85
    payloads = [p for _, p in store._points[COLLECTION].values()]
    assert len(payloads) == summary.chunks_added > 89
    fence = re.compile(r"^\s*(```|~~~)", re.M)
    for p in payloads:
        assert len(fence.findall(p["content"])) % 2 == 0
        if len(p["content"]) > 2000:
            assert len(fence.findall(p["content"])) == 2, p["section"]  # one whole code block
        assert p["url"].startswith("https://book.dev/docs")
        assert "\n:::" not in p["content"] and "<details>" not in p["content"]
    assert sum(1 for p in payloads if p["section"]) / len(payloads) > 0.95
    assert any(" > " in p["section"] for p in payloads)
    store.reset()
    again = await ingest_path(SHARED_DOCS, store=store, embedder=FakeEmbedder(), collection=COLLECTION,
                              base_url="https://book.dev/docs", progress=False)
    assert store.upserts == [] and store.deletes == [] and again.chunks_skipped == summary.chunks_added
