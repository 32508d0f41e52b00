"""MDX's syntax over lines (comments, ESM statements) read before a page is split at its fences."""

from __future__ import annotations

from pathlib import Path

from core.ingest.loaders import load_file
from core.ingest.mdx import without_exports

PAGE = """# Highlighting

export async function ANSI() {
  const rawJs = await compileMdx(`~~~md filename="Markdown"
${rawAnsi}
~~~

Renders: it's "quoted" \\` and {braced`)
  return <MDXRemote compiledSource={rawJs} />
}

You can highlight ANSI escape codes.

## Supported languages

export const meta = { title: 'x' }

All of Shiki's.
"""


def test_an_export_over_blank_lines_and_fences_is_one_statement(tmp_path: Path) -> None:
    page = tmp_path / "highlighting.mdx"
    page.write_text(PAGE, encoding="utf-8")
    doc = load_file(page, root=tmp_path)
    assert [(s.headings, s.blocks) for s in doc.sections] == [
        (["Highlighting"], ["You can highlight ANSI escape codes."]),
        (["Highlighting", "Supported languages"], ["All of Shiki's."])]


def test_an_export_never_closed_or_shown_in_code_is_left_to_the_line_reading() -> None:
    text = "```js\nexport function a() {\n```\n\nexport const b = {\n\nText."
    assert without_exports(text) == text
    # A line of a component's attribute is no statement (Nextra's <APIDocs code={`...`} />).
    shown = "<APIDocs\n  code={`type $ = {}\nexport default $`}\n/>\n\n## Layouts\n\nText."
    assert without_exports(shown) == shown


def _blocks(tmp_path: Path, name: str, text: str) -> list[str]:
    page = tmp_path / name
    page.write_text(text, encoding="utf-8")
    return [block for section in load_file(page, root=tmp_path).sections for block in section.blocks]


def test_a_comment_in_a_code_span_or_never_closed_hides_nothing(tmp_path: Path) -> None:
    text = "# P\n\nStart one with `{/*`.\n\n```js\nconst a = 1\n```\n\n## Keep me\n\nBody {/* never closed.\n"
    for name in ("p.mdx", "p.md"):  # in Markdown, {/* is text anyway
        assert _blocks(tmp_path, name, text) == ["Start one with `{/*`.", "```js\nconst a = 1\n```",
                                                 "Body {/* never closed."]


def test_text_for_agents_ends_where_its_tag_closes_whatever_shares_the_line(tmp_path: Path) -> None:
    assert _blocks(tmp_path, "a.mdx", '# P\n\nIntro.\n\n<Visibility for="agents">\nUse the API. '
                   '</Visibility>\n\n<Prompt description="Set up the CLI" />\n\n## Install\n\nRun npm i.\n\n'
                   '<Visibility for="agents">\nnever closed\n') == [
        "Intro.", "Prompt: Set up the CLI", "Run npm i.", "never closed"]


def test_a_prompt_s_opening_tag_over_lines_is_one_tag(tmp_path: Path) -> None:
    text = ('# P\n\n<Prompt\n  description="Install the CLI."\n  actions={["copy"]}\n>\nInstall it so I can '
            'preview.\n</Prompt>\n\nAfter.\n\n```mdx\n<Prompt\n  description="shown"\n>\n```\n')
    assert _blocks(tmp_path, "p.mdx", text) == ["Prompt: Install the CLI.", "After.",
                                                '```mdx\n<Prompt\n  description="shown"\n>\n```']


def test_mdx_syntax_in_a_markdown_page_s_indented_code_is_code(tmp_path: Path) -> None:
    text = ("# P\n\nTo hide text from readers, write:\n\n    <Visibility for=\"agents\">\n    Only agents.\n"
            "    </Visibility>\n")
    shown = '```\n<Visibility for="agents">\nOnly agents.\n</Visibility>\n```'
    assert _blocks(tmp_path, "p.md", text)[1] == shown


def test_adversarial_pages_are_read_in_one_pass(tmp_path: Path) -> None:
    # Each of these took from seconds to minutes when a pass re-read what it had read.
    exports = ("export const a = {" + "x" * 200 + "\n") * 2000
    icons = "Click " + "<Icon icon='g' /> x " * 20_000 + "\n"
    tree = "<FileTree>\n" + '<FileTree.Folder name="a">\n' * 20_000 + "</FileTree>\n"
    partial = "import S from './_s.mdx'\n\n<S" + " " * 40_000 + "x\n"
    (tmp_path / "_s.mdx").write_text("Shown.\n", encoding="utf-8")
    for k, text in enumerate((exports, icons, tree, partial)):
        assert _blocks(tmp_path, f"big{k}.mdx", text) is not None
