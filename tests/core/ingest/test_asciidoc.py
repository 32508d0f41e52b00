"""AsciiDoc pages (Asciidoctor's syntax, Antora's sites) read as their site shows them."""

from __future__ import annotations

import functools
import subprocess
import sys
from pathlib import Path

import pytest

from core.ingest.asciidoc import is_unpublished
from core.ingest.asciidoc.page import asciidoc_markdown
from core.ingest.chunking import document_hash
from core.ingest.loaders import load_file, read_regular_file
from core.ingest.walk import scan_folder
from tests.support.paths import ROOT

ANTORA = """name: widget
version: '2.0'
asciidoc:
  attributes:
    url-repo: https://git.test/widget
    widget-version: '2.1.0@'
    unset-me: false
"""

EXAMPLE = """require 'widget'
# tag::config[]
Widget.configure do |c|
  c.port = 8080 # <1>
end
# end::config[]
"""

PAGE = """= Install Widget
Jane Doe <jane@example.org>
v2.0, 2026-01-01
:url-docs: {url-repo}/docs

Widget {widget-version} installs with one command, see {url-docs}[the docs^]; {unknown} stays.

[#requirements]
== Requirements

include::partial$requirements.adoc[]

ifdef::env-site[]
Shown on the site.
endif::[]
ifdef::env-github[]
Shown on GitHub only.
endif::[]
ifeval::["{widget-version}" == "2.1.0"]
Version two point one.
endif::[]
ifdef::unset-me[Never shown.]

== Configure

.Configure the port
[source,ruby]
----
include::example$app.rb[tag=config]
----
<1> The port the server listens on.
"""


def _site(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    for folder in ("pages", "partials", "examples"):
        (root / "modules" / "ROOT" / folder).mkdir(parents=True)
    (root / "modules" / "guide" / "pages").mkdir(parents=True)
    (root / "antora.yml").write_text(ANTORA, encoding="utf-8")
    (root / "modules" / "ROOT" / "nav.adoc").write_text("* xref:install.adoc[]\n", encoding="utf-8")
    (root / "modules" / "ROOT" / "partials" / "requirements.adoc").write_text("Widget needs Java 17.\n")
    (root / "modules" / "ROOT" / "examples" / "app.rb").write_text(EXAMPLE, encoding="utf-8")
    (root / "modules" / "ROOT" / "pages" / "install.adoc").write_text(PAGE, encoding="utf-8")
    (root / "modules" / "guide" / "pages" / "usage.adoc").write_text("= Usage\n\nRun `widget`.\n")
    (root / "modules" / "guide" / "pages" / "_draft.adoc").write_text("= Draft\n\nNot published.\n")
    return root


def _markdown(text: str, tmp_path: Path, name: str = "page.adoc") -> str:
    page = tmp_path / name
    page.write_text(text, encoding="utf-8")
    return asciidoc_markdown(text, path=page, root=tmp_path,
                             read=functools.partial(read_regular_file, root=tmp_path)).strip()


def test_an_antora_page_reads_its_includes_attributes_and_conditions(tmp_path: Path) -> None:
    root = _site(tmp_path)
    doc = load_file(root / "modules/ROOT/pages/install.adoc", root=root, base_url="https://d.test")
    assert doc.title == "Install Widget"
    assert doc.url == "https://d.test/widget/2.0/install.html"  # the site's root, the component, its version
    assert doc.parser.startswith("asciidoc-1")
    blocks = {tuple(s.headings): s.blocks for s in doc.sections}
    assert blocks[("Install Widget",)] == [  # the author and revision lines show nothing
        "Widget 2.1.0 installs with one command, see [the docs](https://git.test/widget/docs); "
        "{unknown} stays."]
    assert blocks[("Install Widget", "Requirements")] == [
        "Widget needs Java 17.", "Shown on the site. Version two point one."]
    configure = blocks[("Install Widget", "Configure")]
    # The block's title is the code's, the example's tagged lines its code, the callout left out.
    assert configure[0] == ('```ruby title="Configure the port"\n'
                            "Widget.configure do |c|\n  c.port = 8080\nend\n```")
    assert configure[-1] == "- The port the server listens on."


def test_antora_publishes_only_module_pages(tmp_path: Path) -> None:
    root = _site(tmp_path)
    names = sorted(p.relative_to(root).as_posix() for p in scan_folder(root).files)
    assert names == ["modules/ROOT/pages/install.adoc", "modules/guide/pages/usage.adoc"]
    usage = load_file(root / names[1], root=root, base_url="https://d.test")
    assert usage.url == "https://d.test/widget/2.0/guide/usage.html"
    # Asciidoctor's partial, outside Antora too
    assert is_unpublished(Path("docs/_x.adoc"), root=Path("docs"))
    assert not is_unpublished(tmp_path / "guide.adoc", root=tmp_path)


def test_a_page_is_stored_again_when_an_example_it_includes_changes(tmp_path: Path) -> None:
    root = _site(tmp_path)
    page = root / "modules/ROOT/pages/install.adoc"
    before = document_hash(load_file(page, root=root))
    (root / "modules/ROOT/examples/app.rb").write_text(EXAMPLE.replace("8080", "9090"), encoding="utf-8")
    assert document_hash(load_file(page, root=root)) != before


@pytest.mark.parametrize("include", [
    "include::../secret.txt[]",  # outside the docs folder: never read
    "include::{up}/secret.txt[]",  # nor through an attribute
    "include::link.txt[]",  # nor through a link
    "include::missing.adoc[]",
    "include::https://example.org/x.adoc[]",  # never from the network
])
def test_includes_stay_inside_the_docs(tmp_path: Path, include: str) -> None:
    (tmp_path / "secret.txt").write_text("SECRET", encoding="utf-8")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "link.txt").symlink_to(tmp_path / "secret.txt")
    assert _markdown(f":up: ..\n\nBefore.\n\n{include}\n", docs) == "Before."


