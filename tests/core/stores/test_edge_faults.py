"""The embedded store under faults (issue 10 items 8, 9, 10, 11, 13) and every store's ``health()``.

Faults that cannot be made for real in CI are injected: kill -9 at named points of a
collection's creation (in a child process), a full disk (a patched free-space reading
or engine error; a real tmpfs in ``test_full_tmpfs_*`` when this machine allows it),
a Rust panic (a real corrupted file, and a ``PanicException`` raised on purpose).
"""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import os
import random
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from core.errors import StoreBusyError, StoreError, StoreFullError, StoreUnavailableError
from core.fakes import FakeEmbedder, InMemoryVectorStore
from core.ingest.options import IngestOptions
from core.ingest.sync import ingest_path
from core.models import EmbeddingRequest, RetrievalRequest
from core.stores import edge_guard
from core.stores.edge_guard import engine_call, rule_for, to_store_error
from core.stores.qdrant_embedded import EdgeVectorStore
from core.stores.qdrant_server import QdrantServerStore
from tests.support.paths import ROOT

COLLECTION = "kb"
DIM = 32


def write_docs(folder: Path, pages: int = 20) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(pages):
        paragraphs = (f"Paragraph {j} of page {i} explains how part {j} of the robot works, in words. " * 6
                      for j in range(5))
        (folder / f"page{i}.md").write_text(f"# Page {i}\n\n" + "\n\n".join(paragraphs), encoding="utf-8")
    return folder


async def ingest(store: EdgeVectorStore, docs: Path, base_url: str = "https://a.example") -> int:
    summary = await ingest_path(docs, store=store, embedder=FakeEmbedder(dimension=DIM),
                                collection=COLLECTION, base_url=base_url, progress=False,
                                options=IngestOptions(prune=True))
    return summary.chunks_added + summary.chunks_updated + summary.chunks_skipped


async def search(store: EdgeVectorStore, text: str = "how the robot works") -> int:
    embedder = FakeEmbedder(dimension=DIM)
    query = await embedder.embed_query(EmbeddingRequest(query_text=text))
    hits = await store.search(RetrievalRequest(
        query_embedding=query.embedding_vector, sparse_embedding=query.sparse_vector,
        embedding_model=embedder.model_id, collection_name=COLLECTION))
    return len(hits.dense)


def allocated(folder: Path) -> int:
    """Bytes the files under ``folder`` occupy on disk (not their apparent, sparse size)."""
    return sum(os.stat(os.path.join(d, f)).st_blocks * 512 for d, _, files in os.walk(folder) for f in files)


# ----------------------------------------------------------------------------- item 8: half-made collections

KILLER = """
import asyncio, os, signal, sys
from pathlib import Path
import core.stores.qdrant_embedded as edge
import core.stores.edge_guard as guard

def die(*_args, **_kwargs):
    os.kill(os.getpid(), signal.SIGKILL)

point = sys.argv[2]
if point == "shard-created":
    real = edge.engine_call
    def call(action, folder, fn, *args):
        result = real(action, folder, fn, *args)
        if getattr(fn, "__name__", "") == "create":
            die()
        return result
    edge.engine_call = call
elif point == "indexes-made":
    edge.write_json_durably = die
elif point == "json-written-not-renamed":
    guard.os.replace = die

async def main():
    store = edge.EdgeVectorStore(root=Path(sys.argv[1]))
    await store.ensure_collection("kb", model_id="fake-hash-32", dimension=32)

asyncio.run(main())
"""


