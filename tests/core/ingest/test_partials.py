"""Docusaurus' partials: their text stands where a page shows them, and they are no pages of their own."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.ingest.chunking import document_hash
from core.ingest.loaders import load_file
from core.ingest.partials import is_partial
from core.ingest.walk import scan_folder

PARTIAL = """---
title: never shown
---
:::caution

This tutorial shows older patterns; see [the modern way](../tutorials/modern.md), [the site](/docs/x)
and `handlers[0](event)`.

:::
"""

PAGE = """---
title: Part 1
---
import Warning from '../../components/_Warning.mdx';
import Missing from './_Missing.mdx';

# Part 1

Intro.

<Warning />

```jsx
<Warning />
```

<Missing />
"""


def _docs(tmp_path: Path) -> Path:
    (tmp_path / "components").mkdir()
    (tmp_path / "tutorials" / "basics").mkdir(parents=True)
    (tmp_path / "components" / "_Warning.mdx").write_text(PARTIAL, encoding="utf-8")
    (tmp_path / "tutorials" / "basics" / "part-1.md").write_text(PAGE, encoding="utf-8")
    (tmp_path / "tutorials" / "_index.md").write_text("# Tutorials\n", encoding="utf-8")
    return tmp_path


def test_a_partial_s_text_stands_where_the_page_shows_it(tmp_path: Path) -> None:
    root = _docs(tmp_path)
    doc = load_file(root / "tutorials" / "basics" / "part-1.md", root=root, base_url="https://d.test")
    assert doc.sections[0].blocks == [
        "Intro.",
        "Caution: This tutorial shows older patterns; see [the modern way](https://d.test/tutorials/modern), "
        "[the site](https://d.test/docs/x)\nand `handlers[0](event)`.",
        "```jsx\n<Warning />\n```",  # code shows the component as written
    ]
    assert "partials-1" in doc.parser.split("+")


def test_a_page_is_stored_again_when_a_partial_it_shows_changes(tmp_path: Path) -> None:
    root = _docs(tmp_path)
    page = root / "tutorials" / "basics" / "part-1.md"
    before = document_hash(load_file(page, root=root))
    (root / "components" / "_Warning.mdx").write_text("Another warning.\n", encoding="utf-8")
    assert document_hash(load_file(page, root=root)) != before  # the page's own bytes did not change


def test_a_loop_of_links_on_an_import_path_is_no_traceback(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    page = tmp_path / "page.mdx"
    page.write_text("import Loop from './a/_Loop.mdx';\n\n# P\n\nText.\n\n<Loop />\n")
    assert load_file(page, root=tmp_path).sections[0].blocks == ["Text."]


def test_partials_are_no_pages_but_hugo_s_section_index_is(tmp_path: Path) -> None:
    root = _docs(tmp_path)
    names = sorted(p.relative_to(root).as_posix() for p in scan_folder(root).files)
    assert names == ["tutorials/_index.md", "tutorials/basics/part-1.md"]


@pytest.mark.parametrize(("name", "partial"), [
    ("_Warning.mdx", True), ("_snippet.md", False), ("_index.md", False), ("_index.mdx", False),
    ("Warning.mdx", False), ("_notes.rst", False),
])
def test_which_files_are_partials(name: str, partial: bool) -> None:
    assert is_partial(Path("docs") / name) is partial


def test_a_partial_including_itself_stops(tmp_path: Path) -> None:
    (tmp_path / "_Loop.mdx").write_text("import Loop from './_Loop.mdx';\n\nLoop text.\n\n<Loop />\n")
    page = tmp_path / "page.mdx"
    page.write_text("import Loop from './_Loop.mdx';\n\n# P\n\n<Loop />\n")
    text = "\n".join(load_file(page, root=tmp_path).sections[0].blocks)
    assert text.count("Loop text.") == 2  # read twice deep, then left as the tag (dropped)


def test_a_mintlify_snippet_stands_where_imported_from_the_root_and_is_no_page(tmp_path: Path) -> None:
    site = tmp_path / "docs"
    (site / "snippets" / "providers").mkdir(parents=True)
    (site / "guides" / "alerts").mkdir(parents=True)
    (site / "mint.json").write_text("{}", encoding="utf-8")
    (site / "snippets" / "providers" / "slack.mdx").write_text(
        "{/* generated */}\n\n## In workflows\n\nSend with [the API](https://api.test/send) or "
        "[the guide](../../guides/send.md).\n", encoding="utf-8")
    page = site / "guides" / "alerts" / "slack.mdx"
    page.write_text("import Snip from '/snippets/providers/slack.mdx';\n\n# Slack\n\nIntro.\n\n"
                    '<Snip provider="slack" />\n', encoding="utf-8")
    for root in (site, tmp_path):  # the docs' folder, or the repository above it
        doc = load_file(page, root=root)
        blocks = [block for section in doc.sections for block in section.blocks]
        assert blocks == ["Intro.", "Send with [the API](https://api.test/send) or [the guide](../send.md)."]
        assert [p.name for p in scan_folder(root).files] == ["slack.mdx"]
    assert not is_partial(tmp_path / "snippets" / "page.mdx")  # no Mintlify site: a page like any other


def test_a_partial_imported_through_an_alias_stands_where_the_page_shows_it(tmp_path: Path) -> None:
    (tmp_path / "components").mkdir()
    (tmp_path / "app" / "docs" / "start").mkdir(parents=True)
    (tmp_path / "components" / "install.mdx").write_text("Run `npm i nextra`.\n", encoding="utf-8")
    page = tmp_path / "app" / "docs" / "start" / "page.mdx"
    for alias in ("@components", "@/components", "~/components"):
        page.write_text(f"import Install from '{alias}/install.mdx'\n\n# Start\n\n<Install />\n",
                        encoding="utf-8")
        assert load_file(page, root=tmp_path).sections[0].blocks == ["Run `npm i nextra`."]
