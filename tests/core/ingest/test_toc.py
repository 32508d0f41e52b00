from __future__ import annotations

import functools
from pathlib import Path

from core.ingest.loaders import load_file, read_regular_file
from core.ingest.toc import book_titles

SUMMARY = """# The Book

[Foreword](foreword.md)

- [Generics](ch10-00-generics.md)
  - [Validating References with `Lifetimes`](ch10-03-lifetime-syntax.md#start)
  - [Draft]()
  - [Outside](../elsewhere.md)
"""


def test_a_book_s_table_of_contents_titles_pages_without_one(tmp_path: Path) -> None:
    (tmp_path / "SUMMARY.md").write_text(SUMMARY, encoding="utf-8")
    page = tmp_path / "ch10-03-lifetime-syntax.md"
    page.write_text("## Validating\n\ntext\n\n## Generic Lifetimes\n\nmore\n\n## Summary\n\nend\n",
                    encoding="utf-8")
    titles = book_titles(tmp_path, functools.partial(read_regular_file, root=tmp_path))
    assert titles == {"foreword.md": "Foreword", "ch10-00-generics.md": "Generics",
                      "ch10-03-lifetime-syntax.md": "Validating References with Lifetimes"}
    doc = load_file(page, root=tmp_path, titles=titles)
    assert doc.title == "Validating References with Lifetimes" and doc.parser == "toc-title-1"
    assert load_file(page, root=tmp_path).title == "Ch10 03 Lifetime Syntax"  # no book: its file's name
    titled = tmp_path / "foreword.md"
    titled.write_text("# A Foreword of Its Own\n\ntext\n", encoding="utf-8")
    assert load_file(titled, root=tmp_path, titles=titles).title == "A Foreword of Its Own"


def test_no_table_of_contents_gives_no_titles(tmp_path: Path) -> None:
    assert book_titles(tmp_path, functools.partial(read_regular_file, root=tmp_path)) == {}
