"""Code blocks as a docs site shows them: highlighter notation in fences and lines."""

from __future__ import annotations

import pytest

from core.answer.blocks import Block, render_block
from core.answer.code_notation import _shown_by_twoslash, as_shown


def test_a_twoslash_snippet_cut_before_its_closing_fence_keeps_its_last_line() -> None:
    assert _shown_by_twoslash(["a", "// ---cut---", "b", "// ^?"]) == ["b"]
    assert _shown_by_twoslash(["a", "b"]) == ["a", "b"]


def test_lines_an_expressive_code_fence_strikes_out_are_not_quoted() -> None:
    code = ("```js title=\"astro.config.mjs\" del={3} ins={4}\nexport default defineConfig({\n"
            "  site: 'https://example.com',\n  base: '/my-repo',\n  output: 'static',\n});\n```")
    shown = render_block(Block("code", code))
    assert "base: '/my-repo'" not in shown and "output: 'static'" in shown and shown.endswith("```")


@pytest.mark.parametrize(("fence", "gone", "kept"), [
    ("```sh del={1,3-4}", ["one", "three", "four"], ["two", "five"]),
    ('```sh del="--legacy "', ["--legacy "], ["npm run one", "five"]),
    ("```sh ins={2}", [], ["one", "two", "three", "four", "five"]),  # lines added stay
])
def test_struck_out_lines_and_text_go(fence: str, gone: list[str], kept: list[str]) -> None:
    body = ["npm run --legacy one", "two", "three", "four", "five"]
    shown = "\n".join(as_shown([fence, *body, "```"])[1:])
    assert not any(g in shown for g in gone) and all(k in shown for k in kept) and shown.endswith("```")


@pytest.mark.parametrize(("fence", "body", "shown"), [
    ("```js del={1-999999999}", ["a", "b"], []),  # a range past the snippet costs no more than it
    ('```js title="del={2}"', ["a", "b"], ["a", "b"]),  # a title, not a marker
    ("```js del={1} del={3}", ["a", "b", "c"], ["b"]),
    ('```js del="c"', ["a", "c", ""], ["a", ""]),  # a line left empty by the text struck goes
    ("```js del={4-2}", ["a", "b"], ["a", "b"]),
    ('```js del={"1":3}', ["a", "b", "c"], ["a", "b"]),  # a range's label is no line number
    ("```js del={1234567890}", ["a", "b"], ["a", "b"]),  # nor are a longer number's first digits
    # Counted as written: the Shiki notation the site hides is still line 1.
    ("```js del={2}", ["x // [!code --]", "y", "z"], ["z"]),
])
def test_del_markers_are_read_as_expressive_code_reads_them(
    fence: str, body: list[str], shown: list[str]
) -> None:
    assert as_shown([fence, *body, "```"]) == [fence, *shown, "```"]


def test_a_long_fence_info_is_read_in_linear_time() -> None:
    info = "```js " + "a" * 200_000 + " del={1}"
    assert as_shown([info, "x", "y", "```"]) == [info, "y", "```"]


def test_code_whose_every_line_is_struck_out_is_not_quoted() -> None:
    # Quoted, it would show an empty fence under its title.
    assert Block("code", '```js title="a.mjs" del={1-2}\nbase: "/x",\nsite: "y",\n```').is_unreadable
    assert Block("code", "```\n```").is_unreadable
    assert not Block("code", "```js del={1}\nbase: '/x',\nsite: 'y',\n```").is_unreadable
