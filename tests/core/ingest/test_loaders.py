"""Loaders: front matter, MDX/MkDocs stripping, HTML extraction, URL mapping, bad files."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import pytest

from core.errors import IngestSourceError
from core.ingest.document import Section
from core.ingest.front_matter import parse_front_matter
from core.ingest.html import html_document, parse_html
from core.ingest.loaders import is_supported, load_file
from core.ingest.markdown import clean_prose, parse_markdown
from core.ingest.urls import docusaurus_url, is_route_page, prettify_stem

MDX_PAGE = """---
title: "Nodes and Topics"  # shown in the browser tab
sidebar_label: Nodes
tags: [ros2, "pub sub"]
slug: /concepts/nodes
---
import Tabs from '@theme/Tabs';
import TabItem from '@theme/TabItem';
import {Alpha,
  Beta} from "./components";
export const meta = {
  level: 1,
};

# ROS 2 { #ros-2 }

Nodes are <b>processes</b> that use `<Tabs>` in prose. <!-- an editor's note -->
{/* an MDX comment */}

## Nodes

<Tabs>
<TabItem value="py" label="Python">

```python
import rclpy
<NotATag />
```

</TabItem>
</Tabs>

:::tip[Remember]
Every node has a unique name.
:::

:::caution Careful
Names collide.
:::

/// note | Technical Details
DDS does discovery.
///

<details>
<summary>Show answer</summary>
The answer is forty-two.
</details>

<PersonalizeButton
  chapterPath="/x"
  onPersonalize={(content) => {
    console.log("a > b", content);
  }}
/>

### Parameters ###

See <https://docs.ros.org/params> for more.
"""


def test_front_matter_scalars_inline_and_block_lists() -> None:
    text = "---\ntitle: 'A: B'\ntags:\n  - one\n  - label: two\ndraft: true # no\n---\nbody\n"
    data, body = parse_front_matter(text)
    assert data == {"title": "A: B", "tags": ["one", "two"], "draft": "true"}
    assert body == "body\n"


def test_front_matter_absent_or_unclosed_leaves_text_alone() -> None:
    assert parse_front_matter("# Title\n") == ({}, "# Title\n")
    assert parse_front_matter("---\ntitle: x\nno end\n")[0] == {}


def test_toml_front_matter_gives_the_title_and_goes_from_the_text(tmp_path: Path) -> None:
    page = tmp_path / "headers" / "hx-redirect.md"
    page.parent.mkdir()
    page.write_text('+++\ntitle = "HX-Redirect Response Header"\ndescription = """\\\n  Send the browser \\\n'
                    '  elsewhere."""\n[extra]\ntable_of_contents = true\n+++\n\nThe header redirects.\n',
                    encoding="utf-8")
    doc = load_file(page, root=tmp_path)
    assert doc.title == "HX-Redirect Response Header"
    assert doc.front_matter["description"] == "Send the browser elsewhere."
    assert "+++" not in "".join(b for s in doc.sections for b in s.blocks)


def test_toml_front_matter_with_windows_line_ends_or_zola_taxonomies() -> None:
    data, body = parse_front_matter('+++\r\ntitle = "T"\r\n[taxonomies]\r\ntags = ["a"]\r\n+++\r\nbody\r\n')
    assert data["title"] == "T" and data["tags"] == ["a"] and body == "body\r\n"


def test_toml_front_matter_that_does_not_parse_still_goes() -> None:
    assert parse_front_matter('+++\ntitle = "unclosed\n+++\nbody\n') == ({}, "body\n")
    assert parse_front_matter("+++\na = " + "[" * 5000 + "\n+++\nbody") == ({}, "body")
    assert parse_front_matter("+++\ntitle = 'x'\nno end\n") == ({}, "+++\ntitle = 'x'\nno end\n")


def test_mdx_is_stripped_but_text_kept(tmp_path: Path) -> None:
    page = tmp_path / "concepts" / "nodes.mdx"
    page.parent.mkdir()
    page.write_text(MDX_PAGE, encoding="utf-8")
    doc = load_file(page, root=tmp_path, base_url="https://book.dev/docs/")

    assert doc.source_document == "concepts/nodes.mdx"
    assert doc.title == "Nodes and Topics"
    assert doc.tags == ["ros2", "pub sub"]
    assert doc.front_matter["sidebar_label"] == "Nodes"
    assert doc.url == "https://book.dev/docs/concepts/nodes"  # slug wins over the path
    text = "\n".join(b for s in doc.sections for b in s.blocks)
    for gone in ("import Tabs", "import {Alpha", "export const", "level: 1", "<b>", "editor's note",
                 "MDX comment", ":::", "///", "<details>", "<summary>", "PersonalizeButton", "console.log"):
        assert gone not in text, gone
    for kept in ("Nodes are processes", "`<Tabs>`", "Remember", "Every node has a unique name.",
                 "Careful", "Technical Details", "DDS does discovery.", "Show answer",
                 "The answer is forty-two.", "Python", "https://docs.ros.org/params"):
        assert kept in text, kept
    # Code blocks are untouched: the import and the JSX-looking line stay; the tab's label titles it.
    assert "```python title=\"Python\"\nimport rclpy\n<NotATag />\n```" in text
    assert [s.headings for s in doc.sections] == [
        ["ROS 2"], ["ROS 2", "Nodes"], ["ROS 2", "Nodes", "Parameters"],
    ]


