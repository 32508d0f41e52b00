"""What a chat message asks, apart from the context people write around it; and what it asks of the bot.

"how long is jetty going to be supported? need to justify picking it for a multi year
project": the second sentence says why the question is asked, and its words, which the
docs need not hold, lower every signal the answerability reads (``core.retrieval.
answerability``). A message the docs seem not to answer is judged again by its question
sentences alone, when they say what they ask about without the rest.
"""

from __future__ import annotations

import re

from core.answer.followups import SENTENCE_END, asks, points_back
from core.retrieval.query import strip_markup


def question_sentences(message: str) -> str | None:
    """The sentences of ``message`` that ask, when it also holds others; else None.

    None as well when a question sentence points at the others ("is there a command that
    converts *it*?"): alone it would not say what it asks about.
    """
    sentences = [s.strip() for s in SENTENCE_END.split(strip_markup(message)) if s.strip()]
    asked = [s for s in sentences if asks(s)]
    if not asked or len(asked) == len(sentences) or any(points_back(s) for s in asked):
        return None
    return " ".join(asked)


#: Whom a broadcast goes to: a mass mention, everyone, the whole channel or team.
_GROUP = (r"(?:<!(?:everyone|here|channel)>|(?:@(?:everyone|here|channel|all)|every(?:one|body)"
          r"|all\s+of\s+(?:us|them)|the\s+(?:whole\s+|entire\s+)?(?:channel|team|group|server|room|company|org))\b)")
#: Asking the bot to pass a message on: "can you ping @everyone", "pls let everyone know", "@here
#: can you blast a message to the whole channel", "can u @everyone ...". "hi everyone" asks nothing.
_PASS_ON = (r"(?:just\s+)?(?:ping|notify|alert|tell|message|msg|dm|blast|announce\s+to|broadcast\s+to|remind"
            r"|warn|let)\s+(?:(?:a|an|the|this|that)\s+\w+\s+(?:to|in|on)\s+)?" + _GROUP)
_NOTIFY = re.compile(
    rf"\b(?:can|could|would|will)\s+(?:you|u|ya)\s+(?:{_PASS_ON}|@(?:everyone|here|channel)\b)"
    rf"|\b(?:please|pls|plz)\s+{_PASS_ON}|^(?:[^\w@<]|@\w+|<!\w+>)*+{_PASS_ON}",
    re.IGNORECASE)
#: A message that also asks how, what or whether is a question about doing it ("notify everyone
#: when the build fails - how do I configure that?"), for the docs to answer.
_ASKS_ABOUT = re.compile(
    r"\b(?:how|what|which|where|why|possible|is\s+(?:there|it|that|this)|(?:do|can|should)\s+i)\b",
    re.IGNORECASE)


def asks_to_notify(message: str) -> bool:
    """Whether ``message`` asks the bot to ping or message a group of people (it only answers)."""
    return _NOTIFY.search(message) is not None and _ASKS_ABOUT.search(message) is None
