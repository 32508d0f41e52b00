"""Follow-ups: borrow the thread's subject to search, and check the follow-up still asks about what was found.

"and on windows?" says nothing about its subject, so the thread's last question is
searched with it; so is a message that opens by carrying on ("cool, and ..."). The same
borrowing answers a change of topic with the old subject ("how do I undo a pushed git
commit" in a thread about the API): the passages found then hold none of the follow-up's
own words, which ``own_support`` measures, and the pipeline searches the message alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from core.answer.steps import rounded_down
from core.ingest.injection import instruction_reason
from core.models import ConversationTurn, RetrievedChunk, TurnRole
from core.retrieval.lexicon import Lexicon
from core.retrieval.query import unknown_names
from core.retrieval.retriever import chunk_text
from core.retrieval.small_talk import ASKING, FILLER, without_acknowledgement
from core.retrieval.terms import STOPWORDS, tokens

#: A question this short, or one leaning on a pronoun, rarely names its subject.
_SHORT = 8
_ANAPHORA = re.compile(
    r"\b(it|its|this|that|these|those|they|them|their|there|he|she|one|ones|same|also|too|else|more)\b",
    re.IGNORECASE,
)


#: "there" and "that" pointing at nothing earlier: "is there a way ...", "there's no ...",
#: "tell everyone that the build ...", "the commit that i pushed" (only that word is blanked: "tell
#: me more about that" and "check that value" still point back).
_APOSTROPHE = "['\u2019]"
_NOT_POINTING = re.compile(
    rf"\b(?:is|are|was|were|isn{_APOSTROPHE}t|aren{_APOSTROPHE}t)\s+there"
    r"(?=\s+(?:a|an|any|some|no|anything|anyone|anybody|something|way|other|another|more)\b)"
    rf"|\bthere(?:\s+(?:is|are|was|were|isn{_APOSTROPHE}t|aren{_APOSTROPHE}t)|{_APOSTROPHE}s)\b"
    r"|\b(?P<lead>(?:tell|told|say|says|said|know|knows|think|sure)(?:\s+\w+){0,3}?\s+)that"
    r"(?=\s+(?:the|a|an|my|our|your|i|we|you|he|she|they|there|some|no)\b)"
    # ... and a "that" opening a clause about the writer ("the commit that i already pushed").
    r"|\bthat(?=\s+(?:i|we|you|he|she|they)\b)",
    re.IGNORECASE,
)


#: "one" after an article or "if" counts ("a one liner", "a one-liner", "if one machine goes
#: down"), and so does what things are made into ("squash old migrations into one"); "more"
#: before "than" or a number compares ("more than 8 gb"): neither points back, unlike "which
#: one", "the second one", "more examples", "tell me more about it".
_COUNTING = re.compile(
    r"\b(?P<lead>(?:a|an|if|just|only|no|any|every|at\s+least)\s+)one(?=[\s-]+\w)"
    r"|\b(?P<into>into\s+)one\b"
    r"|\bmore(?=\s+(?:than\b|\d))",
    re.IGNORECASE,
)


def _not_pointing(question: str) -> str:
    """``question`` with the "there", "that", "one" and "more" that point at nothing earlier blanked out."""
    question = _NOT_POINTING.sub(lambda m: m.group("lead") or " ", question)  # the verb and its words stay
    return _COUNTING.sub(lambda m: m.group("lead") or m.group("into") or " ", question)


def search_query_for(question: str, history: Sequence[ConversationTurn]) -> str:
    """The text to search with for ``question`` asked after ``history``.

    A follow-up such as "and how do I test it?" says nothing about its subject,
    so the previous user question is prepended; so does a message of any length that
    opens by carrying on ("cool, and a 3 column grid?", "ok so ...", "what about ...").
    When that question leaned on the one before it in turn ("where is that stored?" after "how
    do I pin the python version?"), the subject is in that one: up to ``SUBJECT_DEPTH`` questions
    back are prepended, from the last one that names its own subject.
    Self-contained questions (long,
    no pronoun pointing back, or one that follows what it points at in its own
    sentence) are searched as they are, so a change of topic in the same thread
    is not dragged back to the old one. The acknowledgement a message opens with ("cool. and on
    my mac?") is left out: it answers the last reply and asks nothing.
    """
    question = without_acknowledgement(question)
    if not leans_back(question):
        return question
    asked = [t.content for t in history if t.role is TurnRole.USER][-SUBJECT_DEPTH:]
    if not asked:
        return question
    first = len(asked) - 1
    while first > 0 and not _names_own_subject(asked[first]):
        first -= 1
    return " ".join([*asked[first:], question])


#: How many of the thread's questions a follow-up may borrow its subject from: "and fish?" after
#: "for zsh?" after "how do I enable tab completion?" needs the third one back.
SUBJECT_DEPTH = 3


def _names_own_subject(question: str) -> bool:
    """Whether an earlier question of the thread named its subject ("how do I set the threshold?").

    Short is no reason to borrow here: such a question ends the chain a later follow-up borrows.
    """
    return _names_subject(question) and not points_back(question) and _CONTINUES.match(question) is None


def leans_back(question: str) -> bool:
    """Whether ``question`` needs the thread's subject: short, pointing back or opening by carrying on."""
    return len(tokens(question)) <= _SHORT or points_back(question) or _CONTINUES.match(question) is not None


#: A pronoun after this many content words of its own sentence points inside the message
#: ("whats the flag to record a sim log and then play it back later?"), not at the thread.
#: Chosen on the follow-ups and off-topic-in-a-thread cases of gazebo-docs and
#: robotics-textbook-2 (6 and 7 tied, 5 lost a follow-up; 6 kept, since with 7 that example
#: still borrowed), checked on the six other sets (BENCHMARKS.md).
_SELF_CONTAINED = 6
#: Content words a question sentence needs to name its own subject, so that a pronoun in the
#: sentences after it points at that question rather than at the thread.
_OWN_SUBJECT = 2
#: A sentence asks when one of its first words does: "and can you tell me more about that".
_ASKING_LEAD = 3
#: Where a sentence ends: after a stop, question or exclamation mark, or at a new line (Slack
#: messages often open with a greeting line).
SENTENCE_END = re.compile(r"(?<=[.?!])\s+|\n")


#: A message that opens by carrying on ("and ...", "cool, and ...", "ok so how ...", "what about
#: ...") continues the thread, however long it is. A bare "so", "but" or "then" carries on only
#: before a question ("so does it ...", "but how ..."): "So I'm trying to set up X" opens a new
#: question as often as not.
_CONTINUES = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|cool|nice|great|thanks|thx|ty|got\s+it|sure|right|ah|oh|hmm+)\b[\s,.!-]*)*"
    r"(?:and|also|what\s+about|how\s+about|(?:so|but|then)(?=\s+(?:how|what|why|where|when|which|who|"
    r"does|do|did|is|are|can|could|should|would|will|if)\b))\b",
    re.IGNORECASE,
)