def test_title_falls_back_to_h1_then_file_name(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("Intro line.\n\n# The H1\n\ntext\n", encoding="utf-8")
    (tmp_path / "ros2-lab_exercises.md").write_text("no heading here\n", encoding="utf-8")
    assert load_file(tmp_path / "a.md", root=tmp_path).title == "The H1"
    assert load_file(tmp_path / "ros2-lab_exercises.md", root=tmp_path).title == "Ros2 Lab Exercises"
    assert prettify_stem("module-1/index.md") == "Module 1"


def test_a_page_opening_with_a_heading_is_titled_by_it_when_it_names_the_file(tmp_path: Path) -> None:
    # mdBook's pages start at "##" and may end with a "## Summary".
    (tmp_path / "ch04-03-slices.md").write_text(
        "## The Slice Type\n\ntext\n\n### String slices\n\nmore\n\n## Summary\n\nend\n", encoding="utf-8")
    assert load_file(tmp_path / "ch04-03-slices.md", root=tmp_path).title == "The Slice Type"
    # An opening heading naming only a part of the page ("Requirements" of install.md) is no title.
    (tmp_path / "install.md").write_text("## Requirements\n\ntext\n\n## Steps\n\nmore\n", encoding="utf-8")
    assert load_file(tmp_path / "install.md", root=tmp_path).title == "Install"
    assert parse_markdown("## Part\n\ntext\n\n# The H1\n\nmore\n").h1 == "The H1"  # an H1 wins
    # An index page is named after its folder: its opening heading says more.
    (tmp_path / "guide").mkdir()
    (tmp_path / "guide" / "index.md").write_text("## Getting Started\n\ntext\n", encoding="utf-8")
    assert load_file(tmp_path / "guide" / "index.md", root=tmp_path).title == "Getting Started"


def test_a_heading_over_every_section_of_a_page_titles_it_whatever_its_file_is_named(tmp_path: Path) -> None:
    # NestJS' components.md opens with "### Providers" over its "####" sections.
    (tmp_path / "components.md").write_text(
        "### Providers\n\nintro\n\n#### Services\n\ntext\n\n#### Scopes\n\nmore\n", encoding="utf-8")
    doc = load_file(tmp_path / "components.md", root=tmp_path)
    assert doc.title == "Providers"
    assert "heading-title-1" in doc.parser  # stored under the file's name before: stored again once
    assert doc.sections[1].headings == ["Providers", "Services"]
    # A lone heading over prose alone heads nothing: it may name a part ("Requirements").
    (tmp_path / "setup.md").write_text("## Requirements\n\ntext\n", encoding="utf-8")
    assert load_file(tmp_path / "setup.md", root=tmp_path).title == "Setup"
    # An empty heading under it is no section.
    (tmp_path / "empty.md").write_text("## Requirements\n\ntext\n\n###\n\nmore\n", encoding="utf-8")
    assert load_file(tmp_path / "empty.md", root=tmp_path).title == "Empty"
    # Nor does one with a peer after its sections.
    (tmp_path / "steps.md").write_text("## Before\n\n### One\n\ntext\n\n## After\n\nmore\n", encoding="utf-8")
    assert load_file(tmp_path / "steps.md", root=tmp_path).title == "Steps"


@pytest.mark.parametrize("text", [
    "Intro paragraph.\n\n## Storing state\n\ntext\n",  # its first heading names a part of it
    "```\ncode\n```\n\n## Usage\n\ntext\n",
    "## 0.47.3 (August 24, 2025)\n\nFixed.\n\n## 0.47.2\n\nFixed.\n\n## 0.47.1\n\nFixed.\n",  # a changelog
])
def test_a_page_opening_otherwise_keeps_its_title_from_elsewhere(text: str) -> None:
    assert parse_markdown(text).opening is None


def test_mkdocs_anchor_and_setext_headings() -> None:
    h1, sections, *_ = parse_markdown("Title\n=====\n\nintro\n\nPart { #part }\n----\n\nbody\n")
    assert h1 == "Title"
    assert [(s.headings, s.blocks) for s in sections] == [
        (["Title"], ["intro"]), (["Title", "Part"], ["body"]),
    ]


def test_fences_inside_lists_and_unclosed_fences_are_whole_blocks() -> None:
    text = "1. Run it:\n   ```bash\n   ros2 run\n\n   echo done\n   ```\n2. Next\n\n~~~\nopen <b>\n"
    sections = parse_markdown(text).sections
    blocks = sections[0].blocks
    assert "```bash\nros2 run\n\necho done\n```" in blocks  # blank line inside code does not split it
    assert blocks[-1] == "~~~\nopen <b>\n~~~"  # an unclosed fence is closed, its text kept raw


def test_an_indented_block_under_a_paragraph_is_code() -> None:
    page = parse_markdown("# T\n\nRun this:\n\n    sudo prime-select nvidia\n\n    # log in\n\nAfter.\n")
    code = "```\nsudo prime-select nvidia\n\n# log in\n```"
    assert page.sections[0].blocks == ["Run this:", code, "After."]
    assert page.indented_code


@pytest.mark.parametrize(("text", "blocks"), [
    ("Run:\n\n    make\n    \nDone.\n", ["Run:", "```\nmake\n```", "Done."]),  # a line of spaces
    ("Text\n\n    ", ["Text"]),
    ("Setup\n=====\n\n    make install\n", ["```\nmake install\n```"]),  # under a setext heading
    ("Intro\n\n    \tgo build\t-o x\n", ["Intro", "```\n\tgo build\t-o x\n```"]),  # a Makefile's tabs stay
    # A page showing a fenced block as indented code: a longer fence holds it.
    ("Like this:\n\n    Text.\n    ```py\n    print(1)\n    ```\n",
     ["Like this:", "````\nText.\n```py\nprint(1)\n```\n````"]),
])
def test_indented_code_reads_as_commonmark_shows_it(text: str, blocks: list[str]) -> None:
    assert [b for section in parse_markdown(text).sections for b in section.blocks] == blocks


@pytest.mark.parametrize("text", [
    "Text\n    goes on\n",  # no blank line: the paragraph goes on
    "1. Install it and then\nrestart the server.\n\n    Restarting clears the cache.\n",  # a lazy line
    "- item\n\n    the item's second paragraph\n",
    "1. step\n\n    more of the step\n",
    '=== "pip"\n\n    text of a tab\n',
    "<details>\n\n    text of a tag\n",
    "[^1]: a footnote\n\n    its second paragraph\n",
    "> a quote\n\n    after it\n",
])
def test_an_indented_block_under_a_list_item_tab_or_tag_is_its_text(text: str) -> None:
    page = parse_markdown(text)
    assert not page.indented_code
    assert not any(block.startswith("```") for section in page.sections for block in section.blocks)


def test_mdx_has_no_indented_code(tmp_path: Path) -> None:
    for name in ("page.md", "page.mdx"):
        (tmp_path / name).write_text("Intro.\n\n    <Card title='x' />\n", encoding="utf-8")
    md, mdx = (load_file(tmp_path / name, root=tmp_path) for name in ("page.md", "page.mdx"))
    assert md.sections[0].blocks[-1].startswith("```") and "indented-code-1" in md.parser
    assert not any("```" in block for block in mdx.sections[0].blocks) and "indented-code" not in mdx.parser


def test_clean_prose_leaves_comparisons_and_plain_text() -> None:
    assert clean_prose("if a < b and c > d") == "if a < b and c > d"
    assert clean_prose("x <br/> y") == "x   y"


def test_a_jsx_expression_in_a_tag_is_skipped_whole_and_an_unclosed_one_makes_no_tag() -> None:
    assert clean_prose("x <Card icon={<Icon n={1} />} label='t'>in</Card> y") == "x in y"  # inside a line
    assert clean_prose("a <b {c and d> e") == "a <b {c and d> e"
    assert clean_prose("a <b } c> d") == "a <b } c> d"


HTML_PAGE = """<!doctype html><html><head><title>Nodes | Robotics Book</title>
<style>.x{}</style><script>var secret = 1;</script></head>
<body><nav class="navbar">Navbar link</nav><header>Site header</header>
<main><div class="row"><aside>Sidebar link</aside><div class="col">
<article><nav class="breadcrumbs">Home</nav>
<div class="markdown"><header><h1>ROS 2 Nodes<a class="hash-link" href="#">\u200b</a></h1></header>
<p>A <strong>node</strong> is a&nbsp;process using <code>rclpy</code>.</p>
<h2 id="p">Parameters<a href="#p" class="hash-link">#</a></h2>
<ul><li>first</li><li>second<ul><li>nested</li></ul></li></ul>
<pre class="prism-code language-python"><code
><span>import rclpy</span><br><span>    rclpy.init()</span><br></code></pre>
<button>Copy</button>
<h3>Types</h3><table><tr><th>Name</th><th>Type</th></tr><tr><td>a</td><td>int</td></tr></table>
<h4>Deep</h4><p>deep text</p>
</div><footer>Edit this page</footer></article></div></div></main>
<footer>Copyright</footer></body></html>"""


def test_html_main_content_and_heading_hierarchy() -> None:
    title, sections = parse_html(HTML_PAGE)
    assert title == "ROS 2 Nodes"
    flat = "\n".join(b for s in sections for b in s.blocks)
    for gone in ("Navbar", "Site header", "Sidebar", "Home", "secret", "Copy", "Edit this page", "Copyright"):
        assert gone not in flat, gone
    assert [s.headings for s in sections] == [
        ["ROS 2 Nodes"],
        ["ROS 2 Nodes", "Parameters"],
        ["ROS 2 Nodes", "Parameters", "Types"],
        ["ROS 2 Nodes", "Parameters", "Types", "Deep"],
    ]
    assert sections[0].blocks == ["A node is a process using `rclpy`."]
    assert sections[1].blocks == [
        "- first\n- second\n  - nested", "```python\nimport rclpy\n    rclpy.init()\n```",
    ]
    assert sections[2].blocks == ["| Name | Type |\n| --- | --- |\n| a | int |"]


def test_html_reads_links_tables_and_titles_as_the_site_shows_them() -> None:
    page = """<html><head><title>Closures \u2014 Rust by Example</title></head><body>
<div role="navigation"><ul><li><a href="index.html">Home</a></li></ul></div>
<div role="main"><h1>Closures<a class="headerlink" href="#c">\u00b6</a></h1><h1>Second</h1>
<p>See <a href="fn/closures.html">closures</a> and <a href="#x">below</a><a href="x.html"><img
src="i.png"></a>.</p>
<table><thead><tr><th>Option</th><th>Default</th></tr></thead>
<tbody><tr><td><p>a|b</p></td><td>1</td></tr></tbody></table>
<table class="highlighttable"><tr><td class="linenos"><pre>1\n2</pre></td>
<td><pre>let x = 1;\nlet y = 2;</pre></td></tr></table>
</div><footer role="contentinfo">Footer</footer></body></html>"""
    title, sections = parse_html(page)
    assert title == "Closures"  # the first h1, its permalink left out
    blocks = [b for s in sections for b in s.blocks]
    assert blocks[0] == "See [closures](fn/closures.html) and below."
    assert blocks[1] == "| Option | Default |\n| --- | --- |\n| a\\|b | 1 |"
    assert blocks[2] == "```\nlet x = 1;\nlet y = 2;\n```"  # no line numbers
    assert "Home" not in "\n".join(blocks) and "Footer" not in "\n".join(blocks)
    assert parse_html("<html><head><title>A \u00b7 Site</title></head><body><p>x</p></body></html>")[0] == "A"
    # Without <main>, the site header's <h1> (Node's docs: the site's name) titles nothing.
    node = "<body><header><h1>Node.js v22 docs</h1></header><div><h1>Events</h1><p>x</p></div></body>"
    assert parse_html(node)[0] == "Events"
    # Asciidoctor's <code>git</code> <code>fetch</code> is one command.
    spans = ("<main><p>Run <code>git</code> <code>fetch</code> <code>--all</code>, then <code>x</code>."
             "</p></main>")
    assert parse_html(spans)[1][0].blocks == ["Run `git fetch --all`, then `x`."]


def test_html_redirect_stubs_hold_nothing_and_noindex_pages_are_read() -> None:
    def body(head: str) -> list[Section]:
        return parse_html(f"<html><head>{head}</head><body><p>Text.</p></body></html>")[1]

    assert body('<meta http-equiv="refresh" content="0; url=../new.html">') == []
    # A reload is no redirect, and a private site marks every page noindex: both are read.
    assert body('<meta http-equiv="refresh" content="30">') != []
    assert body('<meta name="robots" content="noindex, nofollow">') != []
    # A meta in the body (an example the page shows) sends nobody anywhere.
    assert parse_html('<body><meta http-equiv="refresh" content="0; url=x"><p>Text.</p></body>')[1] != []
    # Sphinx's listing of the code and its indexes are made from the docs: no pages of them.
    for generated in ('<div class="viewcode-block" id="f"><pre>def f(): ...</pre></div>',
                      '<table class="indextable genindextable"><tr><td>f()</td></tr></table>'):
        assert parse_html(f"<html><body><h1>Index</h1>{generated}</body></html>") == (None, [])
    # A site's template is no page; a page showing a template's tags in code is one.
    template = "<h3>{{ _('Navigation') }}</h3>{% if show %}<p>{{ toctree() }}</p>{% endif %}"
    assert parse_html(template) == (None, [])
    page = "<main><p>Use <code>{{ a.b }}</code>, or {{ x }}.</p><pre>{% if x %}y{% endif %}</pre></main>"
    assert parse_html(page)[1] != []
    # docutils writes inline literals as <tt> or <span class="docutils literal">: a page about
    # templates, not a template.
    literal = ('<body><h1>Templates</h1><p>Print <tt class="docutils literal">{{ name }}</tt> and '
               '<span class="docutils literal">{% if user %}</span>.</p></body>')
    assert parse_html(literal)[1][0].blocks == ["Print {{ name }} and {% if user %}."]
    # A long line of an unclosed tag is read in one pass.
    assert parse_html("<main><p>{% " + "a" * 100_000 + "</p></main>")[1] != []


@pytest.mark.parametrize(("page", "blocks"), [
    # A link around blocks (a card of a list of pages) is read as its text, never raises.
    ('<main><a href="/g"><div>Guide</div><p>Read it.</p></a></main>', ["Guide", "Read it."]),
    ('<main><p><a href="/y">Title<br>sub</a> <a href="a (1).html">z</a> <a href="MAILTO:x@y">m</a>'
     "</p></main>", ["Title\nsub [z](a%20(1).html) m"]),
    # A table in a cell is that cell's text; a cell's paragraphs are apart.
    ("<main><table><tr><th>A</th><th>B</th></tr><tr><td>One of: <table><tr><td>x</td><td>y</td></tr></table>"
     "</td><td><p>p</p>after</td></tr></table></main>",
     ["| A | B |\n| --- | --- |\n| One of: x y | p after |"]),
    # Asciidoctor: a name glued from code and text is one span; a one-row table lays a note out.
    ("<main><p><code>branch.</code><em>&lt;name&gt;</em><code>.rebase</code>, <code>a</code>,<code>b</code>"
     "</p>"
     '<table><tr><td class="icon"><div class="title">Note</div></td><td>Danger.</td></tr></table></main>',
     ["`branch.<name>.rebase`, `a`,`b`", "Note: Danger."]),
    # Text for screen readers only is not shown (Starlight's "Section titled ..." in every heading).
    ('<main><p>Run <span class="visually-hidden">(opens in a new tab)</span>it.</p></main>', ["Run it."]),
    ('<main><p>f(x)<a href="_modules/m.html#f"><span class="viewcode-link">[source]</span></a></p></main>',
     ["f(x)"]),
    # Line numbers written inside the code are left out.
    ('<main><pre><span class="linenos">1</span>a = 1\n<span class="linenos">2</span>b = 2</pre></main>',
     ["```\na = 1\nb = 2\n```"]),
    ('<body><div role="search"><p>Search docs</p></div><p>Text.</p></body>', ["Text."]),
    # A definition list: the terms over a definition open its first line; a permalink is left out.
    ('<main><dl><dt>-a</dt><dt><code>--all</code><a class="headerlink" href="#all">\u00b6</a></dt>'
     "<dd><p>Push all.</p><p>More.</p></dd><dt>Parameters:</dt><dd><ul><li>url</li></ul></dd>"
     "<dt>x = *a</dt><dd><pre>f(*a)</pre></dd><dt>lone</dt></dl></main>",
     ["**-a, `--all`**: Push all.", "More.", "**Parameters**:\n- url", "x = *a:", "```\nf(*a)\n```",
      "**lone**"]),
    # Sphinx writes every list item as <li><p>: still a list; numbered lists keep their numbers.
    ('<main><ul class="simple"><li><p>Keep-Alive</p></li><li><p>Cookies</p><p>More.</p></li></ul>'
     '<ol start="3"><li><p>a</p><ul><li><p>x</p></li></ul></li><li>b</li><li></li></ol><p>After.</p></main>',
     ["- Keep-Alive\n- Cookies\nMore.", "3. a\n   - x\n4. b", "After."]),
    # A note's title opens its text (Sphinx, MkDocs, Docusaurus' lower-case "note").
    ('<main><div class="admonition warning"><p class="admonition-title">Warning</p><p>Do not.</p></div>'
     '<div><div class="admonitionHeading_G"><svg></svg>note</div><div><ul><li>a</li></ul></div></div></main>',
     ["Warning: Do not.", "Note:\n- a"]),
    # Items whose end tags HTML lets out; a <span> in an item is inline; a term over a definition
    # that opens with its own definitions, or a table, stays; a note's title before a heading stays
    # before it; a definition in a list item follows the item's marker.
    ("<main><dl><dt>-f<dt>--force<dd>Force.</dl><ul><li>one<li>two</ul></main>",
     ["**-f, --force**: Force.", "- one\n- two"]),
    ('<main><ul><li><p>See <a href="i.html"><span class="doc">Install</span></a> now.</p></li></ul></main>',
     ["- See [Install](i.html) now."]),
    ('<main><dl><dt>f(x)</dt><dd><dl><dt>Parameters:</dt><dd><p>x - the x</p></dd></dl></dd>'
     "<dt>opt</dt><dd><table><tr><th>a</th></tr><tr><td>1</td></tr></table></dd></dl></main>",
     ["**f(x)**", "**Parameters**: x - the x", "**opt**", "| a |\n| --- |\n| 1 |"]),
    ('<main><div class="admonition"><p class="admonition-title">Note</p></div><h2>Next</h2><p>Para</p>'
     "<ul><li><dl><dt>opt</dt><dd><p>def</p></dd></dl></li></ul></main>", ["Note", "Para", "- **opt**: def"]),
    # Code keeps a prompt's icon glyphs; only a whole "headerlink" class marks a permalink.
    ('<main><pre>\ue0b0 prompt</pre><p><a class="headerlink-like" href="http://x">real</a></p></main>',
     ["```\n\ue0b0 prompt\n```", "[real](http://x)"]),
    # Read the Docs' icon-font permalink and a page's table of contents are no text of the page.
    ('<main><p>T\uf0c1ext<a class="headerlink" href="#t">\uf0c1</a></p>'
     '<div class="toctree-wrapper compound"><ul><li><a href="x.html">X</a></li></ul></div></main>', ["Text"]),
])
def test_html_links_tables_and_code_read_as_shown(page: str, blocks: list[str]) -> None:
    assert [b for section in parse_html(page)[1] for b in section.blocks] == blocks


def test_html_headings_keep_their_own_links_and_a_layout_table_its_headings() -> None:
    page = ('<main><h2><a href="#link">link</a></h2><p>a</p><h2>Useful <a href="/x">link</a></h2><p>b</p>'
            "<table><tr><td><h3>Name</h3><p>text</p></td></tr></table></main>")
    assert [s.headings for s in parse_html(page)[1]] == [["link"], ["Useful link"], ["Useful link", "Name"]]
    starlight = ('<main><h2 id="x">Setup<a class="sl-anchor-link" href="#x"><span aria-hidden="true">#</span>'
                 '<span class="sr-only">Section titled \u201cSetup\u201d</span></a></h2><p>a</p></main>')
    assert parse_html(starlight)[1][0].headings == ["Setup"]


def test_html_without_main_uses_body_and_title_tag(tmp_path: Path) -> None:
    page = tmp_path / "guide" / "index.html"
    page.parent.mkdir()
    page.write_text(
        "<html><head><title>Guide | Site</title></head><body><header>Top</header>"
        "<p>Body text.</p><footer>Bottom</footer></body></html>",
        encoding="utf-8",
    )
    doc = load_file(page, root=tmp_path, base_url="https://site.dev")
    assert doc.title == "Guide"
    assert doc.url == "https://site.dev/guide"
    assert [s.blocks for s in doc.sections] == [["Body text."]]


def test_html_document_hash_ignores_markup_noise() -> None:
    a = html_document("<main><p>Same text</p><script src='a.1.js'></script></main>",
                      source_document="https://x.dev/p", url="https://x.dev/p")
    b = html_document("<main><p>Same   text</p><script src='a.2.js'></script></main>",
                      source_document="https://x.dev/p", url="https://x.dev/p")
    assert a.raw_sha256 == b.raw_sha256
    assert a.title == "P"


@pytest.mark.parametrize(
    ("relative", "slug", "doc_id", "expected"),
    [
        ("module-1/intro.md", None, None, "https://book.dev/docs/module-1/intro"),
        ("module-1/index.md", None, None, "https://book.dev/docs/module-1"),
        ("module-1/README.mdx", None, None, "https://book.dev/docs/module-1"),
        ("content/_index.md", None, None, "https://book.dev/docs/content"),
        ("index.md", None, None, "https://book.dev/docs"),
        ("module-1/intro.md", "/start", None, "https://book.dev/docs/start"),
        ("module-1/intro.md", "welcome", None, "https://book.dev/docs/module-1/welcome"),
        ("module-1/intro.md", None, "first", "https://book.dev/docs/module-1/first"),
        ("a b/c.md", None, None, "https://book.dev/docs/a%20b/c"),
        # Next.js' App Router (Nextra 4): a page.mdx is its folder's route, app/ and (groups) left out.
        ("app/guide/search/page.mdx", None, None, "https://book.dev/docs/guide/search"),
        ("src/app/(docs)/blog/page.mdx", None, None, "https://book.dev/docs/blog"),
        ("guide/search/page.mdx", None, None, "https://book.dev/docs/guide/search/page"),  # no app/: a page
        ("components/page.md", None, None, "https://book.dev/docs/components/page"),
    ],
)
def test_docusaurus_urls(relative: str, slug: str | None, doc_id: str | None, expected: str) -> None:
    route = is_route_page(PurePosixPath(relative))
    assert docusaurus_url(relative, base_url="https://book.dev/docs/", slug=slug, doc_id=doc_id,
                          route=route) == expected


def test_without_base_url_links_are_file_uris(tmp_path: Path) -> None:
    page = tmp_path / "my notes.txt"
    page.write_text("First paragraph.\n\nSecond paragraph.\n", encoding="utf-8")
    doc = load_file(page, root=tmp_path)
    assert doc.url == page.resolve().as_uri()
    assert doc.url.startswith("file://") and " " not in doc.url
    assert doc.title == "My Notes"
    assert doc.sections[0].blocks == ["First paragraph.", "Second paragraph."]


def test_bad_files_raise_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "bad.md").write_bytes(b"# Title\n\xff\xfe broken")
    (tmp_path / "bin.txt").write_bytes(b"\x89PNG\x00\x00\x00")
    (tmp_path / "_category_.json").write_text("{}", encoding="utf-8")
    with pytest.raises(IngestSourceError, match=r"bad\.md.*not valid UTF-8"):
        load_file(tmp_path / "bad.md", root=tmp_path)
    with pytest.raises(IngestSourceError, match=r"bin\.txt.*binary"):
        load_file(tmp_path / "bin.txt", root=tmp_path)
    assert not is_supported(tmp_path / "_category_.json")
    with pytest.raises(IngestSourceError, match=r"unsupported file type '\.json'"):
        load_file(tmp_path / "_category_.json", root=tmp_path)


