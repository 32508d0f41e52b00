"""Chunk rules at ingest (issue 12 gap 6): a chunk that would break questions is repaired or skipped."""

from __future__ import annotations

from pathlib import Path

from core.fakes import FakeEmbedder, InMemoryVectorStore
from core.ingest.checks import check_chunks, chunk_problem, repaired_url
from core.ingest.chunking import chunk_document
from core.ingest.loaders import load_file
from core.ingest.sync import ingest_path
from core.models import MAX_TEXT_LENGTH, DocumentChunk, IngestSummary
from core.retrieval.retriever import chunk_from_payload

COLLECTION = "docs"


def chunk(**kw: object) -> DocumentChunk:
    data: dict[str, object] = {"chunk_id": "c0", "content": "Run make demo.", "title": "A",
                               "url": "https://ragbot.dev/docs/a", "chunk_index": 0,
                               "source_document": "a.md", "content_hash": "h", **kw}
    return DocumentChunk.model_validate(data)


def test_a_url_with_spaces_is_repaired() -> None:
    assert repaired_url("https://ragbot.dev/my docs/a b?x=1 2#Quick start") == (
        "https://ragbot.dev/my%20docs/a%20b?x=1%202#Quick%20start")
    assert repaired_url("https://ragbot.dev/already%20fine") == "https://ragbot.dev/already%20fine"
    checked = check_chunks([chunk(url="https://ragbot.dev/my docs/a")])
    assert checked.repaired == 1 and checked.invalid == []
    assert checked.chunks[0].url == "https://ragbot.dev/my%20docs/a"
    assert chunk_problem(checked.chunks[0]) is None


def test_what_cannot_be_repaired_is_skipped_with_a_named_reason() -> None:
    good = chunk()
    long = chunk(chunk_id="c1", chunk_index=1, content="x" * (MAX_TEXT_LENGTH + 1))
    scheme = chunk(chunk_id="c2", chunk_index=2, url="ftp://ragbot.dev/a")
    titled = chunk(chunk_id="c3", chunk_index=3, title="T" * 1001)
    checked = check_chunks([good, long, scheme, titled])
    assert [c.chunk_id for c in checked.chunks] == ["c0"] and checked.repaired == 0
    assert checked.invalid == [
        "a.md#1: content: String should have at most 50000 characters",
        "a.md#2: url: url 'ftp://ragbot.dev/a' is not an http(s):// or file:// URL",
        "a.md#3: title: String should have at most 1000 characters",
    ]


def test_the_rules_are_those_questions_apply() -> None:
    """What passes at ingest is exactly what reads back as a RetrievedChunk at question time."""
    for candidate in (chunk(), chunk(url="https://ragbot.dev/my docs/a"), chunk(content="y" * 50_001)):
        checked = check_chunks([candidate])
        for kept in checked.chunks:
            chunk_from_payload(kept.payload(), 0.5)
        assert len(checked.chunks) + len(checked.invalid) == 1


def test_a_long_lead_in_beside_a_block_at_the_limit_stays_under_it(tmp_path: Path) -> None:
    # A lead-in under 200 characters rides with the block it introduces (chunker v2): beside a
    # block cut at the store's limit it made a chunk of 50,133 characters.
    lead = ("Before you start, copy the generated configuration below into your project; every key is "
            "described in the reference. Add the following file:")
    body = "\n".join(f"key_{i}: value number {i} of the generated file" for i in range(1500))
    code = f"```yaml\n{body}\n```"
    (tmp_path / "big.md").write_text(f"# Big\n\n## Config\n\n{lead}\n\n{code}\n", encoding="utf-8")
    chunks = chunk_document(load_file(tmp_path / "big.md", root=tmp_path, base_url=None))
    assert len(code) > MAX_TEXT_LENGTH
    assert all(len(c.content) <= MAX_TEXT_LENGTH for c in chunks)
    assert check_chunks(chunks).invalid == []


async def test_ingest_repairs_a_base_url_with_a_space_and_reports_it(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "install.md").write_text("# Install\n\nRun make demo to install ragbot.\n", encoding="utf-8")
    store = InMemoryVectorStore()
    summary = await ingest_path(docs, store=store, embedder=FakeEmbedder(), collection=COLLECTION,
                                base_url="https://ragbot.dev/my docs", progress=False)
    assert summary.chunks_added == 1 and summary.chunks_repaired == 1 and summary.chunks_invalid == []
    assert "1 chunk URL(s) repaired" in summary.line()
    (stored,) = [payload for _, payload in store._points[COLLECTION].values()]
    assert stored["url"].startswith("https://ragbot.dev/my%20docs/")


def test_summary_line_names_skipped_chunks() -> None:
    summary = IngestSummary(files=1, chunks_invalid=["a.md#1: content: too long"])
    assert summary.line().endswith("; 1 invalid chunk(s) skipped")
