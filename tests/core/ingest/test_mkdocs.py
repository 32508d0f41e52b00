"""MkDocs' Markdown extensions: admonitions, collapsible notes, content tabs and snippets read as Markdown."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from core.ingest.loaders import load_file
from core.ingest.mkdocs import looks_like_mkdocs, mkdocs_to_markdown

PAGE = """\
# Installing

!!! note

    The installer needs `curl`.

    It never asks for a password.

=== "macOS and Linux"

    ```console
    $ curl -LsSf https://example.org/install.sh | sh
    ```

=== "Windows"

    Use PowerShell:

    ```pwsh-session
    PS> irm https://example.org/install.ps1 | iex
    ```

    !!! tip "Heads up"
        Restart the shell afterwards.

--8<-- "includes/footer.md"

```markdown
!!! note
    An example of the syntax, left as written.
```
"""


def test_mkdocs_pages_read_as_markdown(tmp_path: Path) -> None:
    page = tmp_path / "install.md"
    page.write_text(PAGE)
    doc = load_file(page, root=tmp_path)
    assert doc.title == "Installing" and doc.parser == "mkdocs-1"
    [section] = doc.sections
    assert section.blocks == [
        "Note: The installer needs `curl`.",
        "It never asks for a password.",
        "macOS and Linux:",
        "```console\n$ curl -LsSf https://example.org/install.sh | sh\n```",
        "Windows: Use PowerShell:",
        "```pwsh-session\nPS> irm https://example.org/install.ps1 | iex\n```",
        "Heads up: Restart the shell afterwards.",
        "```markdown\n!!! note\n    An example of the syntax, left as written.\n```",
    ]


@pytest.mark.parametrize(("mkdocs", "markdown"), [
    ('!!! warning "Breaking change"\n    Flags were renamed.', "Breaking change: Flags were renamed."),
    ('!!! note ""\n    No title shown.', "No title shown."),
    ("??? info\n    Folded by default.", "Info: Folded by default."),
    ('???+ tip "Open"\n    Unfolded.', "Open: Unfolded."),
    ("!!! note inline end\n    Beside the text.", "Note: Beside the text."),
    ("!!! danger\n\n    - first\n    - second", "Danger:\n\n- first\n- second"),
    ("!!! note\n\nNot indented, so not the note's.", "Not indented, so not the note's."),
    ("1. Step one\n\n    !!! note\n        Inside the item.", "1. Step one\n\n    Note: Inside the item."),
    ("\t!!! note\n\t\tTabs count as four columns.", "\tNote: Tabs count as four columns."),
])
def test_admonitions_become_labelled_prose(mkdocs: str, markdown: str) -> None:
    # Blank lines around a rewritten block keep it apart from its neighbours; their number is no matter.
    read = re.sub(r"\n{3,}", "\n\n", mkdocs_to_markdown(mkdocs)).strip("\n")
    assert read == markdown.replace("\tNote", "    Note")


@pytest.mark.parametrize("text", [
    "Title\n===\n\nBody.",  # a setext heading's underline is no tab
    "Shout it !!! note this",  # a marker in the middle of a line is text
    '=== no quotes\n    indented',
    "```\n=== \"Tab\"\n    code\n```",
])
def test_other_text_is_left_as_written(text: str) -> None:
    assert mkdocs_to_markdown(text) == text


def test_snippet_includes_are_dropped_inline_and_as_blocks() -> None:
    text = 'Before.\n\n--8<-- "footer.md"\n\n--8<--\nabbreviations.md\nlinks.md\n--8<--\n\nAfter.'
    assert mkdocs_to_markdown(text).split() == ["Before.", "After."]


def test_detection_and_deep_nesting() -> None:
    assert looks_like_mkdocs('=== "Linux"\n    x') and looks_like_mkdocs("!!! tip\n    x")
    assert not looks_like_mkdocs("# Plain\n\nJust **Markdown** with a ``` fence.")
    deep = "".join(" " * (4 * i) + "!!! note\n" for i in range(400)) + " " * 1600 + "Deep."
    assert "Deep." in mkdocs_to_markdown(deep)  # no recursion error: deep nesting stays text


def test_plain_markdown_keeps_its_parser_tag(tmp_path: Path) -> None:
    page = tmp_path / "plain.md"
    page.write_text("# Plain\n\nNothing MkDocs-specific here.\n")
    assert load_file(page, root=tmp_path).parser == ""