def test_utf8_bom_and_crlf_are_accepted(tmp_path: Path) -> None:
    (tmp_path / "w.md").write_bytes("\ufeff---\r\ntitle: Win\r\n---\r\n# H\r\n\r\ntext\r\n".encode())
    doc = load_file(tmp_path / "w.md", root=tmp_path)
    assert doc.title == "Win"
    assert doc.sections[0].blocks == ["text"]


@pytest.mark.parametrize(
    ("path", "url"),
    [
        ("01-module-ros/02-nodes.md", "https://book.dev/docs/module-ros/nodes"),
        ("01-module-ros/index.md", "https://book.dev/docs/module-ros"),
        ("2024-01-31-release.md", "https://book.dev/docs/2024-01-31-release"),
        ("module-1/intro.md", "https://book.dev/docs/module-1/intro"),
        ("module-1/1.1-intro/basics.md", "https://book.dev/docs/module-1/1.1-intro/basics"),  # version-like
        ("01-02-notes.md", "https://book.dev/docs/01-02-notes"),
        ("10_setup.md", "https://book.dev/docs/setup"),
    ],
)
def test_docusaurus_number_prefixes_are_dropped(path: str, url: str) -> None:
    assert docusaurus_url(path, base_url="https://book.dev/docs/") == url


def test_a_folder_s_index_page_is_served_at_the_folder_whatever_its_id() -> None:
    assert docusaurus_url("index.md", base_url="https://p.io/docs", doc_id="index") == "https://p.io/docs"
    assert docusaurus_url("guide/README.md", base_url="https://p.io", doc_id="start") == "https://p.io/guide"
    assert docusaurus_url("guide/a.md", base_url="https://p.io", doc_id="start") == "https://p.io/guide/start"


