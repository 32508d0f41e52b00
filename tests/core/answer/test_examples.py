"""A chat message asking for an example: the answer shows code, not the docs' "for example"."""

from __future__ import annotations

import pytest

from core.answer.asked import excerpt_question
from core.answer.examples import asks_for_example, without_example_request
from core.answer.excerpt import choose_excerpts
from core.models import RetrievedChunk


@pytest.mark.parametrize(("message", "rest"), [
    ("can you show an example", ""),
    ("got a code sample?", "?"),
    ("example pls", ""),
    ("can u give a couple of examples for the callback", "for the callback"),
    ("show me a quick example of a retry", "of a retry"),
])
def test_a_request_for_an_example_is_told_and_left_out(message: str, rest: str) -> None:
    assert asks_for_example(message)
    assert without_example_request(message) == rest


@pytest.mark.parametrize("message", [
    "how do i add examples to the request body in the docs",  # the docs' examples are the subject
    "where is the examples folder",
    "give me the list, for example",
    "i have an example app that fails",
    "what does the sample rate mean",
    "here is an example of my config, why does it fail?",  # statements telling of one
    "i have an example where the build breaks",
    "i got an example error",
    "example.com returns 404",
    "see examples/basic.py, it fails",
])
def test_a_question_naming_examples_asks_for_none(message: str) -> None:
    assert not asks_for_example(message)
    assert without_example_request(message) == message


def test_a_follow_up_asking_only_for_an_example_is_quoted_by_the_threads_subject() -> None:
    searched = "how do i validate an option with a callback can you show an example"
    assert excerpt_question("can you show an example", "can you show an example", searched) == searched
    own = "show an example of the callback"
    assert excerpt_question(own, own, searched) == own


def test_asked_for_an_example_the_code_is_quoted_not_a_for_example_sentence() -> None:
    def chunk(n: int, content: str, score: float) -> RetrievedChunk:
        return RetrievedChunk(chunk_id=f"c{n}", content=content, score=score, url=f"https://x.example/p{n}",
                              title=f"Page {n}", section="Calls", chunk_index=0, source_document=f"{n}.md")

    chunks = [
        chunk(1, "Callbacks can return a value. One example is shown in the chaining example, where "
                 "callbacks process return values and show them.", 0.7),
        chunk(2, "Options are validated after conversion. Validation raises errors.\n\n```python\n"
                 "def validate(ctx, param, value):\n    if value < 0:\n"
                 "        raise BadParameter('negative')\n    return value\n```", 0.6),
    ]
    question = "how do i validate an option value with a callback can you show an example"
    excerpt = choose_excerpts(question, chunks)[0]
    assert "def validate" in excerpt and "chaining example" not in excerpt
