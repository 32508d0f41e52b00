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
