"""Small talk: a message that greets, thanks, praises or chats, and asks the docs nothing.

Such a message gets a short friendly reply instead of a search that finds nothing ("not
found" to "thanks!" reads as a rebuff). Decided from the message's words alone, and, for a
short thank-you naming something, whether the docs know that name (``knows``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from core.retrieval.terms import STOPWORDS, tokens

#: Words that carry tone, not topic, in chat messages.
FILLER: frozenset[str] = frozenset(
    """
    lol lmao rofl haha hahaha heh hmm hmmm umm um uh ah oh ok okay okey k yo hey hi hello hiya sup
    guys folks pls plz please thx thanks thank ty tysm cheers kinda sorta btw tbh imo imho idk afaik
    fyi iirc ngl rn omg wtf jk anyway anyways actually basically literally really super totally quick
    question q random somebody someone anyone anybody mate dude bro ya yeah yep nope yup
    welp meh ugh yikes bruh
""".split()
)
#: Words that, with filler and stop words, make a message small talk when nothing else is left.
SMALL_TALK: frozenset[str] = frozenset(
    """
    bot thanks thank thx ty helped help helpful fixed works worked working great awesome nice cool
    perfect amazing brilliant good morning evening night afternoon day bye goodbye later see alive
    going doing up there ton lot much appreciate appreciated cya ttyl gtg lifesaver
