"""Acronyms the docs define, so a question that only uses the short form finds the long one.

Docs introduce an acronym once ("Synthetic Data Generation (SDG) generates labelled
images") and then often go on with the long form or with the acronym alone, while people
in chat write "whats sdg in isaac sim": the pages about the long form share no word with
the question. A definition is read where the docs write it, a run of words followed by
the acronym in parentheses whose letters are those words' initials ("Quality of Service
(QoS)", "Denavit-Hartenberg (DH)"); nothing is guessed and no list of acronyms is kept.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping

from core.retrieval.terms import STOPWORDS

#: Little words a long form may contain without giving the acronym a letter ("Quality of Service").
_LINKS = frozenset({"of", "and", "for", "the", "a", "an", "to", "in", "on", "with", "by", "or", "as", "at",
                    "from"})
#: A run of words, then the acronym in parentheses: two to eight letters or digits, starting
#: with a letter, an optional plural "s" ("LLMs"). The look-behind makes a match start at a
#: word's start: without it, a long run of word characters (a minified line in a code block)
#: is tried again from every position.
_DEFINITION = re.compile(
    r"(?<![\w'\u2019-])((?:[A-Za-z][\w'\u2019-]*\s+){0,8}?[A-Za-z][\w'\u2019-]*)"
    r"\s*\(\s*([A-Za-z][A-Za-z0-9]{1,7}?)s?\s*\)")


def _initials(words: list[str]) -> str:
    """First letters of ``words``, each hyphenated part counting ("vision-language" -> "vl")."""
    return "".join(part[0] for word in words for part in word.split("-") if part).lower()


def _long_form(words: list[str], letters: str) -> str | None:
    """The shortest run of words ending ``words`` whose initials spell ``letters``, lower-case."""
    for n in range(1, min(len(words), len(letters) + 3) + 1):
        tail = words[-n:]
        if tail[0].lower() in _LINKS:
            continue
        content = [w for w in tail if w.lower() not in _LINKS]
        if letters in (_initials(tail), _initials(content)):
            return " ".join(tail).lower()
    return None


def definitions(text: str) -> Counter[tuple[str, str]]:
    """Count the acronym definitions ``text`` holds, as (acronym, long form) in lower case.

    An acronym needs two capitals as written ("QoS", "SDG"): "(see)" or "(e.g. this)" is
    not one. The long form is the run of words right before the parentheses whose initials
    spell it, with or without the little words between them.
    """
    found: Counter[tuple[str, str]] = Counter()
    for match in _DEFINITION.finditer(text):
        acronym = match.group(2)
        if sum(ch.isupper() for ch in acronym) < 2:
            continue
        letters = acronym.lower()
        if letters in STOPWORDS:
            continue  # "Information Technology (IT)": "it" in a question is a pronoun
        long_form = _long_form(match.group(1).split(), letters)
        if long_form is not None:
            found[(letters, long_form)] += 1
    return found


def commonest(counts: Mapping[str, Mapping[str, int]]) -> dict[str, str]:
    """Each acronym's most often written long form (a quiz's wrong option is written once)."""
    return {acronym: max(forms.items(), key=lambda kv: (kv[1], kv[0]))[0]
            for acronym, forms in counts.items() if forms}