def points_back(question: str) -> bool:
    """Whether ``question`` leans on something earlier: a pronoun that points at nothing inside it."""
    text = _not_pointing(question)
    for match in _ANAPHORA.finditer(text):
        *earlier, sentence = SENTENCE_END.split(text[:match.start()])
        whole = sentence + SENTENCE_END.split(text[match.start():], maxsplit=1)[0]
        if not asks(whole, lead=_ASKING_LEAD) and any(asks(s) and _names_subject(s) for s in earlier):
            # "does httpx do http/3? our cdn advertises it": what the message says after its own
            # question is about that question ("... and tell me more about that?" may not be).
            continue
        # tokens() keeps "don't" and "uv.lock" whole, so they count once (or not at all).
        if sum(1 for w in tokens(sentence) if w not in STOPWORDS) < _SELF_CONTAINED:
            return True
    return False


def asks(sentence: str, *, lead: int = 1) -> bool:
    """Whether ``sentence`` ends with a question mark or opens with a question word or a request.

    Args:
        sentence: one sentence of a message.
        lead: how many of its first words may hold the question word ("and can you ...": 2).
    """
    words = tokens(sentence)  # "can't" stays one word: "can't get it to start" asks nothing
    return sentence.rstrip().endswith("?") or any(w in ASKING for w in words[:lead])


def _names_subject(sentence: str) -> bool:
    """Whether ``sentence`` names something ("does httpx support http/3?", not "really?", "any news?")."""
    return sum(1 for w in tokens(sentence) if w not in STOPWORDS) >= _OWN_SUBJECT


def without_aimed(history: Sequence[ConversationTurn]) -> list[ConversationTurn]:
    """The thread's turns without the messages aimed at the assistant and the replies to them.

    A message aimed at the assistant is answered only by quoting; it must not come back as
    the subject a later follow-up borrows, nor reach a model in the history it is shown.
    """
    kept: list[ConversationTurn] = []
    skipping = False
    for turn in history:
        if turn.role is TurnRole.USER:
            skipping = instruction_reason(turn.content) is not None
        if not skipping:
            kept.append(turn)
    return kept


#: Share of a follow-up's own (IDF-weighted) terms that the passages found for it with the
#: thread's subject must hold; below it, the follow-up asks about something else. Chosen on
#: gazebo-docs and robotics-textbook-2 (0.1-0.15 tied), checked on fastapi-docs and uv-docs.
FOLLOW_UP_SUPPORT = 0.15
#: How many of the passages found (best first) a follow-up's own words are looked for in.
FOLLOW_UP_DEPTH = 3
#: A follow-up with fewer search terms of its own ("tell me more", "and how do I test it?")
#: can only be about the thread's subject; a change of topic names its new subject.
FOLLOW_UP_MIN_TERMS = 2
#: A follow-up may ask about the passages found in words they do not use ("if I shrink it, does
#: the sim get better or just crawl?" after a question on the physics step size): its best dense
#: similarity with one of them at least this keeps it on the subject. Set above every off-topic
#: message asked in a thread of gazebo-docs and robotics-textbook-2 (at most 0.21); checked on
#: the six other sets (BENCHMARKS.md).
FOLLOW_UP_MEANING = 0.25


