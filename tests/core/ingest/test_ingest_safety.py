"""What an ingest refuses to read or to do (issue 10 items 1, 6, 7, 18).

Links, FIFOs and devices are never read; an empty or unsupported-only folder is an
error that creates nothing; removing most of a collection needs ``prune``; a dry run
writes nothing; embedding batches stay small whatever the chunks' length.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from core.errors import IngestRefusedError, IngestSourceError
from core.fakes import FakeEmbedder, InMemoryVectorStore
from core.ingest.loaders import load_file
from core.ingest.options import IngestOptions, RootClaim, check_removal
from core.ingest.sync import MAX_BATCH_CHARS, ingest_path
from core.ingest.walk import scan_folder
from core.models import DocumentChunk, EmbeddingResponse, IngestSummary
from core.protocols import DocumentState

COLLECTION = "docs"
SECRET = "SLACK_BOT_TOKEN=placeholder-never-in-chat"


class CountingStore(InMemoryVectorStore):
    """The in-memory store, recording every write."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[str] = []

    async def ensure_collection(self, name: str, *, model_id: str, dimension: int) -> None:
        self.writes.append(f"ensure {name}")
        await super().ensure_collection(name, model_id=model_id, dimension=dimension)

    async def upsert(
        self, name: str, chunks: Sequence[DocumentChunk], embeddings: Sequence[EmbeddingResponse]
    ) -> None:
        self.writes.append(f"upsert {len(chunks)}")
        await super().upsert(name, chunks, embeddings)

    async def delete(self, name: str, chunk_ids: Sequence[str]) -> None:
        self.writes.append(f"delete {len(chunk_ids)}")
        await super().delete(name, chunk_ids)


def page(topic: str) -> str:
    return f"# {topic.title()}\n\n" + f"The {topic} page explains how the {topic} works, step by step. " * 4


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    for topic in ("install", "slack", "discord", "keys"):
        (root / f"{topic}.md").write_text(page(topic), encoding="utf-8")
    return root


async def ingest(root: Path, store: InMemoryVectorStore, **options: bool) -> IngestSummary:
    return await ingest_path(root, store=store, embedder=FakeEmbedder(), collection=COLLECTION,
                             progress=False, options=IngestOptions(**options))


def stored_text(store: InMemoryVectorStore) -> str:
    return " ".join(str(payload.get("content")) for _, payload in store._points.get(COLLECTION, {}).values())


@pytest.fixture
def fifo(docs: Path) -> Iterator[Path]:
    """A FIFO named like a page; a watchdog unblocks any reader after 5 s so a regression fails, not hangs."""
    path = docs / "pipe.md"
    os.mkfifo(path)
    opened = threading.Event()
    done = threading.Event()

    def watchdog() -> None:
        if done.wait(5):
            return
        try:  # succeeds only if someone opened the FIFO for reading
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            return
        opened.set()
        os.close(fd)

    thread = threading.Thread(target=watchdog, daemon=True)
    thread.start()
    yield path
    done.set()
    thread.join()
    assert not opened.is_set(), "the FIFO was opened for reading"


# ----------------------------------------------------------------------------- item 1: what is read


async def test_links_fifos_and_outside_files_are_never_read(docs: Path, tmp_path: Path, fifo: Path) -> None:
    secret = tmp_path / "secret.env"
    secret.write_text(SECRET, encoding="utf-8")
    (docs / "deployment-config.md").symlink_to(secret)
    (docs / "users.txt").symlink_to("/etc/passwd")
    store = CountingStore()
    summary = await ingest(docs, store)
    assert summary.files == 4
    assert sorted(summary.files_skipped) == [
        "deployment-config.md: symbolic link, not followed (--follow-symlinks reads links that stay inside "
        "the folder)",
        "pipe.md: FIFO, never opened",
        "users.txt: symbolic link, not followed (--follow-symlinks reads links that stay inside the folder)",
    ]
    assert "never-in-chat" not in stored_text(store) and "root:" not in stored_text(store)


