"""Links in quoted docs prose, as chat can follow them."""

from __future__ import annotations

import pytest

from core.answer.excerpt import choose_excerpts
from core.answer.links import link_labels, shown_links
from core.models import RetrievedChunk

PAGE = "https://docs.example.dev/guides/cache/"


@pytest.mark.parametrize(("prose", "shown"), [
    ("See the [GitHub guide](../integration/github.md#caching).", "See the GitHub guide."),
    ("It is [on the `PATH`](#tool-executables).", f"It is [on the `PATH`]({PAGE}#tool-executables)."),
    ("See [](../file-types/myst-notebooks.md) and [](my-label).", "See myst-notebooks and my-label."),
    ("Set [`[build-system]`](pyproject.md \"The build\") first.", "Set `[build-system]` first."),
    ("![The build command](../images/build.png)", ""),
    ("![](https://cdn.example/arch.png) ![Arch](https://cdn.example/a.png)",
     "[image](https://cdn.example/arch.png) [Arch](https://cdn.example/a.png)"),
    # Slack and Discord link web addresses only.
    ("Read [the spec](https://peps.python.org/pep-0621/) or [mail us](mailto:a@b.c).",
     "Read [the spec](https://peps.python.org/pep-0621/) or mail us."),
    ("Write to [](mailto:team@example.dev).", "Write to team@example.dev."),
    ("[![Diagram](img/arch.png)](img/arch.png)", ""),  # a picture linking to itself
    ("[![Logo](logo.png)](https://site.dev) home", "[Logo](https://site.dev) home"),
    ("A [parent](../) and an escaped \\[x\\](y.md).", "A parent and an escaped \\[x\\](y.md)."),
    ("Write `[text](target.md)` or ``[](label)`` to link.",
     "Write `[text](target.md)` or ``[](label)`` to link."),
    ("A [link to a folder](../reference/).", "A link to a folder."),
])
def test_a_quoted_link_keeps_only_a_target_chat_can_open(prose: str, shown: str) -> None:
    assert shown_links(prose, page_url=PAGE) == shown


def test_an_anchor_of_a_local_file_reads_as_its_text() -> None:
    assert shown_links("Go [down](#later).", page_url="file:///docs/guide.md") == "Go down."


def test_an_answer_shows_no_relative_link_and_no_picture_it_cannot_show() -> None:
    content = ("To keep the cache small on CI, run `uv cache prune --ci` before saving it; see the "
               "[GitHub guide](../integration/github.md#caching).\n\n![A cache diagram](cache.png)\n\n"
               "The cache is pruned of wheels it can rebuild; see [pruning](#pruning) for what stays.")
    chunk = RetrievedChunk(chunk_id="c1", content=content, score=0.8, url=PAGE, title="Cache",
                           section="Cache > CI", chunk_index=0, source_document="cache.md")
    [excerpt] = choose_excerpts("how do i prune the uv cache on ci", [chunk])
    assert "](../" not in excerpt and "cache.png" not in excerpt and "A cache diagram" not in excerpt
    assert "see the GitHub guide. [1]" in excerpt and f"[pruning]({PAGE}#pruning)" in excerpt
    assert "\n\n\n" not in excerpt


@pytest.mark.parametrize(("text", "read"), [
    ("See [the guide](guide.md \"Deployment guide\") for more.", "See the guide for more."),
    ("Read [](installation) first.", "Read installation first."),  # MyST fills the text in
    ("Write a link as `[text](#heading-anchor)` here.", "Write a link as `[text](#heading-anchor)` here."),
    ("![logo](img/a.png) and [uv](https://docs.astral.sh/uv/)", "logo and uv"),
    ("No link here.", "No link here."),
])
def test_prose_is_read_with_each_link_as_its_text(text: str, read: str) -> None:
    assert link_labels(text) == read
