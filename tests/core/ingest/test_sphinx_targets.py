"""Cross-references with no title show the title of the section or page they name, as Sphinx does."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from core.ingest.loaders import load_file, read_regular_file
from core.ingest.sphinx_targets import SphinxTargets, sphinx_targets

SETTINGS = """.. _topics-settings:

========
Settings
========

.. _throttle-algorithm:

.. _Other Label:

How it works
------------

The delay adapts.

.. _figure-label:

.. image:: x.png
"""

GUIDE = """Guide
=====

For more information see :ref:`throttle-algorithm`, :ref:`other  label`, :ref:`the rules <topics-settings>`,
:doc:`../topics/settings`, :doc:`/topics/settings`, :ref:`figure-label` and :ref:`missing-label`.
"""


def _folder(tmp_path: Path) -> tuple[Path, SphinxTargets]:
    (tmp_path / "topics").mkdir()
    (tmp_path / "intro").mkdir()
    (tmp_path / "topics" / "settings.rst").write_text(SETTINGS, encoding="utf-8")
    (tmp_path / "intro" / "guide.rst").write_text(GUIDE, encoding="utf-8")
    (tmp_path / "intro" / "notes.md").write_text("# Notes\n", encoding="utf-8")
    pages = sorted(tmp_path.rglob("*.*"))
    return tmp_path, sphinx_targets(tmp_path, pages, functools.partial(read_regular_file, root=tmp_path))


def test_labels_and_pages_are_known_by_their_titles(tmp_path: Path) -> None:
    _, targets = _folder(tmp_path)
    assert targets.labels == {"topics-settings": "Settings", "throttle-algorithm": "How it works",
                              "other label": "How it works"}
    assert targets.pages == {"topics/settings": "Settings", "intro/guide": "Guide"}


def test_a_reference_with_no_title_shows_what_it_names(tmp_path: Path) -> None:
    root, targets = _folder(tmp_path)
    doc = load_file(root / "intro" / "guide.rst", root=root, targets=targets)
    assert doc.sections[0].blocks == [
        "For more information see How it works, How it works, the rules,\nSettings, Settings, figure-label "
        "and missing-label."]
    alone = load_file(root / "intro" / "guide.rst", root=root)  # one page read alone: the labels
    assert alone.sections[0].blocks[0].startswith("For more information see throttle-algorithm, other label")


@pytest.mark.parametrize("text", ["Title\n--\n", "   Title\n   -----\n", "Title\n\n-----\n", ""])
def test_what_is_no_title_names_nothing(tmp_path: Path, text: str) -> None:
    (tmp_path / "a.rst").write_text(f".. _lbl:\n\n{text}", encoding="utf-8")
    read = functools.partial(read_regular_file, root=tmp_path)
    assert sphinx_targets(tmp_path, [tmp_path / "a.rst"], read).labels == {}
