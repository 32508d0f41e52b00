from __future__ import annotations

from pathlib import Path

from core.ingest.loaders import load_file
from core.ingest.markdown import parse_markdown
from core.ingest.reflinks import definitions, inline_links

PAGE = """# Install

Go to [the install page][install] <!-- ignore --> and read [`std::io::Stdin`][iostdin],
[Prelude][] or [prelude]. ![logo][Logo]

```rust
let install = [install];
```

[install]: https://www.rust-lang.org/tools/install
[iostdin]: ../std/io/struct.Stdin.html "Stdin"
  [Prelude]: <../std/prelude/index.html>
[logo]: img/logo.png
"""


def test_references_become_inline_links_and_definitions_go() -> None:
    sections = parse_markdown(PAGE).sections
    assert sections[0].blocks == [
        "Go to [the install page](https://www.rust-lang.org/tools/install)  and read "
        "[`std::io::Stdin`](../std/io/struct.Stdin.html),\n[Prelude](../std/prelude/index.html) or "
        "[prelude](../std/prelude/index.html). ![logo](img/logo.png)",
        "```rust\nlet install = [install];\n```",  # code is code
    ]


def test_what_no_definition_names_stays_as_written() -> None:
    prose = ("Index a[0][1], `m`[0][1], task [x] done, ![img][nope], press [Ctrl][C], match [a-z][a-z0-9-]* "
             "and [label]: not a definition here.")
    assert inline_links(prose, definitions(prose)) == prose
    assert inline_links("See [docs].\n\n[docs]: https://d.test", {"docs": "https://d.test"}) == (
        "See [docs](https://d.test).\n\n")


def test_wrapped_text_badges_code_spans_and_footnotes() -> None:
    defined = {"ch6": "ch06.md", "build-badge": "b.svg", "build-url": "https://ci.test",
               "dependencies": "d.md", "b": "b.md", "stdin": "s.html"}
    assert inline_links("see [Chapter\n6][ch6]", defined) == "see [Chapter\n6](ch06.md)"
    assert inline_links("[Chapter\n\n6][ch6]", defined) == "[Chapter\n\n6][ch6]"  # no link spans a paragraph
    assert inline_links("[![Build][build-badge]][build-url]", defined) == "[![Build](b.svg)](https://ci.test)"
    assert inline_links("Add a `[dependencies]` table, `m[a][b]`, [`Stdin`][stdin].", defined) == (
        "Add a `[dependencies]` table, `m[a][b]`, [`Stdin`](s.html).")
    assert definitions("[^1]: Deprecated.\n[x]: https://x.test") == {"x": "https://x.test"}


def test_a_label_after_a_space_or_on_the_next_line_is_a_full_reference_as_mkdocs_reads_it() -> None:
    defined = {"google fonts": "https://fonts.test", "docs": "d.md", "api": "a.md"}
    assert inline_links("A [Google Font]\n[Google Fonts] is used.", defined) == (
        "A [Google Font](https://fonts.test) is used.")
    assert inline_links("Use [it] [docs].", defined) == "Use [it](d.md)."
    # Two defined labels side by side are two links; an undefined label after text changes nothing.
    assert inline_links("[docs] [api]", defined) == "[docs](d.md) [api](a.md)"
    assert inline_links("task [x] [y] done", defined) == "task [x] [y] done"
    # A task's box or an index before a defined label, or more than one space, is no link text.
    for prose in ("- [x] [docs] updated", "- [ ] [docs] updated", "a [0] [api]", "the [guide]   [docs] now"):
        linked = prose.replace("[docs]", "[docs](d.md)").replace("[api]", "[api](a.md)")
        assert inline_links(prose, defined) == linked
    assert inline_links("[a]" + " " * 40_000 + "x", {"b": "u"}).endswith("x")  # one pass over the spaces


def test_a_code_span_may_be_the_label_and_a_nul_is_no_marker() -> None:
    url = "https://x.test"
    for text in ("[`x`]", "[`x`][]", "[t][`x`]"):
        assert inline_links(text, {"`x`": url}).endswith(f"]({url})")
    assert parse_markdown("Use [`x`] now.\n\n[`x`]: https://x.test").sections[0].blocks == [
        "Use [`x`](https://x.test) now."]
    # The page's own NULs (CommonMark reads them as U+FFFD) never stand for a span set aside.
    assert inline_links("\x000\x00 [`q`][a]", {"a": "u"}) == "\ufffd0\ufffd [`q`](u)"


def test_reading_reference_links_stays_linear_on_runs_of_brackets() -> None:
    # Every "[" scanned to the end of its line: 100,000 of them took minutes.
    for text in ("[" * 100_000, "[a\n" * 30_000, "[" * 50_000 + "a" + "]" * 50_000):
        assert inline_links(text, {"a": "u"}).count("[") >= text.count("[") - 1


def test_pages_defining_links_are_chunked_again_once(tmp_path: Path) -> None:
    page = tmp_path / "install.md"
    page.write_text(PAGE, encoding="utf-8")
    assert load_file(page, root=tmp_path).parser == "reflinks-3+markup-2"  # the page holds a comment too


def test_a_cross_reference_the_site_resolves_shows_its_text() -> None:
    # mkdocs-autorefs: "[text][python.path]" and "[heading][]" are links the build makes.
    prose = "Call [`errors()`][pydantic_core.ValidationError.errors] or see [Unions][] (a [b][fields])."
    assert inline_links(prose, definitions(prose)) == "Call `errors()` or see Unions (a b)."
    assert parse_markdown("| f | see |\n|---|---|\n| x | [`x()`][m.x] |\n").sections[0].blocks == [
        "| f | see |\n|---|---|\n| x | `x()` |"]


def test_a_page_making_cross_references_is_read_again(tmp_path: Path) -> None:
    page = tmp_path / "a.md"
    page.write_text("# A\n\nSee [Models][concepts.models].\n", encoding="utf-8")
    assert load_file(page, root=tmp_path).parser == "reflinks-3"
