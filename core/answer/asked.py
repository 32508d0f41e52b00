"""What a chat message asks, apart from the context people write around it.

"how long is jetty going to be supported? need to justify picking it for a multi year
project": the second sentence says why the question is asked, and its words, which the
docs need not hold, lower every signal the answerability reads (``core.retrieval.
answerability``). A message the docs seem not to answer is judged again by its question
sentences alone, when they say what they ask about without the rest.
"""

from __future__ import annotations

from core.answer.followups import SENTENCE_END, points_back
from core.retrieval.query import ASKING, strip_markup
from core.retrieval.terms import tokens


def question_sentences(message: str) -> str | None:
    """The sentences of ``message`` that ask, when it also holds others; else None.

    None as well when a question sentence points at the others ("is there a command that
    converts *it*?"): alone it would not say what it asks about.
    """
    sentences = [s.strip() for s in SENTENCE_END.split(strip_markup(message)) if s.strip()]
    asked = [s for s in sentences if _asks(s)]
    if not asked or len(asked) == len(sentences) or any(points_back(s) for s in asked):
        return None
    return " ".join(asked)


def _asks(sentence: str) -> bool:
    """Whether ``sentence`` ends with a question mark or opens with a question word or a request."""
    words = tokens(sentence)
    return sentence.endswith("?") or (bool(words) and words[0] in ASKING)  # "can't ..." is no "can"