""".split()
)


#: A short message thanking, asking nothing and naming nothing the docs know is an
#: acknowledgement, whatever its other words ("thanks, you're a star").
_THANKS: frozenset[str] = frozenset("thanks thank thx ty tysm cheers appreciate appreciated".split())
#: A goodbye closes a chat as thanks do ("ok thats all for today, cya").
_BYE: frozenset[str] = frozenset("bye goodbye cya ttyl gtg".split())
#: What a thank-you or a goodbye says besides it ("just wanna say thanks", "all for today"): no topic,
#: though the docs may use the words.
_SIGN_OFF: frozenset[str] = frozenset("say said want wanted today tonight now week weekend".split())
#: Words that ask, anywhere in a thank-you ("thanks! how do i ..."); "that is all" asks nothing.
_WH: frozenset[str] = frozenset("how what why where when which who can could should".split())
#: Question words and the verbs that open a question or a request ("can you", "show me").
ASKING: frozenset[str] = frozenset(
    "how what why where when which who can could does do did is are should would will show tell give".split())
#: With more words than this (stop words aside), a message with thanks in it may well carry a request.
_ACK_WORDS = 7
#: A message of only common words this short is small talk ("how are you", "got it"), unless it
#: asks what a phrase is (``_asks_what``).
_SHORT_CHAT = 4
#: Words for the one spoken to: "how are you" asks about the bot, "what is if let" about the docs.
_YOU: frozenset[str] = frozenset("you u ya your yours yourself youre".split())
#: "anyone around?", "is anybody here", "u there?", "hi there! anyone around?", "hey everyone, anyone
#: online?": asking whether someone is there, not a question. A greeting may name whom it greets.
_PRESENCE = re.compile(
    r"^\W*(?:(?:yo|hey|hi|hello|hiya|sup|ok|okay|so)"
    r"(?:\s+(?:there|all|everyone|everybody|guys|folks|team|people|ppl|y'?all|friends))?\b\W*)*(?:is\s+|are\s+)?"
    r"(?:(?:any|some)(?:one|body)|you|u|y'?all|ppl|people)\s+(?:around|here|there|online|awake|on)\W*$",
    re.IGNORECASE,
)


#: Praise: "uv is awesome", "lol this framework is so cool" (``_is_praise``).
_PRAISE: frozenset[str] = frozenset(
    "cool awesome great amazing nice neat brilliant fantastic excellent incredible wonderful superb".split())
_COPULA: frozenset[str] = frozenset("is are s looks seems was".split())
_PRAISE_SKIPPED: frozenset[str] = frozenset("so really pretty super very truly a lot much".split())


def _is_praise(words: list[str]) -> bool:
    """Whether a message only praises something ("uv is awesome"), asking nothing.

    Only "X is <praise>": "love that it crashes" and "loving this error" complain.
    """
    split = [part for w in words for part in (w.split("'") if w.endswith("'s") else [w.split("'")[0]])]
    rest = [w for w in split if w not in FILLER and w not in _THANKS and w not in _PRAISE_SKIPPED]
    if not rest or rest[0] in ASKING:
        return False
    return 2 <= len(rest) <= 5 and rest[-1] in _PRAISE and rest[-2] in _COPULA


def _is_small_talk(words: list[str], knows: Callable[[str], bool] | None, *, asks: bool = False) -> bool:
    if not words:
        return False
    if not asks and len(words) <= _ACK_WORDS and _is_praise(words):
        return True
    bases = [w.split("'")[0] for w in words]  # "how's" -> "how", "bot's" -> "bot"
    content = [w for w in bases if w and w not in STOPWORDS and w not in FILLER and w not in SMALL_TALK]
    if not content:
        # "how are you", "got it", "hey how's it going": short, or chatting. A longer message of
        # only common words, or a short one asking what a phrase is, asks about what the docs write
        # in such words ("what is if let?", "what is if let used for").
        return ((len(words) <= _SHORT_CHAT and not _asks_what(bases))
                or any(w in FILLER or w in SMALL_TALK for w in bases))
    # An empty lexicon knows no word, so nothing would count as naming what the docs cover. Stop
    # words do not count towards the length: "wanna" is "want to" by now.
    said = [w for w in bases if w not in STOPWORDS]
    return (not asks and knows is not None and len(said) <= _ACK_WORDS
            and any(w in _THANKS or w in _BYE for w in bases) and not any(w in _WH for w in bases)
            and not any(knows(w) for w in content if w not in _SIGN_OFF))


def asks_about_thread(message: str) -> bool:
    """Whether a message of no words of its own asks about what a thread was about ("why?", "which one?").

    Alone such a message is small talk; in a thread it is a follow-up. "how are you?" asks the bot.
    """
    words = [w.split("'")[0] for w in tokens(message)]
    # "what's up?", "how's it going?", "anyone here?" chat, whatever the thread.
    chat = any(w in _YOU or w in SMALL_TALK for w in words) or _PRESENCE.match(message) is not None
    return 0 < len(words) <= _SHORT_CHAT and words[0] in ASKING and not chat


def _asks_what(bases: list[str]) -> bool:
    """Whether a short message asks what a phrase is ("what is if let"), not how the bot is."""
    return len(bases) >= 3 and bases[0] in ASKING and not any(w in _YOU for w in bases)


def is_small_talk(message: str, *, knows: Callable[[str], bool] | None) -> bool:
    """Whether ``message`` (cleaned of markup and chat forms) is small talk.

    Args:
        message: the message.
        knows: whether the docs know a word (or the word it is a typo of); None when the
            collection's vocabulary is unknown yet (nothing then counts as naming the docs).
    """
    return (_PRESENCE.match(message) is not None or _is_wish(message)
            or _is_small_talk(tokens(message), knows, asks="?" in message))


#: Well-wishing: "happy friday", "have a good weekend", "congrats!". Only as a phrase: a day alone is
#: a topic in a thread ("and on sunday?"), and so is "all" ("can i do it all at once?").
_WISH = re.compile(
    r"\b(?:(?:happy|have\s+a\s+(?:good|great|nice|lovely)|enjoy\s+(?:the|your))\s+"
    r"(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day|weekend|holidays?|new\s+year)|congrat(?:s|ulations))\b",
    re.IGNORECASE,
)
#: Whom a wish goes to: "happy friday everyone".
_ADDRESSED: frozenset[str] = frozenset("everyone everybody all folks team yall guys".split())


def _is_wish(message: str) -> bool:
    """Whether ``message`` wishes well and says nothing else ("hey everyone 👋 happy friday")."""
    if "?" in message or _WISH.search(message) is None:
        return False
    rest = tokens(_WISH.sub(" ", message))
    return all(w in STOPWORDS or w in FILLER or w in SMALL_TALK or w in _ADDRESSED for w in rest)


#: An acknowledgement opening a message that goes on to ask ("cool. and on my mac?", "great, how do
#: i mute ..."): a reply to the last answer, not part of the question. Only a whole word before a
#: comma, "!", an ellipsis, a dash or a stop and a blank: a topic word ("nice output for lists?",
#: "nice: how do i lower a priority?") or a name ("oh-my-zsh", "neat.js") stays.
_ACKNOWLEDGING = (r"(?:ok(?:ay)?|cool|nice|great|perfect|awesome|sweet|neat|thanks|thank\s+you|thx|ty"
                  r"|got\s+it|makes\s+sense|gotcha|alright|ah|oh|yeah|yep)")
_ACK_END = r"(?:\s*(?:[,!\u2026]+|\.+(?=\s)|[\u2013\u2014]+)|\s+-+(?=\s))"
_ACK_LEAD = re.compile(
    rf"^\W*(?:{_ACKNOWLEDGING}\b(?:[\s,]+{_ACKNOWLEDGING}\b)*{_ACK_END}\s*)+(?=\w)",
    re.IGNORECASE,
)


def without_acknowledgement(message: str) -> str:
    """``message`` without the acknowledgement it opens with, when a question follows it."""
    return _ACK_LEAD.sub("", message, count=1)
