"""What ingest learns of a collection's own vocabulary, used end to end: acronyms and changelogs.

A small generated docs set (sixty pages, our own text) is ingested through the real
runtime; questions go through ``pipeline.search`` and ``pipeline.answer``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bots.runtime import Runtime
from core.models import QueryRequest, ResponseStatus
from tests.support.ingested import ingest_folder, runtime_over

FILLER_PAGES = 60

PAGES = {
    "features.md": "# Features\n\nThe simulator offers Synthetic Data Generation (SDG) among its tools.\n",
    "synthetic-data.md": (
        "# Synthetic data\n\n## Rendering labelled images\n\n"
        "Synthetic data generation renders labelled camera images of your scene, with ground "
        "truth for every object, so perception models train without hand labelling.\n"
    ),
    "cors.md": (
        "# CORS\n\n## Allow credentials\n\n"
        "Set `allow_credentials=True` on the middleware so cookies are sent with cross-origin "
        "requests; the allowed origins must then be listed one by one.\n"
    ),
    "release-notes.md": (
        "# Release Notes\n\n## 0.23.0 (2019-05-21)\n\n"
        "* Allow cookies and credentials for cross-origin requests in the middleware.\n"
    ),
}


@pytest.fixture(scope="module")
def docs_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Sixty unrelated pages plus the pages above, ingested once for the module."""
    root = tmp_path_factory.mktemp("vocabulary")
    docs = root / "docs"
    docs.mkdir()
    for i in range(FILLER_PAGES):
        (docs / f"topic-{i}.md").write_text(
            f"# Topic {i}\n\nThe widget number {i} stores item {i} in bucket {i * 7}.\n", encoding="utf-8")
    for name, text in PAGES.items():
        (docs / name).write_text(text, encoding="utf-8")
    return ingest_folder(docs, root / "data", base_url="https://docs.example")


@pytest.fixture
async def runtime(docs_data: Path) -> AsyncIterator[Runtime]:
    async with runtime_over(docs_data) as rt:
        yield rt


async def test_an_acronym_finds_the_pages_that_spell_it_out(runtime: Runtime) -> None:
    found = await runtime.pipeline.search(QueryRequest(query_text="whats sdg good for?"))
    assert "sdg synthetic data generation" in found.searched_text
    assert any(c.source_document == "synthetic-data.md" for c in found.results)


async def test_a_how_to_question_is_answered_from_the_guide_not_the_changelog(runtime: Runtime) -> None:
    response = await runtime.pipeline.answer("how do i allow cookies for cross-origin requests?")
    assert response.status is ResponseStatus.ANSWERED
    assert all("release-notes" not in s.url for s in response.sources)
    assert "allow_credentials" in response.response_text
    found = await runtime.pipeline.search(QueryRequest(
        query_text="which release allowed cookies for cross-origin requests?"))
    assert any(c.source_document == "release-notes.md" for c in found.results)
