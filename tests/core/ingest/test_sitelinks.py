from __future__ import annotations

from pathlib import Path

from core.ingest.loaders import load_file

PAGE = """# Models

See [fields](../concepts/fields.md#defaults), [`Field()`](fields.md), [start](/getting-started/),
[the API](https://x.test/api), [above](#top), ![logo](img/logo.png), [code](../../src/app.py),
[outside](../../other/page.md) and `[not](a.md)`.

```md
[as written](fields.md)
```
"""


def test_links_to_pages_of_the_docs_get_the_site_addresses(tmp_path: Path) -> None:
    page = tmp_path / "guide" / "models.md"
    page.parent.mkdir()
    page.write_text(PAGE, encoding="utf-8")
    doc = load_file(page, root=tmp_path, base_url="https://docs.test/latest")
    assert doc.sections[0].blocks == [
        "See [fields](https://docs.test/latest/concepts/fields#defaults), "
        "[`Field()`](https://docs.test/latest/guide/fields), [start](https://docs.test/getting-started/),\n"
        "[the API](https://x.test/api), [above](#top), ![logo](img/logo.png), [code](../../src/app.py),\n"
        "[outside](../../other/page.md) and `[not](a.md)`.",
        "```md\n[as written](fields.md)\n```",
    ]
    assert doc.parser.endswith("site-links-2")
    local = load_file(page, root=tmp_path)  # no site: file:// addresses, links as written
    assert local.sections[0].blocks[0].startswith("See [fields](../concepts/fields.md")


def test_a_link_whose_text_wraps_a_line_gets_the_site_address_too(tmp_path: Path) -> None:
    (tmp_path / "guide").mkdir()
    (tmp_path / "customization.md").write_text("# Customization\n\nBlocks.\n", encoding="utf-8")
    page = tmp_path / "guide" / "theme.md"
    page.write_text("# Theme\n\nSee [overriding\nblocks](../customization.md#blocks).\n", encoding="utf-8")
    doc = load_file(page, root=tmp_path, base_url="https://docs.test")
    assert doc.sections[0].blocks == ["See [overriding\nblocks](https://docs.test/customization#blocks)."]


def test_a_link_naming_the_path_a_site_serves_finds_its_page(tmp_path: Path) -> None:
    (tmp_path / "guide").mkdir()
    (tmp_path / "config").mkdir()
    for name in ("guide/build.md", "config/index.md", "config/server.md", "guide/my page.md"):
        (tmp_path / name).write_text("# P\n\ntext\n", encoding="utf-8")
    page = tmp_path / "guide" / "ssr.md"
    page.write_text("# SSR\n\nSee [base](./build#public-base), [b](build.html), [c](../config/), "
                    "[s](/config/server.md#port), [m](my%20page.md) and [none](./missing).\n",
                    encoding="utf-8")
    doc = load_file(page, root=tmp_path, base_url="https://vite.test")
    assert doc.sections[0].blocks == [
        "See [base](https://vite.test/guide/build#public-base), [b](https://vite.test/guide/build), "
        "[c](https://vite.test/config), [s](https://vite.test/config/server#port), "
        "[m](https://vite.test/guide/my%20page) and [none](./missing)."]


def test_a_link_goes_where_the_linked_page_s_slug_or_id_puts_it(tmp_path: Path) -> None:
    (tmp_path / "usage").mkdir()
    tests = tmp_path / "usage" / "WritingTests.mdx"
    tests.write_text("---\nid: writing-tests\n---\n# T\n\nx\n", encoding="utf-8")
    (tmp_path / "usage" / "Old.md").write_text("---\nslug: /guides/new\n---\n# O\n\nx\n", encoding="utf-8")
    (tmp_path / "usage" / "Bad.md").write_bytes(b"---\nid: \xff\n---\n")  # not UTF-8: its path's address
    page = tmp_path / "intro.md"
    page.write_text("# I\n\nSee [tests](usage/WritingTests.mdx#mocks), [old](./usage/Old.md) and "
                    "[bad](usage/Bad.md).\n", encoding="utf-8")
    doc = load_file(page, root=tmp_path, base_url="https://redux.test")
    assert doc.sections[0].blocks == [
        "See [tests](https://redux.test/usage/writing-tests#mocks), [old](https://redux.test/guides/new) and "
        "[bad](https://redux.test/usage/Bad)."]


def test_reading_links_stays_linear(tmp_path: Path) -> None:
    page = tmp_path / "a.md"
    page.write_text("# A\n\n" + "[" * 40_000 + "](x\n", encoding="utf-8")
    assert load_file(page, root=tmp_path, base_url="https://d.test").sections  # 16 s before


def test_a_link_never_looks_outside_the_docs_nor_fails_the_page(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (tmp_path / "secret.md").write_text("# S\n", encoding="utf-8")
    page = docs / "index.md"
    outside = f"%2F{str(tmp_path)[1:]}/secret"  # the file above the docs, its path written escaped
    page.write_text(f"# I\n\n[a](%2E%2E/secret) [b]({'a' * 300}) [c]({outside})\n", encoding="utf-8")
    block = load_file(page, root=docs, base_url="https://d.test").sections[0].blocks[0]
    # Left as written: no page of the docs (and a name too long for the file system fails nothing).
    assert block == f"[a](%2E%2E/secret) [b]({'a' * 300}) [c]({outside})"