@pytest.mark.parametrize("attributes",
                         ["{.hide-header}", "{#welcome}", "{: .lead}", '{#intro .lead data-x="1"}'])
def test_a_line_of_block_attributes_is_markup_not_text(tmp_path: Path, attributes: str) -> None:
    page = tmp_path / "index.md"
    page.write_text(f"{attributes}\n# Welcome\n\nClick makes command line tools.\n")
    doc = load_file(page, root=tmp_path)
    assert doc.title == "Welcome" and doc.parser == "attributes-1"  # stored pages are read again once
    assert [block for s in doc.sections for block in s.blocks] == ["Click makes command line tools."]


def test_rules_and_attribute_lists_are_markup_and_a_section_kept_from_search_left_out(tmp_path: Path) -> None:
    page = tmp_path / "install.md"
    page.write_text("# Install\n\n## with pip <small>recommended</small> { #with-pip data-toc-label=\"pip\" }"
                    "\n\nRun `pip install x{.a}`.\n\n---\n\n"
                    "![map](a.png){ width=\"300\" } [site](https://x.dev){.ext}\n\n"
                    "## Template diffs { data-search-exclude }\n\nOld template.\n\n"
                    "### Partials\n\nOld partial.\n\n## GET /users/{id}\n\nOne user.\n\n"
                    "{ data-search-exclude }\n", encoding="utf-8")
    doc = load_file(page, root=tmp_path)
    assert "rules-1" in doc.parser  # stored pages are read again once
    assert [(s.headings, s.blocks) for s in doc.sections] == [
        (["Install", "with pip recommended"], ["Run `pip install x{.a}`.", "![map](a.png) [site](https://x.dev)"]),
        (["Install", "Template diffs", "Partials"], ["Old partial."]),  # as the site's search does
        (["Install", "GET /users/{id}"], ["One user."])]
    # The first heading of a page, left out of search, still names the page.
    page.write_text("## Diffs { data-search-exclude }\n\nOld.\n\n## Kept\n\nNew.\n", encoding="utf-8")
    doc = load_file(page, root=tmp_path)
    assert [(s.headings, s.blocks) for s in doc.sections] == [(["Kept"], ["New."])]
    assert "\x00" not in doc.title


