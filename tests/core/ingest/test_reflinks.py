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
    _, sections = parse_markdown(PAGE)
    assert sections[0].blocks == [
        "Go to [the install page](https://www.rust-lang.org/tools/install)  and read "
        "[`std::io::Stdin`](../std/io/struct.Stdin.html),\n[Prelude](../std/prelude/index.html) or "
        "[prelude](../std/prelude/index.html). ![logo](img/logo.png)",
        "```rust\nlet install = [install];\n```",  # code is code
    ]


def test_what_no_definition_names_stays_as_written() -> None:
    prose = "Index a[0][1], task [x] done, [unknown][nope] and [label]: not a definition here."
    assert inline_links(prose, definitions(prose)) == prose
    assert inline_links("See [docs].\n\n[docs]: https://d.test", {"docs": "https://d.test"}) == (
        "See [docs](https://d.test).\n\n")


def test_pages_defining_links_are_chunked_again_once(tmp_path: Path) -> None:
    page = tmp_path / "install.md"
    page.write_text(PAGE, encoding="utf-8")
    assert load_file(page, root=tmp_path).parser == "reflinks-1"
