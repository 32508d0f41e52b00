"""reStructuredText pages (Sphinx docs): headings, fenced code, Sphinx roles and directives, safety."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

import core.ingest.rst as rst
from core.ingest.chunking import document_hash
from core.ingest.loaders import RST_PARSER, load_file
from core.ingest.rst import parse_rst
from core.ingest.sphinx_markup import role_shown, shown_text
from core.ingest.text import parse_plain_text
from core.ingest.urls import sphinx_url

PAGE = """\
.. _install:

Installation
============

This page installs :mod:`mylib` and calls :func:`~mylib.client.connect`.
See :ref:`the quickstart <quickstart>`, :unknownrole:`odd text` and `PyPI <https://pypi.org>`_.

.. note::

   You need Python 3.9 or newer.

Using pip
---------

Run the following command::

    pip install mylib

.. code-block:: python
   :caption: example.py
   :linenos:

   import mylib
   mylib.connect(timeout=5)

.. versionadded:: 2.1
   The ``--user`` flag.

.. toctree::
   :maxdepth: 2

   usage

.. autofunction:: mylib.connect

.. somethingnobodyknows:: arg

   hidden text

Options
-------

==========  =========
Setting     Default
==========  =========
timeout     5
retries     3
==========  =========

.. function:: connect(host, timeout=5)

   Open a connection to *host*.

1. Build it

   .. code-block:: bash

      make install

2. Check it

   - ``make test``
