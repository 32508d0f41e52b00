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