def test_rules_after_a_paragraph_spans_and_long_headings_read_as_commonmark_does() -> None:
    # Blanks inside a heading are read once each: a run of 100,000 of them took minutes.
    page = parse_markdown("# T\n\nText.\n***\n\n[small caps]{.smallcaps} stay.\n\n"
                          "## a" + " " * 100_000 + "b ##\n\nx\n")
    assert [(s.headings, s.blocks) for s in page.sections] == [
        (["T"], ["Text.", "[small caps]{.smallcaps} stay."]), (["T", "a b"], ["x"])]


def test_a_title_from_the_file_name_is_cased_as_the_page_writes_it(tmp_path: Path) -> None:
    page = "By default SSL certificates are verified; ssl errors name the SSL host.\n"
    (tmp_path / "ssl.md").write_text(page, encoding="utf-8")
    (tmp_path / "github-actions.md").write_text("Run it on GitHub.\n\n`GITHUB_TOKEN` and GITHUB_TOKEN.\n\n"
                                                "```sh\nexport GITHUB=1 ACTIONS=2\n```\n", encoding="utf-8")
    (tmp_path / "settings.md").write_text("Set DJANGO_SETTINGS_MODULE.\n", encoding="utf-8")
    (tmp_path / "plain-page.md").write_text("Nothing in capitals.\n", encoding="utf-8")
    names = ("ssl.md", "github-actions.md", "plain-page.md", "settings.md")
    ssl, actions, plain, settings = (load_file(tmp_path / name, root=tmp_path) for name in names)
    assert (ssl.title, actions.title, plain.title, settings.title) == ("SSL", "GitHub Actions", "Plain Page",
                                                                       "Settings")
    assert ssl.parser == "cased-title-1" and plain.parser == ""


