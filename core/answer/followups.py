"""Make a follow-up question searchable by borrowing words from the thread's last question."""

from __future__ import annotations

import re
from collections.abc import Sequence

from core.models import ConversationTurn, TurnRole

_WORDS = re.compile(r"\w+")
#: A question this short, or one leaning on a pronoun, rarely names its subject.
_SHORT = 8
_ANAPHORA = re.compile(
    r"\b(it|its|this|that|these|those|they|them|their|there|he|she|one|ones|same|also|too|else|more)\b",
    re.IGNORECASE,
)


def search_query_for(question: str, history: Sequence[ConversationTurn]) -> str:
    """The text to search with for ``question`` asked after ``history``.

    A follow-up such as "and how do I test it?" says nothing about its subject,
    so the previous user question is prepended. Self-contained questions (long,
    no pronoun pointing back) are searched as they are, so a change of topic in
    the same thread is not dragged back to the old one.
    """
    previous = next((t.content for t in reversed(history) if t.role is TurnRole.USER), None)
    if previous is None:
        return question
    words = _WORDS.findall(question)
    if len(words) > _SHORT and not _ANAPHORA.search(question):
        return question
    return f"{previous} {question}"