@pytest.mark.parametrize("point", ["shard-created", "indexes-made", "json-written-not-renamed"])
async def test_kill_9_while_creating_is_rebuilt_by_the_next_ingest(
    tmp_path: Path, point: str, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "qdrant"
    child = await asyncio.to_thread(
        subprocess.run, [sys.executable, "-c", KILLER, str(root), point], cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, timeout=60)
    assert child.returncode == -signal.SIGKILL, child.stderr.decode()
    assert (root / COLLECTION / "shard").is_dir() and not (root / COLLECTION / "collection.json").exists()
    store = EdgeVectorStore(root=root)
    with caplog.at_level(logging.WARNING, logger="core.stores.qdrant_embedded"):
        chunks = await ingest(store, write_docs(tmp_path / "docs"))
    assert "half-made collection 'kb'" in caplog.text
    info = await store.collection_info(COLLECTION)
    assert info is not None and info.points == chunks > 0
    await store.close()


RESYNC_KILLER = """
import asyncio, os, signal, sys
from pathlib import Path
from core.stores.qdrant_embedded import EdgeVectorStore
from tests.core.stores.test_edge_faults import ingest

def die(*_args, **_kwargs):
    os.kill(os.getpid(), signal.SIGKILL)

if sys.argv[3] == "after-upsert":
    real = EdgeVectorStore.upsert
    async def upsert(self, *args):
        await real(self, *args)
        die()
    EdgeVectorStore.upsert = upsert
else:
    EdgeVectorStore.delete = die

asyncio.run(ingest(EdgeVectorStore(root=Path(sys.argv[1])), Path(sys.argv[2]), "https://b.example"))
"""


@pytest.mark.parametrize("point", ["after-upsert", "before-delete"])
async def test_kill_9_during_a_re_sync_is_repaired_by_the_next_one(tmp_path: Path, point: str) -> None:
    root = tmp_path / "qdrant"
    docs = write_docs(tmp_path / "docs", pages=4)
    store = EdgeVectorStore(root=root)
    await ingest(store, docs)
    await store.close()
    for page in docs.iterdir():  # shorter pages: the re-sync upserts, then deletes stale chunks
        page.write_text(page.read_text("utf-8")[:900], encoding="utf-8")
    child = await asyncio.to_thread(
        subprocess.run, [sys.executable, "-c", RESYNC_KILLER, str(root), str(docs), point], cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, timeout=60)
    assert child.returncode == -signal.SIGKILL, child.stderr.decode()
    reference = InMemoryVectorStore()
    await ingest_path(docs, store=reference, embedder=FakeEmbedder(dimension=DIM), collection=COLLECTION,
                      base_url="https://b.example", progress=False)
    store = EdgeVectorStore(root=root)
    await ingest(store, docs, base_url="https://b.example")
    assert {k: (v.content_hash, v.chunk_ids) for k, v in (await store.documents(COLLECTION)).items()} == {
        k: (v.content_hash, v.chunk_ids) for k, v in (await reference.documents(COLLECTION)).items()}
    again = await ingest_path(docs, store=store, embedder=FakeEmbedder(dimension=DIM), collection=COLLECTION,
                              base_url="https://b.example", progress=False)
    assert again.chunks_added == again.chunks_updated == again.chunks_removed == 0
    await store.close()


async def test_a_shard_with_chunks_but_no_collection_json_is_not_thrown_away(tmp_path: Path) -> None:
    store = EdgeVectorStore(root=tmp_path)
    await ingest(store, write_docs(tmp_path / "docs"))
    await store.close()
    (tmp_path / COLLECTION / "collection.json").unlink()
    again = EdgeVectorStore(root=tmp_path)
    with pytest.raises(StoreUnavailableError, match=r"holds \d+ chunks but no collection.json.*delete"):
        await again.ensure_collection(COLLECTION, model_id="fake-hash-32", dimension=DIM)
    assert (tmp_path / COLLECTION / "shard").is_dir()
    await again.close()


# ----------------------------------------------------------------------------- item 9: folder deleted


async def test_writes_fail_loudly_when_the_folder_is_deleted_under_a_running_store(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "qdrant"
    store = EdgeVectorStore(root=root)
    docs = write_docs(tmp_path / "docs")
    await ingest(store, docs)
    assert (await store.health()).ok
    shutil.rmtree(root)
    with caplog.at_level(logging.ERROR), pytest.raises(StoreUnavailableError, match="deleted or replaced"):
        await ingest(store, docs, base_url="https://b.example")
    assert "was deleted or replaced" in caplog.text
    health = await store.health()
    assert not health.ok and not health.writable and "deleted while ragbot was running" in health.detail
    await store.close()
    restarted = EdgeVectorStore(root=root)
    assert not (await restarted.health()).ok  # nothing there until the next ingest
    assert await ingest(restarted, docs) > 0 and (await restarted.health()).ok
    await restarted.close()


# ----------------------------------------------------------------------------- item 10: size


async def test_ten_re_ingests_keep_the_store_near_its_clean_size(tmp_path: Path) -> None:
    root = tmp_path / "qdrant"
    docs = write_docs(tmp_path / "docs")
    sizes = []
    for run in range(11):  # a new base URL rewrites every chunk each time
        store = EdgeVectorStore(root=root)
        await ingest(store, docs, base_url=f"https://v{run}.example")
        await store.close()
        sizes.append(allocated(root))
    assert not (root / COLLECTION / "shard" / "wal").exists()
    assert sizes[-1] <= sizes[0] * 1.25, [round(s / 1e6, 2) for s in sizes]


# ----------------------------------------------------------------------------- item 11: full disk


async def test_low_free_space_refuses_writes_and_keeps_serving(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    store = EdgeVectorStore(root=tmp_path / "qdrant")
    docs = write_docs(tmp_path / "docs")
    chunks = await ingest(store, docs)
    monkeypatch.setattr(edge_guard, "free_bytes", lambda path: 10 * edge_guard.MIB)
    monkeypatch.setattr("core.stores.qdrant_embedded.free_bytes", lambda path: 10 * edge_guard.MIB)
    with caplog.at_level(logging.ERROR), pytest.raises(StoreFullError, match=r"10 MB free .* needs"):
        await ingest(store, docs, base_url="https://b.example")
    assert "refused: 10 MB free" in caplog.text
    info = await store.collection_info(COLLECTION)
    assert info is not None and info.points == chunks and await search(store) > 0
    with pytest.raises(StoreFullError, match="creating collection 'other' refused"):
        await store.ensure_collection("other", model_id="fake-hash-32", dimension=DIM)
    assert not (tmp_path / "qdrant" / "other" / "shard").exists()
    health = await store.health()
    assert health.ok and not health.writable and "ingests are refused" in health.detail
    await store.close()


async def test_enospc_while_creating_leaves_no_half_made_collection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(path: Path, value: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("core.stores.qdrant_embedded.write_json_durably", full)
    store = EdgeVectorStore(root=tmp_path)
    with pytest.raises(StoreFullError, match=r"disk holding .* is full"):
        await store.ensure_collection(COLLECTION, model_id="fake-hash-32", dimension=DIM)
    assert not (tmp_path / COLLECTION / "shard").exists()
    await store.close()


def test_engine_failures_map_to_store_errors(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    def engine_full() -> None:
        raise Exception("Service internal error: No space left on device (os error 28)")

    with caplog.at_level(logging.ERROR), pytest.raises(StoreFullError, match="saving failed: the disk"):
        engine_call("saving", tmp_path, engine_full)
    assert "is full" in caplog.text
    assert type(to_store_error(Exception("Resource temporarily unavailable (WouldBlock)"), action="x",
                               folder=tmp_path)) is StoreBusyError
    assert rule_for(OSError(errno.ENOENT, "gone")).error is StoreUnavailableError
    assert isinstance(to_store_error(OSError(errno.EDQUOT, "quota"), action="x", folder=tmp_path),
                      StoreFullError)


FULL_DISK = """
import asyncio, os, sys
from pathlib import Path
from core.errors import StoreFullError
from core.fakes import FakeEmbedder
from core.ingest.options import IngestOptions
from core.ingest.sync import ingest_path
from core.stores.qdrant_embedded import EdgeVectorStore
from tests.core.stores.test_edge_faults import search, write_docs

mnt = Path(sys.argv[1])

async def run(store, docs, url):
    return await ingest_path(docs, store=store, embedder=FakeEmbedder(dimension=32), collection="kb",
                             base_url=url, progress=False, options=IngestOptions(prune=True))

async def main():
    docs = write_docs(Path(sys.argv[2]))
    store = EdgeVectorStore(root=mnt / "qdrant")
    await run(store, docs, "https://a.example")
    print("first ingest ok", flush=True)
    free = os.statvfs(mnt).f_bavail * os.statvfs(mnt).f_frsize
    with open(mnt / "filler", "wb") as filler:
        os.posix_fallocate(filler.fileno(), 0, free - 8 * 1024 * 1024)
    try:
        await run(store, docs, "https://b.example")
    except StoreFullError as exc:
        print("refused:", exc, flush=True)
    print("search hits", await search(store), flush=True)
    try:
        await store.ensure_collection("other", model_id="fake-hash-32", dimension=32)
    except StoreFullError:
        print("create refused, folder left:", (mnt / "qdrant" / "other" / "shard").exists(), flush=True)
    await store.close()

asyncio.run(main())
"""


def _tmpfs_allowed(probe: Path) -> bool:
    if sys.platform != "linux" or os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    probe.mkdir()
    done = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                           f"mount -t tmpfs -o size=1m tmpfs {probe}"], capture_output=True, timeout=30)
    return done.returncode == 0


def test_full_tmpfs_gives_an_error_not_sigbus(tmp_path: Path) -> None:
    """A real full disk (a 256 MB tmpfs in a private mount namespace), where the OS allows it."""
    mnt = tmp_path / "mnt"
    if not _tmpfs_allowed(mnt):
        pytest.skip("needs root, unshare and tmpfs mounts (Linux)")
    script = tmp_path / "full_disk.py"
    script.write_text(FULL_DISK, encoding="utf-8")
    child = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c",
         'mount -t tmpfs -o size=256m tmpfs "$0" && exec "$1" "$2" "$0" "$3"',
         str(mnt), sys.executable, str(script), str(tmp_path / "docs")],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=120)
    assert child.returncode == 0, f"exit {child.returncode} (135/-7 is SIGBUS): {child.stderr[-2000:]}"
    out = child.stdout
    assert "first ingest ok" in out
    assert "refused: saving" in out or "refused: removing" in out, out
    assert "search hits 0" not in out and "search hits" in out
    assert "create refused, folder left: False" in out


# ----------------------------------------------------------------------------- item 13: panics


class PanicException(BaseException):
    """Stands in for ``pyo3_runtime.PanicException`` (that class only exists once Rust panicked)."""


def test_a_panic_becomes_store_unavailable_and_is_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def panics() -> None:
        raise PanicException("assertion failed: byte_offset < page_size_bytes")

    with caplog.at_level(logging.ERROR), pytest.raises(StoreUnavailableError, match="looks damaged"):
        engine_call("searching collection 'kb'", tmp_path, panics)
    assert "engine panic: assertion failed" in caplog.text

    def interrupted() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        engine_call("searching", tmp_path, interrupted)


async def test_a_corrupted_store_file_gives_store_unavailable(tmp_path: Path) -> None:
    store = EdgeVectorStore(root=tmp_path)
    await ingest(store, write_docs(tmp_path / "docs"))
    await store.close()
    segments = tmp_path / COLLECTION / "shard" / "segments"
    tracker = next(segments.glob("*/vector_storage-bm25/store/tracker.dat"))
    data = bytearray(tracker.read_bytes())
    rnd = random.Random(1)
    for i in range(0, min(len(data), 200_000), 7):
        data[i] = rnd.randrange(256)
    tracker.write_bytes(bytes(data))
    damaged = EdgeVectorStore(root=tmp_path)
    try:
        await damaged.collection_info(COLLECTION)
        await search(damaged)
        await damaged.documents(COLLECTION)
    except StoreError as exc:
        assert isinstance(exc, StoreUnavailableError), exc
    await damaged.close()


# ----------------------------------------------------------------------------- health()


async def test_health_of_every_backend(tmp_path: Path) -> None:
    memory = InMemoryVectorStore()
    assert (await memory.health()).ok
    await memory.close()
    assert not (await memory.health()).ok

    edge = EdgeVectorStore(root=tmp_path / "none")
    health = await edge.health()
    assert not health.ok and "run `ragbot ingest" in health.detail and health.free_bytes
    assert json.dumps(health.as_dict())
    await edge.close()
    assert "closed" in (await edge.health()).detail

    local = QdrantServerStore(url=":memory:")
    assert (await local.health()).ok
    await local.close()
    unreachable = QdrantServerStore(url="http://127.0.0.1:9", timeout=2)
    health = await unreachable.health()
    assert not health.ok and "127.0.0.1:9" in health.detail
    await unreachable.close()


async def test_collection_info_reports_a_deleted_folder(tmp_path: Path) -> None:
    """What /healthz's probe and `ragbot doctor` read: a deleted folder is an error, not a healthy count."""
    store = EdgeVectorStore(root=tmp_path / "qdrant")
    await ingest(store, write_docs(tmp_path / "docs", pages=2))
    shutil.rmtree(tmp_path / "qdrant")
    with pytest.raises(StoreUnavailableError, match="deleted or replaced while ragbot was running"):
        await store.collection_info(COLLECTION)
    await store.close()


async def test_a_second_process_is_told_the_store_is_busy(tmp_path: Path) -> None:
    """Shards without a WAL have no engine lock: ragbot's own flock keeps one process per collection."""
    store = EdgeVectorStore(root=tmp_path)
    await ingest(store, write_docs(tmp_path / "docs", pages=2))
    second = EdgeVectorStore(root=tmp_path)  # its own open file: flock refuses it like another process
    with pytest.raises(StoreBusyError, match="open in another ragbot process"):
        await second.collection_info(COLLECTION)
    await store.close()
    assert (await second.collection_info(COLLECTION)) is not None
    await second.close()
