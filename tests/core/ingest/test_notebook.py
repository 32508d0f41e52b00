"""Jupyter notebooks: Markdown cells as written, code cells fenced, outputs and raw cells left out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.errors import IngestSourceError
from core.ingest.loaders import load_file
from core.ingest.notebook import notebook_markdown


def _notebook(cells: list[dict[str, object]], metadata: dict[str, object] | None = None) -> str:
    return json.dumps({"cells": cells, "metadata": metadata or {}, "nbformat": 4, "nbformat_minor": 5})


CELLS = [
    {"cell_type": "markdown", "source": ["# Training a policy\n", "\n", "Load the environment first:"]},
    {"cell_type": "code", "source": "env = make_env('cartpole')\nenv.reset()",
     "outputs": [{"output_type": "stream", "text": ["PRINTED OUTPUT\n"]}]},
    {"cell_type": "raw", "source": "\\\\newpage"},
    {"cell_type": "markdown", "source": ":::{note}\nUse a GPU for long runs.\n:::"},
    {"cell_type": "code", "source": []},
]


def test_cells_become_one_markdown_page(tmp_path: Path) -> None:
    page = tmp_path / "tutorials" / "training.ipynb"
    page.parent.mkdir()
    page.write_text(_notebook(CELLS, {"kernelspec": {"language": "Python", "name": "python3"}}))
    doc = load_file(page, root=tmp_path)
    assert doc.title == "Training a policy"
    assert doc.sections[0].blocks == [
        "Load the environment first:",
        "```python\nenv = make_env('cartpole')\nenv.reset()\n```",
        "Note: Use a GPU for long runs.",  # MyST in a cell is read like a MyST page
    ]
    text = "\n".join(b for s in doc.sections for b in s.blocks)
    assert "PRINTED OUTPUT" not in text and "newpage" not in text


@pytest.mark.parametrize(("metadata", "language"), [
    ({"language_info": {"name": "julia"}}, "julia"),
    ({"kernelspec": {"language": "r ```evil"}}, "r"),  # only a language's name reaches the fence
    ({}, "python"),
])
def test_code_fences_name_the_notebook_language(metadata: dict[str, object], language: str) -> None:
    markdown = notebook_markdown(_notebook([{"cell_type": "code", "source": "x = 1"}], metadata))
    assert markdown == f"```{language}\nx = 1\n```\n"


def test_nbformat_3_worksheets_are_read() -> None:
    old = {"worksheets": [{"cells": [
        {"cell_type": "heading", "level": 2, "source": "Setup"},
        {"cell_type": "code", "input": ["import robot"], "language": "python"},
    ]}], "metadata": {}}
    assert notebook_markdown(json.dumps(old)) == "## Setup\n\n```python\nimport robot\n```\n"


@pytest.mark.parametrize(("content", "reason"), [
    ("{not json", "invalid JSON"),
    ("[1, 2]", "no list of cells"),
])
def test_a_file_that_is_no_notebook_is_named(tmp_path: Path, content: str, reason: str) -> None:
    page = tmp_path / "broken.ipynb"
    page.write_text(content)
    with pytest.raises(IngestSourceError, match=rf"broken\.ipynb: not a Jupyter notebook \({reason}"):
        load_file(page, root=tmp_path)