@dataclass(frozen=True, slots=True, kw_only=True)
class Support:
    """How much of a follow-up the passages found with the thread's subject bear out."""

    #: The IDF-weighted share of its own search terms they hold (``own_support``).
    share: float
    #: Its best dense similarity with one of them; None when not needed or not measured.
    meaning: float | None = None
    #: What it names that neither the docs nor English know (``unknown_names``).
    names: tuple[str, ...] = ()

    @property
    def on_topic(self) -> bool:
        """Whether the follow-up still asks about what was found.

        A follow-up naming what the docs never mention ("can i serve grpc from it too?", "how do i
        add a plugin to my jekyll site?") asks about that, however many words it shares with them.
        """
        if self.names:
            return False
        return self.share >= FOLLOW_UP_SUPPORT or (self.meaning or 0.0) >= FOLLOW_UP_MEANING

    def summary(self) -> str:
        """The activity log's account of the decision."""
        if self.names:
            return (f"it names what the docs never mention: {', '.join(self.names)} "
                    f"({rounded_down(self.share)} of its own terms in the passages found)")
        meaning = (f", dense similarity {rounded_down(self.meaning)} (needs {FOLLOW_UP_MEANING:g})"
                   if self.meaning is not None else "")
        return (f"{rounded_down(self.share)} of its own terms in the passages found "
                f"(needs {FOLLOW_UP_SUPPORT:g}){meaning}")


def follow_up_support(
    own: str, passages: Sequence[RetrievedChunk], *, terms: Callable[[str], frozenset[int]],
    idf: Callable[[int], float], similarity: Callable[[str, str], float] | None, names: Sequence[str] = (),
) -> Support:
    """Whether the passages found for a follow-up with the thread's subject answer the follow-up.

    Args:
        own: the follow-up's own search text (without the borrowed subject).
        passages: the passages found, best first.
        terms: a text's search-term ids (a passage's title and section count with its text).
        idf: a term's weight in the collection.
        similarity: dense similarity of two texts; without it only the words count.
        names: what the follow-up names that neither the docs nor English know.

    Returns:
        The Support; its meaning is measured only when the words fall short.
    """
    held = [terms(chunk_text({"title": c.title, "section": c.section, "content": c.content}))
            for c in passages]
    by_words = Support(share=own_support(terms(own), held, idf), names=tuple(names))
    if names or by_words.on_topic or similarity is None or not passages:
        return by_words
    # The text alone, as measured (BENCHMARKS.md): the heading path repeats the old subject's words.
    return Support(share=by_words.share, meaning=max(similarity(own, c.content) for c in passages))


def own_support(own: frozenset[int], found: Sequence[frozenset[int]], idf: Callable[[int], float]) -> float:
    """The IDF-weighted share of a follow-up's own search terms held by the passages found.

    Args:
        own: the follow-up's own search-term ids (without the borrowed subject).
        found: the search-term ids of each passage found (title, section and text).
        idf: a term's weight in the collection (a word every page uses says little).

    Returns:
        A share in [0, 1]; 1.0 when the follow-up has no weighted term of its own.
    """
    total = sum(idf(t) for t in own)
    if not total:
        return 1.0
    held = frozenset().union(*found) & own
    return sum(idf(t) for t in held) / total


#: A message opening with a word that points at the thread's subject ("its inside a vm btw, anything
#: else i can try?", "that didn't work on windows either"): it says more about that subject.
_OPENS_ON_SUBJECT = re.compile(r"^\W*(?:it|its|that|this|they|those|these)\b", re.IGNORECASE)  # "it's" too


def new_names(message: str, own: str, lexicon: Lexicon) -> list[str]:
    """What a follow-up names that neither the docs nor English know, unless it opens on the thread.

    "can i serve grpc endpoints from it too?" asks about the name; "its inside a virtualbox vm btw,
    anything else i can try?" and "ok and on heroku?" tell where the thread's subject is used.
    """
    opening = without_acknowledgement(message)
    if _CONTINUES.match(message) or _OPENS_ON_SUBJECT.match(opening):
        return []
    return unknown_names(own, lexicon)


def leans_on_subject(message: str, lexicon: Lexicon) -> bool:
    """Whether a follow-up asks about the thread's subject in words of the docs but not theirs for it.

    "ok how do i turn it off for just me?": the docs say "disable ... for yourself", so its own words
    find nothing, yet it asks, points back ("it") and names nothing the docs do not know. A new topic
    names something they never mention ("terraform"); small talk and aimed messages ask nothing here.
    """
    if lexicon.empty or instruction_reason(message) is not None or not points_back(message):
        return False
    if not any(asks(s) for s in SENTENCE_END.split(message) if s.strip()):
        return False
    words = [w for w in tokens(message) if w not in STOPWORDS and w not in FILLER and w.isalpha()]
    return bool(words) and all(lexicon.knows(w) for w in words)
