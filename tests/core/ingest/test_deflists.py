"""Markdown definition lists: a term opens its definition's line."""

from __future__ import annotations

from core.ingest.deflists import definition_lists, has_definition_lists
from core.ingest.loaders import DEFLISTS_PARSER, _markdown


def test_a_term_opens_its_definitions_and_keeps_what_is_indented_under_it() -> None:
    page = (
        "`--force`\n:   Overwrite the file.\n\n    More details.\n\n    ```toml\n    a = 1\n    ```\n\n"
        "`-q`, `*args`\n: Print nothing.\n: Or everything.\n\nThen prose.\n")
    assert has_definition_lists(page)
    assert definition_lists(page) == (
        "**`--force`**: Overwrite the file.\n\nMore details.\n\n```toml\na = 1\n```\n\n"
        "`-q`, `*args`: Print nothing.\nOr everything.\n\nThen prose.\n")


def test_what_is_no_term_stays_as_written() -> None:
    # A list item, a line inside a paragraph, a colon line in code: no terms.
    for page in ("- item\n: not a definition\n", "one\ntwo\n: three\n", "```\nkey\n: value\n```\n",
                 "---\n: x\n", "```\ncode\n```\n: x\n", "!!! note\n: x\n", '=== "Tab"\n: x\n'):
        assert definition_lists(page) == page
    assert not has_definition_lists(": alone at the top\n")
    assert not has_definition_lists("a" * 100_000 + "\nb")  # a long line is read in one pass
    # Nothing rewritten: the page is not tagged as read with definition lists.
    assert DEFLISTS_PARSER not in _markdown("one\ntwo\n: three\n").parser


def test_a_page_with_definitions_reads_them_with_their_terms() -> None:
    page = "# Options\n\n`delimiter`\n: The delimiter.\n\n    Default is `.`.\n\nMore.\n\n    code\n"
    parsed = _markdown(page)
    assert DEFLISTS_PARSER in parsed.parser
    assert parsed.sections[0].blocks == ["**`delimiter`**: The delimiter.", "Default is `.`.", "More.",
                                         "```\ncode\n```"]


def test_a_blank_line_may_stand_between_a_term_and_its_definition() -> None:
    # A "loose" list (Pandoc, PHP Markdown Extra, MyST): the term still opens its definition, and a
    # lazily indented line of it does not stop another definition of the same term.
    page = ("Processors:\n\n`filter_by_level`:\n\n: Drops entries below the level.\n  Put it first.\n"
            ": Also fast.\n\n`add_logger_name`\n\n: Adds the name.\n\n: Under the key `logger`.\n\n"
            "Then prose.\n")
    assert has_definition_lists(page)
    assert definition_lists(page) == (
        "Processors:\n\n**`filter_by_level`**: Drops entries below the level.\n  Put it first.\n"
        "Also fast.\n\n**`add_logger_name`**: Adds the name.\nUnder the key `logger`.\n\nThen prose.\n")
    # A paragraph over a blank line, text indented under a definition, or code: no terms.
    for page in ("one\ntwo\n\n: three\n", "`a`\n: b\n\n    owned\n\n: c\n", "```\ncode\n```\n\n: x\n"):
        assert definition_lists(page).endswith(": " + page.rsplit(": ", 1)[1])