"""


def _blocks(text: str) -> dict[str, list[str]]:
    title, sections = parse_rst(text)
    assert title == "Installation"
    return {" > ".join(s.headings): s.blocks for s in sections}


def test_section_titles_are_the_heading_path_and_code_is_fenced_whole() -> None:
    blocks = _blocks(PAGE)
    assert list(blocks) == ["Installation", "Installation > Using pip", "Installation > Options"]
    pip = blocks["Installation > Using pip"]
    # The lead-in and the command it introduces stay separate blocks, the command fenced intact.
    assert pip[:3] == ["Run the following command:", "```\npip install mylib\n```",
                       "```python\nimport mylib\nmylib.connect(timeout=5)\n```"]


def test_sphinx_roles_read_as_what_they_show() -> None:
    first = _blocks(PAGE)["Installation"][0]
    assert first == ("This page installs `mylib` and calls `connect`.\nSee the quickstart, odd text and "
                     "[PyPI](https://pypi.org).")
    assert shown_text("Title <target>") == "Title"
    assert shown_text("~a.b.c") == "c"
    assert shown_text("!plain") == "plain"
    assert role_shown("attr", ".Request.meta") == "Request.meta"  # searched as a suffix: no dot shown
    assert role_shown("term", ".NET") == ".NET"
    assert role_shown("doc", "../guide") == "../guide"


def test_notes_versions_tables_signatures_and_lists_keep_their_shape() -> None:
    blocks = _blocks(PAGE)
    assert "Note: You need Python 3.9 or newer." in blocks["Installation"]
    assert "New in version 2.1: The `--user` flag." in blocks["Installation > Using pip"]
    options = blocks["Installation > Options"]
    assert options[0] == "| Setting | Default |\n|---|---|\n| timeout | 5 |\n| retries | 3 |"
    assert options[1:3] == ["`connect(host, timeout=5)`", "Open a connection to *host*."]
    assert options[3] == "1. Build it\n  ```bash\n  make install\n  ```\n2. Check it\n  - `make test`"


def test_a_table_without_a_header_keeps_its_first_row_as_a_row() -> None:
    table = "=====  ============\nrule   the URL rule\nname   its endpoint\n=====  ============\n"
    _, sections = parse_rst(table)
    assert sections[0].blocks == ["|  |  |\n|---|---|\n| rule | the URL rule |\n| name | its endpoint |"]


def test_a_cell_with_a_role_docutils_does_not_know_shows_its_text_not_the_error() -> None:
    table = ("+------------------+---------------+\n| Signal           | Meaning       |\n"
             "+==================+===============+\n| :madeup:`TERM`   | Warm shutdown |\n"
             "+------------------+---------------+\n")
    _, sections = parse_rst(table)
    assert sections[0].blocks == ["| Signal | Meaning |\n|---|---|\n| TERM | Warm shutdown |"]
    # ... nor when the role sits in a list in the cell.
    listed = table.replace("| :madeup:`TERM`   |", "| - :madeup:`TERM` |")
    assert "ERROR" not in parse_rst(listed)[1][0].blocks[0] and "TERM" in parse_rst(listed)[1][0].blocks[0]


def test_a_table_docutils_calls_malformed_keeps_its_lines_as_written() -> None:
    table = ("Renamed\n=======\n\n=============  ===========\n**Old name**   **New**\n"
             "=============  ===========\n"
             "``OLD_NAME``   :madeup:`new_name`\n``A_NAME_WIDER_THAN_ITS_COLUMN`` :code:`List<int>`\n"
             "=============  ===========\n\nAfter.\n")
    _, sections = parse_rst(table)
    code, after = sections[0].blocks
    assert code.startswith("```text\n") and after == "After."
    assert "OLD_NAME   new_name" in code and "A_NAME_WIDER_THAN_ITS_COLUMN List<int>" in code
    assert "``" not in code.strip("`") and ":madeup:" not in code
    # Other errors stay out of the text.
    assert parse_rst("Title\n=====\n\n.. madeup-directive:: x\n\nText.\n")[1][0].blocks == ["Text."]


def test_what_a_page_writes_under_an_autodoc_directive_is_read() -> None:
    _, sections = parse_rst(".. autoclass:: Request\n   :members:\n\n   A request to send.\n\n"
                            "   .. attribute:: Request.meta\n\n      A dict of arbitrary metadata.\n\n"
                            ".. autofunction:: mylib.connect\n")
    assert sections[0].blocks == ["`Request`", "A request to send.", "`Request.meta`",
                                  "A dict of arbitrary metadata."]


def test_navigation_generated_and_unknown_directives_are_left_out() -> None:
    text = "\n".join(b for blocks in _blocks(PAGE).values() for b in blocks)
    for absent in ("toctree", "maxdepth", "usage", "autofunction", "hidden text", "somethingnobodyknows"):
        assert absent not in text


def test_a_generated_table_of_contents_is_left_out() -> None:
    page = ("Guide\n=====\n\n.. contents:: Table of Contents\n   :local:\n\nBackground\n----------\n\n"
            "Why it works.\n\nTasks\n-----\n\nRun the build.\n")
    text = "\n".join(b for section in parse_rst(page)[1] for b in section.blocks)
    assert "Table of Contents" not in text and "Why it works." in text and "Run the build." in text
    assert text.count("Background") == 0  # the heading is the path, not a block; no list names it
    written = "Guide\n=====\n\n.. topic:: Summary\n   :class: contents\n\n   The author's own words.\n"
    assert "The author's own words." in "\n".join(b for sec in parse_rst(written)[1] for b in sec.blocks)
    code_only = "Guide\n=====\n\n.. topic:: Summary\n   :class: contents\n\n   ::\n\n      make all\n"
    assert "make all" in "\n".join(b for sec in parse_rst(code_only)[1] for b in sec.blocks)


@pytest.mark.parametrize(("directive", "read"), [
    # A Sphinx extension's example: the Python it holds is the page's example, quoted as code.
    (".. tool:example::\n   :emphasize-lines: 2\n\n    @command()\n    @option('--tag', multiple=True)"
     "\n    def cli(tag):\n        echo(tag)",
     "```python\n@command()\n@option('--tag', multiple=True)\ndef cli(tag):\n    echo(tag)\n```"),
    (".. tool:run::\n\n    invoke(cli, args=['--tag', 'a'])",
     "```python\ninvoke(cli, args=['--tag', 'a'])\n```"),
    (".. tool:note::\n\n    Words, not code.", None),  # prose or a bare name is no example
    (".. tool:name::\n\n    Note", None),
    (".. tool:broken::\n\n    def (:", None),
])
def test_an_unknown_directive_holding_python_is_an_example(directive: str, read: str | None) -> None:
    _, sections = parse_rst(f"Before.\n\n{directive}\n\nAfter.\n")
    blocks = [block for section in sections for block in section.blocks]
    assert blocks == ["Before.", *([read] if read else []), "After."]


def test_a_projects_own_directive_writing_prose_keeps_its_name_options_and_body() -> None:
    page = ("Options\n=======\n\n.. conf::\n   :keys: interrupt_timeout\n   :default: 0.3\n\n"
            "   How long to wait after an interrupt before the child gets a :ref:`SIGTERM <signals>`.\n\n"
            "   .. code-block:: ini\n\n      interrupt_timeout = 1\n\n"
            ".. http:get:: /users/(int:id)\n\n   Returns the user with every field the page describes.\n\n"
            ".. mermaid::\n\n   graph TD\n     A[Start] --> B{Is it ok?}\n")
    _, sections = parse_rst(page)
    assert sections[0].blocks == [
        "`interrupt_timeout` - default: 0.3",
        "How long to wait after an interrupt before the child gets a SIGTERM.",
        "```ini\ninterrupt_timeout = 1\n```",
        "`http:get /users/(int:id)`", "Returns the user with every field the page describes."]


def test_an_unknown_directive_s_lead_shows_its_markup_as_text_and_a_nested_diagram_stays_out() -> None:
    page = (".. conf:: ``timeout``\n   :keys: a,\n      b\n   :type: :class:`int`\n\n"
            "   How long to wait before the run gives up.\n")
    assert parse_rst(page)[1][0].blocks == ["`conf timeout` - keys: a, b; type: int",
                                            "How long to wait before the run gives up."]
    # docutils' own message about the inner one is no sentence of the page.
    assert parse_rst("Before.\n\n.. outer:: x\n\n   .. uml::\n\n      A -> B\n\nAfter.\n")[1][0].blocks == [
        "Before.", "After."]


def test_an_unknown_directive_is_read_in_linear_time_and_a_refused_known_one_stays_out() -> None:
    # Forty hyphenated names with no full stop: a backtracking sentence pattern took hours.
    hooks = ", ".join(f"pre-hook-{i}-name" for i in range(40))
    page = f".. hooks:: x\n\n   Hooks run in order: {hooks} (see git-hooks)\n\nAfter.\n"
    assert parse_rst(page)[1][0].blocks == ["After."]
    # ``raw`` is off: a known directive docutils refuses is no unknown one, however much it writes.
    page = ".. raw:: html\n\n   <p>Words a browser would show as a whole sentence.</p>\n\nAfter.\n"
    assert parse_rst(page)[1][0].blocks == ["After."]


def test_a_titled_note_in_a_list_item_opening_with_code_puts_its_title_on_its_own_line() -> None:
    page = ("- Set it:\n\n  .. admonition:: INI\n\n     .. code-block:: ini\n\n"
            "        [testenv]\n        x = 1\n")
    _, sections = parse_rst(page)
    assert sections[0].blocks == ["- Set it:\n  INI:\n  ```ini\n  [testenv]\n  x = 1\n  ```"]
    listed = parse_rst("- Set it:\n\n  .. admonition:: Steps\n\n     - first item\n     - second\n")[1]
    assert listed[0].blocks == ["- Set it:\n  Steps:\n  - first item\n  - second"]


def test_include_and_raw_never_read_or_pass_anything(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET")
    page = (f"Title\n=====\n\n.. include:: {secret}\n\n.. literalinclude:: {secret}\n\n"
            ".. raw:: html\n\n   <script>alert(1)</script>\n\nBody.\n")
    _, sections = parse_rst(page)
    text = "\n".join(b for s in sections for b in s.blocks)
    assert text == "Body."


def test_a_page_without_one_top_title_has_top_level_sections() -> None:
    title, sections = parse_rst("One\n===\n\nfirst\n\nTwo\n===\n\nsecond\n")
    assert title is None
    assert [(s.headings, s.blocks) for s in sections] == [(["One"], ["first"]), (["Two"], ["second"])]


def test_broken_markup_still_reads_and_a_parser_crash_falls_back_to_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    title, sections = parse_rst("Title\n=====\n\n* unfinished ``literal\n\n.. code-block::\n\nText after.\n")
    assert title == "Title" and "Text after." in sections[-1].blocks

    def crash(*args: object, **kwargs: object) -> None:
        raise RecursionError("too deep")

    monkeypatch.setattr(rst, "publish_doctree", crash)
    page = "Title\n=====\n\nBody.\n"
    assert parse_rst(page) == (None, parse_plain_text(page))


def test_rst_files_load_with_their_title_and_sphinx_urls(tmp_path: Path) -> None:
    page = tmp_path / "guide" / "install.rst"
    page.parent.mkdir()
    page.write_text(PAGE)
    doc = load_file(page, root=tmp_path, base_url="https://mylib.dev/en/latest/")
    assert doc.title == "Installation"
    assert doc.url == "https://mylib.dev/en/latest/guide/install.html"
    assert doc.sections[1].headings == ["Installation", "Using pip"]
    assert sphinx_url("index.rst", base_url="https://mylib.dev") == "https://mylib.dev/"
    assert sphinx_url("api/index.rst", base_url="https://mylib.dev") == "https://mylib.dev/api/"


def test_rst_pages_stored_as_plain_text_are_chunked_again(tmp_path: Path) -> None:
    page = tmp_path / "install.rst"
    page.write_text(PAGE)
    doc = load_file(page, root=tmp_path)
    assert doc.parser == RST_PARSER
    # The same page read the old way (plain text) had another fingerprint; other formats keep theirs.
    assert document_hash(doc) != document_hash(replace(doc, parser=""))
    markdown = tmp_path / "install.md"
    markdown.write_text("# Install\n\nRun it.\n")
    assert load_file(markdown, root=tmp_path).parser == ""


def _text(page: str) -> str:
    return "\n".join(b for s in parse_rst(page)[1] for b in s.blocks)


def test_a_docutils_config_file_cannot_turn_file_reading_back_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET")
    conf = tmp_path / "docutils.conf"
    conf.write_text("[general]\nfile_insertion_enabled: yes\nraw_enabled: yes\nreport_level: 1\n"
                    f"warning_stream: {tmp_path / 'warnings.log'}\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DOCUTILSCONFIG", str(conf))
    text = _text(f"Title\n=====\n\n.. include:: {secret}\n\n.. nosuchdirective::\n\nBody.\n")
    assert text == "Body."
    assert capsys.readouterr() == ("", "") and not (tmp_path / "warnings.log").exists()


@pytest.mark.parametrize(("page", "expected"), [
    ("Call f(\\*args) in v\\ 2.", "Call f(*args) in v2."),  # escapes resolved, no NUL left behind
    ("Text [#]_ more.\n\n.. [#] A footnote.", "Text more."),  # a "[1]" would read as a citation
    ("See :ref:`a \\<b> <target>` and :ref:`c \\<d>`.", "See a <b> and c <d>."),
    ("Version |version| is out.", "Version is out."),  # an unresolved substitution
    ("| one\n| two", "one\ntwo"),
    (".. seealso:: Module :mod:`zipfile`", "See also: Module `zipfile`"),
    (".. only:: latex\n\n   Print only.\n\n.. only:: html\n\n   Web only.", "Web only."),
    ("-o FILE, --output=FILE  where to write", "- **-o FILE, --output=FILE**: where to write"),
    (".. doctest::\n\n   >>> 1 + 1\n   2", "```pycon\n>>> 1 + 1\n2\n```"),
    ("::\n\n    ````\n    inner\n    ````", "`````\n````\ninner\n````\n`````"),
    ("+-------+\n| cell  |\n+=======+\n| - a   |\n| - b   |\n+-------+", "| cell |\n|---|\n| a; b |"),
])
def test_sphinx_pages_read_cleanly(page: str, expected: str) -> None:
    assert _text(page) == expected


def test_code_inside_a_note_inside_a_list_stays_under_its_item() -> None:
    page = "1. Build it:\n\n   .. note::\n\n      Run this::\n\n         make all\n\n2. Ship it.\n"
    assert _text(page) == "1. Build it:\n  Note: Run this:\n  ```\n  make all\n  ```\n2. Ship it."


def test_a_page_cannot_change_how_later_pages_read() -> None:
    # A page's own role definitions are left out: docutils would keep them for every later page.
    assert _text(".. role:: func(emphasis)\n\n.. default-role:: code\n\n:func:`x` and `y`") == "`x` and *y*"
    assert _text(":func:`x` and `y`") == "`x` and *y*"


def test_a_line_longer_than_docutils_allows_keeps_the_page() -> None:
    title, sections = parse_rst("Title\n=====\n\n" + "word " * 3000 + "\n")
    assert title == "Title" and sections[0].blocks[0].startswith("word word")


def test_an_item_whose_text_introduces_an_indented_block_keeps_its_text_on_the_marker_line() -> None:
    _, sections = parse_rst(
        "Title\n=====\n\nSuccess might look like:\n\n - tests run\n"
        " - existing tests are rewritten, for example:\n    - native asserts\n    - markers\n"
        " - future needs\n")
    assert sections[0].blocks[1] == ("- tests run\n- existing tests are rewritten, for example:\n"
                                     "  - native asserts\n  - markers\n- future needs")


def test_a_term_written_with_its_colon_reads_once_with_one() -> None:
    _, sections = parse_rst(
        "T\n=\n\nAvailable hooks:\n\n``response``:\n    The response generated from a Request.\n")
    assert sections[0].blocks[1] == "- **`response`**: The response generated from a Request."


def test_a_term_in_bold_already_is_bold_once() -> None:
    _, sections = parse_rst("T\n=\n\nCommands:\n\n**run** (*or* **r**)\n    Run environments.\n\n"
                            "``**kwargs``\n    Passed on.\n\n:param \\*\\*kwargs: Passed on too.\n")
    assert sections[0].blocks[1:] == ["- **run (*or* r)**: Run environments.\n- **`**kwargs`**: Passed on.",
                                      "- **param **kwargs**: Passed on too."]  # code and escapes kept