def test_a_titled_component_shows_its_title_linked_and_described(tmp_path: Path) -> None:
    page = tmp_path / "plugins.mdx"
    page.write_text("import { LinkCard } from '@astrojs/starlight/components';\n\n# Plugins\n\n"
                    '<LinkCard title="lv" href="https://x.test/lv" description="Check links." />\n'
                    '<Card title="Stars" icon={star}>\n\tSirius\n</Card>\n<Icon name="x" />\n',
                    encoding="utf-8")
    doc = load_file(page, root=tmp_path)
    assert doc.parser == "components-3"
    assert doc.sections[0].blocks == ["[lv](https://x.test/lv): Check links.", "Stars", "Sirius"]


def test_a_reference_field_shows_its_name_type_and_default(tmp_path: Path) -> None:
    page = tmp_path / "jobs.mdx"
    page.write_text("# Jobs\n\n"
                    '<ParamField query="limit" type="number" default="10" required>\n  Most jobs listed.\n'
                    "</ParamField>\n\n"
                    '<ResponseField name="id" type="string" description="is required">\n  The job.\n'
                    "</ResponseField>\n\n"
                    '<ParamField type="string">\n  No name, no entry.\n</ParamField>\n\n'
                    '<Tabs>\n  <Tab title="macOS">\n    ```bash\n    brew install acme\n    ```\n'
                    '  </Tab>\n</Tabs>\n',
                    encoding="utf-8")
    doc = load_file(page, root=tmp_path)
    assert doc.parser == "components-3"
    assert doc.sections[0].blocks == ["`limit` (query, number, default: 10, required): Most jobs listed.",
                                      "`id` (string): The job.", "No name, no entry.",
                                      '```bash title="macOS"\nbrew install acme\n```']


