"""MyST Markdown (Sphinx docs in Markdown): directives, roles, targets and comments read as Markdown."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.ingest.loaders import load_file
from core.ingest.myst import looks_like_myst, myst_to_markdown

PAGE = """\
(install)=
# Installation

% an editor's comment
See {ref}`the quickstart <quickstart>` and call {py:func}`~mylib.connect`.

```{note}
You need Python 3.9 or newer.
```

```{code-block} python
:caption: example.py

import mylib
```

```{toctree}
:maxdepth: 2

usage
```

:::{warning}
Do not run as root.
:::

````{tab-item} Linux
```{code-block} bash
make install
```
````

```{versionadded} 2.1
The `--user` flag.
```

```python
x = {func}`not a role inside code`
```

```{eval-rst}
.. autofunction:: mylib.connect
```
"""


def test_myst_pages_read_as_markdown(tmp_path: Path) -> None:
    page = tmp_path / "install.md"
    page.write_text(PAGE)
    doc = load_file(page, root=tmp_path)
    assert doc.title == "Installation" and doc.parser == "myst-2"
    [section] = doc.sections
    assert section.blocks == [
        "See the quickstart and call `connect`.",
        "Note: You need Python 3.9 or newer.",
        "```python\nimport mylib\n```",
        "Warning: Do not run as root.",
        "Linux:",
        "```bash\nmake install\n```",
        "New in version 2.1: The `--user` flag.",
        "```python\nx = {func}`not a role inside code`\n```",
    ]


@pytest.mark.parametrize(("myst", "markdown"), [
    ("```{admonition} Custom title\n:class: tip\n\nBody.\n```", "Custom title: Body."),
    ("```{only} latex\nPrint only.\n```\n```{only} html\nWeb only.\n```", "Web only."),
    ("```{function} connect(host)\nOpen a connection.\n```", "`connect(host)`\n\nOpen a connection."),
    ("```{seealso}\n- {doc}`usage`\n```", "See also:\n\n- usage"),
    ("```{math}\ne = mc^2\n```", "```math\ne = mc^2\n```"),
    # A code directive showing a fence keeps it inside a longer one.
    ("````{code-block} markdown\n```bash\nmake\n```\n````\nAfter.",
     "````markdown\n```bash\nmake\n```\n````\n\nAfter."),
    ("::::{grid}\n:::{grid-item-card} Install\nRun `make`.\n:::\n::::", "Install: Run `make`."),
    ("~~~{note}\nTilde fenced.\n~~~", "Note: Tilde fenced."),
    ("```{note}\nNever closed.", "Note: Never closed."),
    ("```{versionadded} 2.1\n```", "New in version 2.1."),
    ("```{note}\n```", ""),  # no dangling "Note:"
    ("```{rubric} Footnotes\n```", "Footnotes"),
    ("```{spelling:word-list}\nfoo\n```", ""),
    ("```python\n% not a comment\n(label)=\n```", "```python\n% not a comment\n(label)=\n```"),
    ("(hiding/remove-content)=\n# Remove content", "# Remove content"),
    ("A {code}`List<int>` and {kbd}`Ctrl`.", "A `List<int>` and `Ctrl`."),
    # reStructuredText inside MyST is read as an .rst page is: an extension's example is code.
    ("```{eval-rst}\n.. note:: Written in RST.\n```", "Note: Written in RST."),
    ("```{eval-rst}\n.. tool:example::\n\n    @command()\n    def run():\n        pass\n```",
     "```python\n@command()\ndef run():\n    pass\n```"),
    ("```{eval-rst}\n.. currentmodule:: mylib\n```", ""),
])
def test_directives_become_markdown(myst: str, markdown: str) -> None:
    assert myst_to_markdown(myst).strip("\n") == markdown


@pytest.mark.parametrize(("line", "read"), [
    ("call {func}`connect` or {ref}`the guide <guide>`", "call `connect` or the guide"),
    ("the path `/items/{item_id}` has a parameter `item_id`", None),  # braces in code: no role
    ("a thread id is `slack:{team}:{channel}` or ``{x}`y` ``", None),
    ("see [the docs](/docs/jetty){.external} and ![art](a.png){w=500px h=500px}",
     "see [the docs](/docs/jetty) and ![art](a.png)"),
])
def test_roles_and_attributes_outside_code_spans(line: str, read: str | None) -> None:
    assert myst_to_markdown(line) == (line if read is None else read)


def test_deep_nesting_is_read_without_exhausting_the_stack() -> None:
    text = myst_to_markdown(":::{note}\n" * 600 + "Deep.\n")
    assert "Deep." in text


def test_a_page_with_roles_only_is_myst() -> None:
    assert looks_like_myst("Call {py:func}`connect` first.") and not looks_like_myst("Call `connect` first.")


def test_a_page_with_targets_only_is_myst_and_its_targets_go() -> None:
    page = "(labels/line-length)=\n\n### Line length\n\nIt defaults to 88 characters."
    assert looks_like_myst(page)
    assert "(labels/" not in myst_to_markdown(page)
    assert not looks_like_myst("See (this)= that, in a sentence.")
    assert not looks_like_myst("```haskell\n(+)=\nx\n```\n\n%APPDATA%\\tool is read.")


def test_plain_markdown_and_mdx_are_not_read_as_myst(tmp_path: Path) -> None:
    # FastAPI's heading ids, code includes and path parameters, a shell's braces, JSX: none is MyST.
    plain = ("# Title { #title }\n\n{* ../src/app.py hl[3] *}\n\n"
             "The path `/items/{item_id}` has `item_id`.\n\n```bash\necho ${HOME}\n```\n")
    assert not looks_like_myst(plain)
    mdx = tmp_path / "page.mdx"
    mdx.write_text("# Page\n\n<Tabs>{items}</Tabs> and {ref}`x`\n")
    assert load_file(mdx, root=tmp_path).parser == ""
    markdown = tmp_path / "plain.md"
    markdown.write_text(plain)
    assert load_file(markdown, root=tmp_path).parser == "includes-2"  # not MyST; its include read anew
