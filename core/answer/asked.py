"""What a chat message asks, apart from the context people write around it.

"how long is jetty going to be supported? need to justify picking it for a multi year
project": the second sentence says why the question is asked, and its words, which the
docs need not hold, lower every signal the answerability reads (``core.retrieval.
answerability``). A message the docs seem not to answer is judged again by its question
sentences alone, when they say what they ask about without the rest.
"""

from __future__ import annotations

import re

from core.answer.followups import points_back

#: Where a sentence ends: a stop, question or exclamation mark, or a new line.
_SENTENCE_END = re.compile(r"(?<=[.?!])\s+|\n")
#: A sentence opening like a question even without its question mark ("how do i save the map").
_ASKS = re.compile(
    r"(?:how|what|why|where|when|which|who|whose|can|could|does|do|did|is|are|was|were|should|would|will)\b",
    re.IGNORECASE,
)


def question_sentences(message: str) -> str | None:
    """The sentences of ``message`` that ask, when it also holds others; else None.

    None as well when a question sentence points at the others ("is there a command that
    converts *it*?"): alone it would not say what it asks about.
    """
    sentences = [s.strip() for s in _SENTENCE_END.split(message) if s.strip()]
    asked = [s for s in sentences if s.endswith("?") or _ASKS.match(s)]
    if not asked or len(asked) == len(sentences) or any(points_back(s) for s in asked):
        return None
    return " ".join(asked)