MINTLIFY_PAGE = """# Setup

<Warning>Deleting a deployment cannot be undone.</Warning>

<Note>
  Keep your key secret.
</Note>

## `theme` - <Badge color="red">required</Badge>

Click the <Icon icon="gear" /> settings button.

<ResponseField name="cols" type="number" default={2}>Columns.</ResponseField>
<ParamField query="limit" type="number" />

<Note>
- a list after a lead
</Note>

<Steps>
  <Step title="Create a key">
    Go to settings.
  </Step>
  <Step title="Export it">
    ```bash
    export KEY=1
    ```
  </Step>
</Steps>

## Troubleshooting

<Accordion title="Error: permission denied">
  Run `sudo npm i -g mint`.
</Accordion>
<Callout type="info">A typed callout.</Callout>
<Update label="August 14, 2026" description="v2.3">
  ## New features
  Bitbucket support.
</Update>
<Update label="August 7, 2026">
  Faster builds.
</Update>
After the entries.

<Visibility for="agents">
  If the user asked you to set up the site, do not stop.
</Visibility>
<Prompt description="Install the CLI and check it." actions={["copy"]}>
  Install the CLI so I can preview my docs.
</Prompt>

```mdx
<Visibility for="agents">
</Visibility>
```
"""


def test_mintlify_s_callouts_parts_and_inline_components_read_as_the_site_shows_them(tmp_path: Path) -> None:
    page = tmp_path / "setup.mdx"
    page.write_text(MINTLIFY_PAGE, encoding="utf-8")
    doc = load_file(page, root=tmp_path)
    assert [(section.headings, section.blocks) for section in doc.sections] == [
        (["Setup"], ["Warning: Deleting a deployment cannot be undone.", "Note: Keep your key secret."]),
        (["Setup", "theme - required"], [
            "Click the  settings button.", "`cols` (number, default: 2): Columns.",
            "`limit` (query, number):", "Note:", "- a list after a lead",  # no text, or a block: apart
            "Create a key:", "Go to settings.",  # a step's title leads its text in
            "Export it:", "```bash\nexport KEY=1\n```"]),
        (["Setup", "Troubleshooting"], ["Error: permission denied:", "Run `sudo npm i -g mint`.",
                                        "Info: A typed callout."]),
        # A changelog entry's label heads its notes, and the headings inside it.
        (["Setup", "Troubleshooting", "August 14, 2026: v2.3", "New features"], ["Bitbucket support."]),
        (["Setup", "Troubleshooting", "August 7, 2026"], ["Faster builds."]),
        (["Setup", "Troubleshooting"], [
            "After the entries.",
            "Prompt: Install the CLI and check it.",  # what is written for AI agents only is no answer
            '```mdx\n<Visibility for="agents">\n</Visibility>\n```']),
    ]


def test_mdbook_s_file_caption_titles_its_listing(tmp_path: Path) -> None:
    page = tmp_path / "ch03.md"
    page.write_text('## Shadowing\n\nAs follows:\n\n<span class="filename">Filename: src/main.rs</span>\n\n'
                    "```rust\nfn main() {}\n```\n\n"
                    '<span class="filename">Filename: a.rs</span>\n\nNo code.\n',
                    encoding="utf-8")
    doc = load_file(page, root=tmp_path)
    assert doc.sections[0].blocks == ["As follows:", '```rust title="src/main.rs"\nfn main() {}\n```',
                                      "Filename: a.rs", "No code."]
    assert doc.parser == "filename-1"


@pytest.mark.parametrize(("note", "blocks"), [
    (":::tip\n\nUpdate it often.\n\n:::\n", ["Tip: Update it often."]),  # Docusaurus, Starlight
    ("::: danger\nNever do this.\n:::\n", ["Danger: Never do this."]),  # VitePress
    ("/// warning\n\n- one\n- two\n\n///\n", ["Warning:", "- one\n- two"]),  # MkDocs' blocks
    (":::tip[Add your own!]\nA plugin?\n:::\n", ["Add your own!", "A plugin?"]),  # a title says it
    (":::note\n:::\n", []),
])
def test_an_untitled_note_shows_its_kind(tmp_path: Path, note: str, blocks: list[str]) -> None:
    page = tmp_path / "a.mdx"
    page.write_text(note, encoding="utf-8")
    doc = load_file(page, root=tmp_path)
    assert [b for s in doc.sections for b in s.blocks] == blocks
    assert ("notes-1" in doc.parser) is ("[" not in note)