async def test_follow_symlinks_reads_only_links_that_stay_inside(docs: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.env").write_text(SECRET, encoding="utf-8")
    (docs / "deployment-config.md").symlink_to(tmp_path / "secret.env")
    (docs / "escape").symlink_to(tmp_path)  # a folder link leading out of the docs
    (docs / "shared").mkdir()
    (docs / "shared" / "faq.md").write_text(page("faq"), encoding="utf-8")
    (docs / "faq-link.md").symlink_to(docs / "shared" / "faq.md")
    store = CountingStore()
    summary = await ingest(docs, store, follow_symlinks=True)
    assert {line.split(":")[0] for line in summary.files_skipped} == {"deployment-config.md", "escape"}
    assert all("outside the docs folder" in line for line in summary.files_skipped)
    assert {"faq-link.md", "shared/faq.md"} <= set(await store.documents(COLLECTION))
    assert "never-in-chat" not in stored_text(store)


async def test_a_device_is_never_opened(docs: Path) -> None:
    device = docs / "null.md"
    try:
        os.mknod(device, stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("creating a device node needs root")
    summary = await ingest(docs, CountingStore())
    assert summary.files_skipped == ["null.md: character device, never opened"]


def test_load_file_refuses_what_the_walk_would_have_skipped(docs: Path, tmp_path: Path, fifo: Path) -> None:
    """The folder may change between the walk and the read: the loader checks again."""
    (tmp_path / "secret.md").write_text(SECRET, encoding="utf-8")
    (docs / "link.md").symlink_to(tmp_path / "secret.md")
    with pytest.raises(IngestSourceError, match="not a regular file"):
        load_file(fifo, root=docs)
    with pytest.raises(IngestSourceError, match="symbolic link"):
        load_file(docs / "link.md", root=docs)
    with pytest.raises(IngestSourceError, match="outside the docs folder"):
        load_file(docs / "link.md", root=docs, follow_symlinks=True)


async def test_single_file_that_is_a_link_or_fifo_is_refused(docs: Path, tmp_path: Path, fifo: Path) -> None:
    (tmp_path / "secret.md").write_text(SECRET, encoding="utf-8")
    (docs / "link.md").symlink_to(tmp_path / "secret.md")
    store = CountingStore()
    with pytest.raises(IngestSourceError, match="is a symbolic link"):
        await ingest(docs / "link.md", store)
    with pytest.raises(IngestSourceError, match=r"resolves to .* not inside"):
        await ingest(docs / "link.md", store, follow_symlinks=True)
    with pytest.raises(IngestSourceError, match="is a FIFO"):
        await ingest(fifo, store)
    assert store.writes == []


async def test_oversized_file_is_left_out(docs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("core.ingest.walk.MAX_FILE_BYTES", 1000)
    (docs / "big.md").write_text(page("big") * 10, encoding="utf-8")
    summary = await ingest(docs, CountingStore())
    assert summary.files == 4 and summary.files_skipped == ["big.md: larger than 16 MB"]


# ----------------------------------------------------------------------------- item 7: nothing to ingest


async def test_empty_folder_is_an_error_and_creates_nothing(tmp_path: Path) -> None:
    (tmp_path / "empty" / ".git").mkdir(parents=True)
    store = CountingStore()
    with pytest.raises(IngestSourceError, match=r"nothing to ingest in .*the folder is empty"):
        await ingest(tmp_path / "empty", store)
    assert store.writes == [] and await store.collection_info(COLLECTION) is None


async def test_unsupported_only_folder_names_what_it_found(tmp_path: Path) -> None:
    folder = tmp_path / "exports"
    folder.mkdir()
    for name in ("a.pdf", "b.pdf", "c.PDF", "d.docx"):
        (folder / name).write_bytes(b"%PDF")
    store = CountingStore()
    listed = r"3 \.pdf, 1 \.docx: not supported \(ragbot reads \.adoc, \.asc, \.asciidoc, \.htm"
    with pytest.raises(IngestSourceError, match=listed):
        await ingest(folder, store)
    with pytest.raises(IngestSourceError, match=r"1 \.pdf: not supported"):
        await ingest(folder / "a.pdf", store)
    assert store.writes == []


def test_a_folder_is_claimed_only_after_a_run_that_read_a_file(tmp_path: Path, docs: Path) -> None:
    state = tmp_path / "roots.json"
    empty = tmp_path / "empty"
    empty.mkdir()
    claim = RootClaim(state, COLLECTION, empty)
    assert not claim.record(IngestSummary(files=0))
    assert not RootClaim(state, COLLECTION, docs).record(IngestSummary(files=4, dry_run=True))
    assert not RootClaim(state, COLLECTION, docs).record(IngestSummary(files=1, files_failed=["x: bad"]))
    assert not state.exists()
    assert RootClaim(state, COLLECTION, docs).record(IngestSummary(files=4))
    with pytest.raises(IngestSourceError, match="mirrors"):
        RootClaim(state, COLLECTION, empty)
    outside = tmp_path / "new.md"
    outside.write_text(page("new"), encoding="utf-8")
    with pytest.raises(IngestSourceError, match="copy the file into that folder and run `ragbot ingest"):
        RootClaim(state, COLLECTION, outside)


# ----------------------------------------------------------------------------- item 6: removals


def test_removal_guard_thresholds() -> None:
    stored = {f"d{i}.md": DocumentState(f"h{i}", frozenset({f"c{i}a", f"c{i}b"})) for i in range(4)}
    check_removal(stored, ["d0.md", "d1.md"], collection=COLLECTION, prune=False)  # exactly half
    with pytest.raises(IngestRefusedError, match=r"refusing to remove 6 of 8 chunks .*--prune"):
        check_removal(stored, ["d0.md", "d1.md", "d2.md"], collection=COLLECTION, prune=False)
    one = {"only.md": stored["d0.md"]}
    with pytest.raises(IngestRefusedError, match=r"\(1 of 1 documents\)"):
        check_removal(one, ["only.md"], collection=COLLECTION, prune=False)
    check_removal(stored, list(stored), collection=COLLECTION, prune=True)


async def test_an_emptied_folder_does_not_wipe_the_collection(docs: Path) -> None:
    store = CountingStore()
    first = await ingest(docs, store)
    for name in ("install.md", "slack.md", "discord.md"):
        (docs / name).unlink()
    store.writes.clear()
    with pytest.raises(IngestRefusedError, match="refusing to remove"):
        await ingest(docs, store)
    assert store.writes == []
    assert len(await store.documents(COLLECTION)) == 4
    (docs / "keys.md").unlink()
    with pytest.raises(IngestSourceError, match="the folder is empty"):
        await ingest(docs, store)
    assert sum(len(s.chunk_ids) for s in (await store.documents(COLLECTION)).values()) == first.chunks_added
    pruned = await ingest(docs, store, prune=True)
    assert pruned.chunks_removed == first.chunks_added and await store.documents(COLLECTION) == {}


async def test_dry_run_lists_changes_and_writes_nothing(docs: Path, tmp_path: Path) -> None:
    store = CountingStore()
    fresh = await ingest(docs, store, dry_run=True)
    assert fresh.dry_run and store.writes == [] and await store.collection_info(COLLECTION) is None
    topics = ("discord", "install", "keys", "slack")
    assert sorted(fresh.changes) == [f"add {t}.md (1 chunks)" for t in topics]
    await ingest(docs, store)
    (docs / "install.md").write_text(page("installation"), encoding="utf-8")
    for name in ("slack.md", "discord.md", "keys.md"):
        (docs / name).unlink()
    (docs / "new.md").write_text(page("new"), encoding="utf-8")
    store.writes.clear()
    plan = await ingest(docs, store, dry_run=True)
    assert store.writes == []
    assert plan.changes[0].startswith("without --prune a real run stops here: refusing to remove 3 of 4")
    assert sorted(plan.changes[1:]) == ["add new.md (1 chunks)", "remove discord.md (1 chunks)",
                                        "remove keys.md (1 chunks)", "remove slack.md (1 chunks)",
                                        "update install.md (1 chunks)"]
    assert plan.line().startswith(
        "dry run, nothing written: 2 files: 1 chunks to add, 1 to update, 3 to remove")
    assert len(await store.documents(COLLECTION)) == 4


# ----------------------------------------------------------------------------- item 18: memory


async def test_long_chunks_are_embedded_in_small_batches(tmp_path: Path) -> None:
    """64 code blocks of 50,000 characters in one call took 2 GB; the padded size is bounded."""
    docs = tmp_path / "code"
    docs.mkdir()
    line = "    value = compute(alpha, beta)  # the loop body\n"
    (docs / "big.md").write_text("# Big\n\n```python\n" + line * 40_000 + "```\n", encoding="utf-8")
    (docs / "small.md").write_text(page("small"), encoding="utf-8")
    sizes: list[tuple[int, int]] = []

    class Watching(FakeEmbedder):
        async def embed_documents(self, texts: Sequence[str]) -> list[EmbeddingResponse]:
            sizes.append((len(texts), max(len(t) for t in texts)))
            return await super().embed_documents(texts)

    store = CountingStore()
    summary = await ingest_path(docs, store=store, embedder=Watching(), collection=COLLECTION, progress=False)
    assert summary.chunks_added > 30
    assert all(n == 1 or n * longest <= MAX_BATCH_CHARS for n, longest in sizes)
    assert any(n > 1 for n, _ in sizes)  # short chunks still share a call


def test_scan_skips_hidden_entries_and_build_folders(docs: Path) -> None:
    (docs / ".secret.md").write_text(SECRET, encoding="utf-8")
    (docs / "node_modules").mkdir()
    (docs / "node_modules" / "x.md").write_text(page("x"), encoding="utf-8")
    scan = scan_folder(docs)
    assert [p.name for p in scan.files] == ["discord.md", "install.md", "keys.md", "slack.md"]
    assert scan.skipped == [] and scan.unsupported == []
    # A build folder is left out too, and said to be: a site's own pages may sit in one.
    (docs / "guide" / "build").mkdir(parents=True)
    (docs / "guide" / "build" / "linux.md").write_text(page("linux"), encoding="utf-8")
    assert scan_folder(docs).build_folders == ["guide/build/"] and scan_folder(docs).skipped == []
