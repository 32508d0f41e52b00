"""What a chat message asks, apart from the context written around it."""

from __future__ import annotations

import pytest

from core.answer.asked import question_sentences


@pytest.mark.parametrize(("message", "asked"), [
    ("how long is jetty going to be supported? need to justify picking it for a multi year project",
     "how long is jetty going to be supported?"),
    ("need the map for the demo tomorrow. how do i save the slam map to a file",
     "how do i save the slam map to a file"),
    ("quick one. which port does ragbot listen on? and can i change the port?\nthanks in advance",
     "which port does ragbot listen on? and can i change the port?"),
    ("<@U123> how do i export the activity log\nmy manager wants it weekly",
     "how do i export the activity log"),
])
def test_the_question_sentences_are_told_from_the_context(message: str, asked: str) -> None:
    assert question_sentences(message) == asked


@pytest.mark.parametrize("message", [
    "how do i save the slam map to a file?",  # nothing but the question
    "how do i save the map? and where does the file go?",
    "my robot keeps drifting to the left after every turn.",  # asks nothing
    "Can't get the planner to start. It crashes on launch.",  # "can't" opens no question
    # Alone, the question would not say what "it" is.
    "we are on poetry with a big tool.poetry section. is there a command that converts it over?",
])
def test_no_question_sentences_apart(message: str) -> None:
    assert question_sentences(message) is None