def test_a_list_items_text_after_its_code_loses_the_items_indentation() -> None:
    page = ("# S\n\n1. Create it:\n\n   ```bash\n   kubectl create x\n   ```\n\n"
            "    - `name` is its name\n    - `key` its key\n")
    assert parse_markdown(page).sections[0].blocks == [
        "1. Create it:", "```bash\nkubectl create x\n```", "- `name` is its name\n- `key` its key"]


@pytest.mark.parametrize(("front_matter", "first"), [
    ('openapi: "/openapi.json POST /project/update/{projectId}"', "`POST /project/update/{projectId}`"),
    ("openapi: get /users", "`GET /users`"),
    ('api: "DELETE https://api.x.test/v1/user"', "`DELETE https://api.x.test/v1/user`"),
])
def test_an_api_page_shows_its_operation_first_even_with_no_body(tmp_path: Path, front_matter: str,
                                                                  first: str) -> None:
    page = tmp_path / "trigger.mdx"
    page.write_text(f'---\ntitle: "Trigger deployment"\n{front_matter}\n---\n', encoding="utf-8")
    doc = load_file(page, root=tmp_path)
    assert doc.title == "Trigger deployment" and doc.sections[0].blocks == [first]
    assert "endpoint-1" in doc.parser.split("+")


def test_nextra_s_tabs_take_their_names_from_their_pane(tmp_path: Path) -> None:
    page = tmp_path / "install.mdx"
    page.write_text("# Install\n\n<Tabs items={['npm `i`', \"pnpm\"]} defaultIndex={1}>\n"
                    "  <Tabs.Tab>\n    ```bash\n    npm i swr\n    ```\n  </Tabs.Tab>\n"
                    "  <Tabs.Tab>\n    Run `pnpm add swr`.\n  </Tabs.Tab>\n</Tabs>\n\n"
                    "<Tabs>\n  <Tab>\n    No names given.\n  </Tab>\n</Tabs>\n\n"
                    "```mdx\n<Tabs items={['a']}>\n<Tabs.Tab>\n```\n", encoding="utf-8")
    doc = load_file(page, root=tmp_path)
    assert doc.sections[0].blocks == ['```bash title="npm `i`"\nnpm i swr\n```', "pnpm",
                                      "Run `pnpm add swr`.", "No names given.",
                                      "```mdx\n<Tabs items={['a']}>\n<Tabs.Tab>\n```"]


def test_a_mintlify_page_s_description_is_its_first_paragraph_as_the_site_shows_it(tmp_path: Path) -> None:
    text = '---\ntitle: Intro\ndescription: "Acme is a  docs platform."\n---\n## Start\n\nText.\n'
    for site, shown in (("mintlify", True), ("docusaurus", False)):  # elsewhere it is for search engines
        (tmp_path / site / "guides").mkdir(parents=True)
        (tmp_path / site / "guides" / "intro.mdx").write_text(text, encoding="utf-8")
        if shown:
            (tmp_path / site / "docs.json").write_text("{}", encoding="utf-8")
        doc = load_file(tmp_path / site / "guides" / "intro.mdx", root=tmp_path / site)
        blocks = [(section.headings, section.blocks) for section in doc.sections]
        assert blocks == [*([([], ["Acme is a docs platform."])] if shown else []), (["Start"], ["Text."])]
        assert ("described-1" in doc.parser) is shown


def test_an_mdx_comment_over_lines_hides_what_it_holds_code_included(tmp_path: Path) -> None:
    page = tmp_path / "start.mdx"
    page.write_text("## Start\n\nKeep this. {/* one line */} And this.\n\n{/*\n\n### Old config\n\n"
                    "```jsx\nold()\n```\n\n*/} After.\n\n```mdx\n{/* shown in code\n```\n", encoding="utf-8")
    doc = load_file(page, root=tmp_path)
    assert [(s.headings, s.blocks) for s in doc.sections] == [
        (["Start"], ["Keep this.  And this.", "After.", "```mdx\n{/* shown in code\n```"])]


def test_nextra_s_heading_ids_and_code_span_languages_are_markup(tmp_path: Path) -> None:
    page = tmp_path / "search.mdx"
    page.write_text("## Search options [#search-options]\n\nSet `search: false{:js}` to hide it.\n",
                    encoding="utf-8")
    [section] = load_file(page, root=tmp_path).sections
    assert (section.headings, section.blocks) == (["Search options"], ["Set `search: false` to hide it."])


def test_a_file_tree_component_is_drawn_as_a_listing(tmp_path: Path) -> None:
    page = tmp_path / "layout.mdx"
    page.write_text('# Layout\n\nYou get:\n\n<FileTree>\n  <FileTree.Folder name="app" defaultOpen>\n'
                    '    <FileTree.File name="layout.jsx" />\n    <FileTree.Folder name="empty" />\n'
                    '  </FileTree.Folder>\n  <FileTree.File name="package.json" />\n</FileTree>\n\nDone.\n',
                    encoding="utf-8")
    doc = load_file(page, root=tmp_path)
    assert doc.sections[0].blocks == ["You get:", "```text\napp/\n  layout.jsx\n  empty/\npackage.json\n```",
                                      "Done."]
    page.write_text("# Layout\n\n<FileTree>\n- src/\n  - **Header.astro**\n</FileTree>\n", encoding="utf-8")
    # Starlight's tree is a Markdown list: read as it is.
    assert load_file(page, root=tmp_path).sections[0].blocks == ["- src/\n  - **Header.astro**"]