def test_an_include_of_itself_ends_and_an_escaped_one_shows(tmp_path: Path) -> None:
    assert _markdown("Before.\n\ninclude::page.adoc[]\n", tmp_path).count("Before.") == 9  # 8 levels deep
    shown = _markdown("Type:\n\n\\include::partial$x.adoc[]\n", tmp_path)
    assert shown == "Type:\n\ninclude::partial$x.adoc[]"


def test_includes_add_no_more_than_the_biggest_file(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("x" * 1_000_000, encoding="utf-8")
    text = _markdown("----\n" + "include::big.txt[]\n" * 40 + "----\n", tmp_path)
    assert 15_000_000 < len(text) < 17_500_000


def test_include_lines_tags_and_level_offset(tmp_path: Path) -> None:
    (tmp_path / "code.py").write_text("one\ntwo\nthree\nfour\n", encoding="utf-8")
    tagged = "# tag::a[]\n    a = 1\n# end::a[]\n# tag::b[]\n    b = 2\n# end::b[]\n"
    (tmp_path / "tagged.py").write_text(tagged, encoding="utf-8")
    (tmp_path / "part.adoc").write_text("== Part\n\nText.\n", encoding="utf-8")
    (tmp_path / "book.adoc").write_text("= Chapter\n\n== Section\n", encoding="utf-8")
    text = _markdown("[source,python]\n----\ninclude::code.py[lines=2..3;1]\n----\n\n"
                     "----\ninclude::tagged.py[tags=*;!b,indent=0]\n----\n\n"
                     "include::part.adoc[leveloffset=+1]\n\ninclude::book.adoc[leveloffset=1]\n\n"
                     ":leveloffset: +1\n\ninclude::book.adoc[]\n", tmp_path)
    assert "```python\ntwo\nthree\none\n```" in text
    assert "```\na = 1\n```" in text
    assert "### Part" in text
    assert text.count("## Chapter") == 2 and text.count("### Section") == 2  # an offset, not a level


def test_notes_lists_terms_and_ui_macros(tmp_path: Path) -> None:
    text = _markdown("""NOTE: Restart after changing it.

[TIP]
====
Use *environment variables* for secrets.
====

.Warning title
[WARNING]
====
Careful.
====

Press kbd:[Ctrl+C], click btn:[Stop], then menu:File[Save As]; see <<_configure>> and xref:usage.adoc[].

CLI options::
`--port`::: The port.

. Download it.
.. Check it.
. Run it.

== Configure
""", tmp_path)
    assert "Note: Restart after changing it." in text
    assert "Tip: Use **environment variables** for secrets." in text
    assert "Warning: Warning title\n\nCareful." in text
    assert "Press Ctrl+C, click Stop, then File > Save As; see Configure and usage." in text
    assert "- **CLI options**:\n  - **`--port`**: The port." in text
    assert "1. Download it.\n   1. Check it.\n2. Run it." in text


def test_tables_keep_their_rows_header_and_spans(tmp_path: Path) -> None:
    text = _markdown("""[cols="1,2",options="header"]
|===
|Option |Meaning
|port |The port
2+|spans both
|===

|===
|a |b

|c
|d
|===

[format=csv]
|===
x,"y, z"
|===
""", tmp_path)
    assert "| Option | Meaning |\n|---|---|\n| port | The port |\n| spans both |  |" in text
    assert "| a | b |\n|---|---|\n| c | d |" in text  # the first line, then a blank one: the header
    assert "|  |  |\n|---|---|\n| x | y, z |" in text


def test_literal_paragraphs_and_listings_are_code_and_comments_show_nothing(tmp_path: Path) -> None:
    text = _markdown("""Run:

 $ widget --version

// a comment
////
a comment block
////

....
literal <1>
....

++++
<div>raw</div>
++++
""", tmp_path)
    assert "```\n$ widget --version\n```" in text and "```\nliteral\n```" in text
    assert "comment" not in text and "raw" not in text


def test_a_page_of_plain_asciidoc_outside_antora(tmp_path: Path) -> None:
    page = tmp_path / "guide.adoc"
    page.write_text("= Guide\n:toc:\n\nifndef::env-site[Read outside a site.]\n\n== Use\n\nText.\n")
    doc = load_file(page, root=tmp_path, base_url="https://d.test")
    assert doc.title == "Guide" and doc.url == "https://d.test/guide.html"
    assert [s.blocks for s in doc.sections] == [["Read outside a site."], ["Text."]]


@pytest.mark.parametrize(("source", "shown"), [
    ("<docname>:: The file's name.\n", "- **<docname>**: The file's name."),  # text, not a tag
    (":url: https://x.test\n\nSee {url}[`Converter`].", "See [`Converter`](https://x.test)."),
    ("Hosted {url-org}/repo[on GitHub^].", "Hosted on GitHub."),  # an attribute no one set: its text
    ("It is `'toc' \\=> 'left'` and \\*not bold*.", "It is `'toc' => 'left'` and *not bold*."),
    (":release: 2.1\n\n[subs=attributes+]\n $ tool {release}", "```\n$ tool 2.1\n```"),
    ("[,yaml]\n----\n---  <.>\nkey: v <.>\n----", "```yaml\n---\nkey: v\n```"),
    (":description: pass:q[The `SHOW` statement.]\n\n{description}", "The `SHOW` statement."),
    ("Use [blue]*blue* and $$*raw*$$ and a link:x.html[wrapped\ntext].",
     "Use **blue** and *raw* and a [wrapped text](x.html)."),
    (". One.\n+\nMore about one.\n. Two.", "1. One.\nMore about one.\n2. Two."),
    ("Copy <<ex-doc>>.\n\n.my-doc.adoc\n[#ex-doc,asciidoc]\n----\n= Title\n----", "Copy my-doc.adoc."),
    ("[tabs]\n====\nJava::\n+\n[source,java]\n----\nint x;\n----\n====", '```java title="Java"\nint x;\n```'),
    # A fence's title holds no backtick; a cell of one bracketed line is text, a cell's note a note.
    ("[tabs]\n====\nOld (`Api`)::\n+\n----\nx\n----\n====", '``` title="Old (Api)"\nx\n```'),
    ("[cols=2*]\n|===\n|Default\n|[\"localhost\"]\n|Note\na|NOTE: Careful.\n|===",
     '| Default | ["localhost"] |\n| Note | Note: Careful. |'),
    ("= Book\n:doctype: book\n\n= Part One\n\n== Chapter", "### Chapter"),  # a part is a section of the page
])
def test_inline_markup_and_blocks_read_as_shown(tmp_path: Path, source: str, shown: str) -> None:
    page = tmp_path / "page.adoc"
    page.write_text(source, encoding="utf-8")
    doc = load_file(page, root=tmp_path)
    blocks = "\n".join(b for s in doc.sections for b in s.blocks)
    assert shown in _markdown(source, tmp_path) or shown in blocks


def test_tables_without_comments_with_cell_blocks_and_named_columns(tmp_path: Path) -> None:
    text = _markdown("""[cols="2*"]
|===
|Property
|Default

|`port`
|8080

// |`host`
// |localhost

|`path`
a|
[,ruby]
----
path = '/x'
----

|`os`
a|
* Debian
* Fedora +
or Ubuntu
|===
""", tmp_path)
    assert text == ("| Property | Default |\n|---|---|\n| `port` | 8080 |\n| `path` | `path = '/x'` |\n"
                    "| `os` | Debian; Fedora or Ubuntu |")


def test_antora_xrefs_show_the_page_title_and_examples_from_the_family_root(tmp_path: Path) -> None:
    root = _site(tmp_path)
    (root / "modules/ROOT/pages/other.adoc").write_text("= Other Page\n\nx\n", encoding="utf-8")
    page = root / "modules/ROOT/pages/page.adoc"
    page.write_text("See xref:other.adoc[] and xref:guide:usage.adoc[].\n\n"
                    "[,ruby]\n----\ninclude::ROOT:example$/app.rb[lines=1]\n----\n"
                    "{page-component-name} {page-component-version} {page-module}", encoding="utf-8")
    text = asciidoc_markdown(page.read_text(), path=page, root=root,
                             read=functools.partial(read_regular_file, root=root))
    assert "See Other Page and Usage." in text
    assert "```ruby\nrequire 'widget'\n```" in text
    assert "widget 2.0 ROOT" in text


def test_only_what_a_book_shows_whole_is_no_page_of_its_own(tmp_path: Path) -> None:
    (tmp_path / "index.adoc").write_text("= Home\n\ninclude::install.adoc[tag=summary]\n\n"
                                         "ifdef::env-github[]\ninclude::github.adoc[]\nendif::[]\n\n"
                                         "////\ninclude::commented.adoc[]\n////\n")
    for name in ("install", "github", "commented"):
        (tmp_path / f"{name}.adoc").write_text(f"= {name}\n\nText.\n")
    names = sorted(p.name for p in scan_folder(tmp_path).files)
    assert names == ["commented.adoc", "github.adoc", "index.adoc", "install.adoc"]


def test_a_book_s_chapters_are_read_where_the_book_includes_them(tmp_path: Path) -> None:
    (tmp_path / "sections").mkdir()
    (tmp_path / "book.adoc").write_text("= Book\n:chapters: .\n\ninclude::{chapters}/ch1.adoc[]\n")
    (tmp_path / "ch1.adoc").write_text("== One\n\nIntro.\n\ninclude::sections/../sections/s1.adoc[]\n")
    (tmp_path / "sections" / "s1.adoc").write_text("=== Install\n\nRun `x`.\n")
    (tmp_path / "a.adoc").write_text("= A\n\ninclude::b.adoc[]\n")  # a loop no page reaches: both stay
    (tmp_path / "b.adoc").write_text("= B\n\ninclude::a.adoc[]\n")
    names = sorted(p.relative_to(tmp_path).as_posix() for p in scan_folder(tmp_path).files)
    assert names == ["a.adoc", "b.adoc", "book.adoc"]
    doc = load_file(tmp_path / "book.adoc", root=tmp_path)
    assert [(s.headings, s.blocks) for s in doc.sections] == [
        (["Book", "One"], ["Intro."]), (["Book", "One", "Install"], ["Run `x`."])]


def test_blocks_nested_deep_or_never_closed_are_read_without_failing(tmp_path: Path) -> None:
    nested = [("=" * (4 + i)) for i in range(200)] + [("=" * (4 + i)) for i in reversed(range(200))]
    unread = "ifeval::[" + "x" * 1000 + " == y]"  # too long to read: it holds
    lines = [*nested, "----", "----", unread, "Shown.", "", "====", "Never closed."]
    text = _markdown("\n".join(lines), tmp_path)
    assert "Shown." in text and text.endswith("Never closed.")


def test_a_listing_s_title_line_a_grid_of_names_and_a_code_title_are_read_as_shown(tmp_path: Path) -> None:
    text = _markdown("""= Page

[,asciidoc]
----
= Not a part
----

== Section

[cols="3*"]
|===
|C |C++ |Clojure
|Delphi |Erlang |Go
|Groovy |Java |Lua
|===

.pandoc < 2.11
----
$ pandoc
----
""", tmp_path)
    assert "\n## Section" in text  # the listing's "= Not a part" makes no book of parts
    assert "|  |  |  |\n|---|---|---|\n| C | C++ | Clojure |" in text
    assert '``` title="pandoc < 2.11"' in text


@pytest.mark.parametrize("config", [
    "version: 2024-02-30\n",  # no date: YAML refuses it
    "name: " + "[" * 1200 + "]" * 1200 + "\n",  # too deep for the parser
    "a: &a [x, x]\nb: &b [*a, *a]\nasciidoc: {attributes: {bomb: *b}}\n",  # a list is no value
    "\x00\x01 not yaml: [\n",
])
def test_a_bad_antora_yml_leaves_its_pages_read(tmp_path: Path, config: str,
                                                caplog: pytest.LogCaptureFixture) -> None:
    root = _site(tmp_path)
    (root / "antora.yml").write_text(config, encoding="utf-8")
    assert len(scan_folder(root).files) == 2
    doc = load_file(root / "modules/ROOT/pages/install.adoc", root=root, base_url="https://d.test")
    assert doc.title == "Install Widget"
    if "bomb" not in config:  # YAML, its values unread: nothing to say
        assert "antora.yml: not read, its pages are read without its attributes" in caplog.text


def test_an_include_not_read_is_named_in_a_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    assert _markdown("Before.\n\ninclude::missing.adoc[]\n", tmp_path) == "Before."
    assert "page.adoc: include::missing.adoc[] not read" in caplog.text


def test_antora_yml_is_read_inside_the_docs_and_again_when_edited(tmp_path: Path) -> None:
    root = _site(tmp_path)
    page = root / "modules/ROOT/pages/install.adoc"
    assert "Widget 2.1.0 installs" in load_file(page, root=root).sections[0].blocks[0]
    (root / "antora.yml").write_text(ANTORA.replace("2.1.0@", "3.0.0-longer"), encoding="utf-8")
    assert "Widget 3.0.0-longer installs" in load_file(page, root=root).sections[0].blocks[0]
    outside = tmp_path / "outside.yml"
    outside.write_text("asciidoc: {attributes: {widget-version: SECRET}}\n", encoding="utf-8")
    (root / "antora.yml").unlink()
    (root / "antora.yml").symlink_to(outside)
    assert "SECRET" not in load_file(page, root=root).sections[0].blocks[0]


def test_two_components_in_one_folder_have_their_own_addresses(tmp_path: Path) -> None:
    for name in ("alpha", "beta"):
        pages = tmp_path / name / "modules" / "ROOT" / "pages"
        pages.mkdir(parents=True)
        (tmp_path / name / "antora.yml").write_text(f"name: {name}\nversion: ~\n", encoding="utf-8")
        (pages / "index.adoc").write_text("= Home\n", encoding="utf-8")
    pages = scan_folder(tmp_path).files
    urls = sorted(load_file(p, root=tmp_path, base_url="https://d.test").url for p in pages)
    assert urls == ["https://d.test/alpha/index.html", "https://d.test/beta/index.html"]


@pytest.mark.parametrize("source", [
    "image:a[ " * 3000, "link:x[ " * 10000, "kbd:[ " * 10000, "`+x+`y " * 5000, "footnote:[ " * 5000,
    "{x}[ " * 10000, "<<a " * 10000, "----\nx" + " " * 20000 + "y\n----", "== a" + " " * 20000 + "b",
    ":a: x" + " " * 20000 + "y", "word\n" * 40000, "[cols=1]\n|===\n9999*|y\n|===",
    "[cols=\"9999*\"]\n|===\n|a\n|===", "|===\n|a 9999+|b\n|===",
    "[cols=1]\n|===\n" + "9" * 5000 + "*|y\n|===",
])
def test_pages_written_to_stall_ingest_are_read(tmp_path: Path, source: str) -> None:
    _markdown(source, tmp_path)  # linear: each is read in a fraction of a second (bench: none needed)


def test_blocks_read_as_asciidoctor_reads_them(tmp_path: Path) -> None:
    text = _markdown("""NAME
----
git-add - Add file contents

====
An example showing a listing:

----
====
inner
====
----

Still in the example.
====

[source,bash]
echo hi
# then bye

[start=4]
. four
. five

.Second
. x

[comment]
Hidden.

[cols="1,1"]
|===
|Java
|11+
|===
""", tmp_path)
    assert text.startswith("## NAME\n\ngit-add - Add file contents")
    assert "```\n====\ninner\n====\n```" in text and "Still in the example." in text
    assert "```bash\necho hi\n# then bye\n```" in text
    assert "4. four\n5. five" in text and "Second:\n\n1. x" in text
    assert "Hidden" not in text
    assert "| Java | 11+ |" in text


@pytest.mark.parametrize(("source", "shown"), [
    ("|===\n|Slim |x\n\n|- if title?\n|y\n|===", "| - if title? | y |"),  # blocks in ``a|`` cells only
    ('[cols="1,2a"]\n|===\n|x\n| Some text.\n\nMore.\n|===', "| x | Some text. More. |"),  # no code
    ("|===\n|A\na|\n[tabs]\n====\nXML::\n+\n----\n<a/>\n----\n====\n|===", "| XML: `<a/>` |"),
    ("Such as pass:[asciimath:[x] #y# +z+] are.", "Such as asciimath:[x] #y# +z+ are."),
    ("Bad ids such as `[#cat#dog]` fail.", "Bad ids such as `[#cat#dog]` fail."),
    (". One\n+\n.Example\n----\ncode\n----\n. Two", "2. Two"),  # a titled block in a step
    ("* item\n+\n literal\n+\nor this", "```\nliteral\n```\n\nor this"),
    ("See <<7-start, running>>.", "See running."),
])
def test_cells_passthroughs_steps_and_references_read_as_shown(
        tmp_path: Path, source: str, shown: str) -> None:
    assert shown in _markdown(source, tmp_path)


def test_the_reader_is_imported_only_when_a_page_is_read() -> None:
    code = ("import sys, core.ingest.loaders, core.ingest.walk; "
            "print(sorted(m for m in ('yaml', 'core.ingest.asciidoc.page') if m in sys.modules))")
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert shown.stdout.strip() == "[]"  # every command starts without them
