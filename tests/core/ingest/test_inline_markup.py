"""Inline markup read as a docs site shows it: references, ``<code>``, comments, alerts, tabs, footnotes."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.ingest.inline import decode_entities
from core.ingest.loaders import load_file
from core.ingest.markdown import parse_markdown


@pytest.mark.parametrize(
    ("line", "read"),
    [
        ("taxonomy labels &mdash; that is, tags", "taxonomy labels \u2014 that is, tags"),
        ("Tom &amp; Jerry &#8594; &#x2192; &lt;div&gt;", "Tom & Jerry \u2192 \u2192 <div>"),
        ("an unknown &s2; name, a bare & and &amp without a semicolon", None),
        ("keep `&amp;` and ``a &lt; b`` as code, read &lt; here",
         "keep `&amp;` and ``a &lt; b`` as code, read < here"),
        ("| `|` | <code>pat &vert; pat</code> &#124; x |", "| `|` | <code>pat \\| pat</code> \\| x |"),
        # A pipe written as a reference is no cell's edge.
        ("a || b, written a &#124;&#124; b", "a || b, written a \\|\\| b"),
        ("&#42;a&#42; &#91;x&#93;(u) C:&#92;", "\\*a\\* \\[x\\](u) C:\\\\"),
    ],
)
def test_character_references_read_as_a_browser_shows_them(line: str, read: str | None) -> None:
    assert decode_entities(line) == (line if read is None else read)


def test_a_page_reads_its_references_outside_code_blocks() -> None:
    page = parse_markdown(
        "# Pipes &amp; filters\n\n| op | example |\n|---|---|\n| <code>&vert;</code> | "
        "<code>a &vert; b</code> |\n\nOr &mdash; in a block:\n\n```html\n&lt;p&gt;\n```\n")
    assert page.h1 == "Pipes & filters"
    assert page.sections[0].blocks[0].split("\n")[2] == "| `\\|` | `a \\| b` |"
    assert "Or \u2014 in a block:" in page.sections[0].blocks
    assert "```html\n&lt;p&gt;\n```" in page.sections[0].blocks


def blocks(markdown: str) -> list[str]:
    return [block for section in parse_markdown(markdown).sections for block in section.blocks]


def test_html_code_reads_as_a_code_span_with_its_text_as_shown() -> None:
    read = blocks(
        "| Default | CLI |\n|---|---|\n| `\"css\"` | <code>--ws \\<css&#124;strict></code> |\n\n"
        "Use <code>a &lt; b</code>, <code>multi\nline</code>, <code>has `tick`</code> and "
        "<code><b>x</b></code>.")
    assert read[0].split("\n")[2] == '| `"css"` | `--ws <css\\|strict>` |'
    assert read[1] == "Use `a < b`, multi\nline, has `tick` and x."


def test_a_comment_shown_in_a_code_span_stays_and_one_in_prose_goes() -> None:
    read = blocks("Put `<!-- prettier-ignore -->` <!-- not this --> before it.\n\n<!-- a `span` -->Then.")
    assert read == ["Put `<!-- prettier-ignore -->`  before it.", "Then."]


def test_alerts_tabs_and_footnotes_read_as_the_site_shows_them() -> None:
    read = blocks(
        "> [!NOTE]\n> Back up first.\n\n> [!tip]- Install tip\n> Use the extended edition.\n\n"
        "> [!WARNING]\n>\n> Upgrading deletes the cache.\n\n"
        "> [!NOTE]\n> | a | b |\n> |---|---|\n> | 1 | 2 |\n\n"
        "<Tabs>\n<TabItem value=\"npm\">\n\n```bash\nnpm i\n```\n\n</TabItem>\n</Tabs>\n\n"
        "No flashes ([FOUC][]) when pages load.[^fouc]\n\n[^fouc]: Also called a flash.\n\n"
        "[FOUC]:\n  https://en.wikipedia.org/wiki/FOUC\n")
    assert read == [
        # An untitled alert's kind and its first paragraph are one, as the site shows them.
        "> Note: Back up first.", "> Install tip\n>\n> Use the extended edition.",
        "> Warning: Upgrading deletes the cache.", "> Note:\n> | a | b |\n> |---|---|\n> | 1 | 2 |",
        "```bash title=\"npm\"\nnpm i\n```",
        "No flashes ([FOUC](https://en.wikipedia.org/wiki/FOUC)) when pages load.", "Also called a flash."]


def test_pages_with_references_are_chunked_again_once(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A\n\nOne &mdash; two.\n", encoding="utf-8")
    (tmp_path / "b.md").write_text("# B\n\nOne & two.\n", encoding="utf-8")
    assert load_file(tmp_path / "a.md", root=tmp_path).parser == "markup-2"
    assert load_file(tmp_path / "b.md", root=tmp_path).parser == ""


def test_reading_references_stays_linear() -> None:
    line = "&" * 100_000 + "&#" * 50_000
    assert decode_entities(line) == line


def test_a_footnote_mark_goes_with_the_space_before_it_and_only_a_defined_one() -> None:
    assert blocks("A key is required [^1]. Match [^a-z] here.\n\n[^1]: See the keys page.\n") == [
        "A key is required. Match [^a-z] here.", "See the keys page."]


def test_a_comment_opening_a_line_hides_what_it_wraps_fences_included() -> None:
    read = blocks("Install it:\n\n<!--\nOld way:\n\n```sh\nrm -rf /var/lib/app\n```\n-->\n\n"
                  "```sh\napp install\n```\n\n<!-- never closed\n\nStill shown.\n")
    assert read == ["Install it:", "```sh\napp install\n```", "<!-- never closed", "Still shown."]


def test_references_read_after_the_line_s_shape_and_never_as_markup() -> None:
    read = blocks("&#35; not a heading\n\n"
                  "Use &lt;!-- x --&gt; and a&#10;# b, &#96;rm&#96; and <code>a&#96;b</code>.\n")
    assert read == ["\\# not a heading", "Use <!-- x --> and a # b, \\`rm\\` and `` a`b ``."]


def test_a_tab_s_label_is_read_and_kept_when_its_code_has_a_title() -> None:
    read = blocks('<Tabs><TabItem value="x" label="">\n\n```sh\necho\n```\n\n</TabItem>'
                  '<TabItem value="C&#43;&#43;">\n\n```cpp title="main.cpp"\nint main();\n```\n\n'
                  '</TabItem></Tabs>\n')
    assert read == ['```sh title="x"\necho\n```', "C++", '```cpp title="main.cpp"\nint main();\n```']


@pytest.mark.parametrize("page", ["<!--\n" * 50_000, "`<!--" * 30_000, "<code>" * 30_000, "[^a] " * 30_000,
                                  "> [!NOTE]\n" * 30_000, "<!-- -->\n<!--\n" * 25_000, "<a {" * 25_000,
                                  "{" * 30_000 + "<b c>" * 10_000, "text\n\n    code\n" * 20_000,
                                  ":material-a:{" * 8_000])
def test_reading_inline_markup_stays_linear(page: str) -> None:
    assert parse_markdown(page) is not None  # quadratic, these took seconds to minutes


def test_a_decoded_character_starts_no_block_and_a_setext_title_reads_plain() -> None:
    page = parse_markdown("&#35; Title &#96;x&#96;\n===\n\n&#45; not an item\n&#124; a &#124; b &#124;\n")
    assert page.sections[0].headings == ["# Title `x`"]
    assert page.sections[0].blocks == ["\\- not an item\n\\| a \\| b \\|"]


def test_code_in_a_table_without_outer_pipes_keeps_its_pipe_in_the_cell_and_empty_code_goes() -> None:
    assert blocks("a | b\n--|--\nx | <code>p&#124;q</code>\n\nUse <code></code> and ``x`` here.") == [
        "a | b\n--|--\nx | `p\\|q`", "Use  and ``x`` here."]


def test_a_comment_inside_a_paragraph_closes_before_a_blank_line_or_is_text() -> None:
    assert blocks("Write <!-- to open\n\nSecond para.\n\nClose with -->.") == [
        "Write <!-- to open", "Second para.", "Close with -->."]


def test_a_code_span_a_table_row_leaves_open_does_not_run_into_the_rows_below(tmp_path: Path) -> None:
    page = tmp_path / "options.md"
    page.write_text("# Options\n\n| Field | Description |\n|---|---|\n"
                    '| <a id="opt-address">`address`</a> | The format is:`[host]:port |\n'
                    '| <a id="opt-default">`asDefault`</a> | Mark it<br /> as a default. |\n')
    doc = load_file(page, root=tmp_path)
    table = doc.sections[0].blocks[0]
    assert "| `asDefault` | Mark it  as a default. |" in table and "<a id" not in table
    assert "table-spans-1" in doc.parser
