"""Spelling: what a chat word was meant to be, read against the collection and English.

``correct_word`` maps a typo to the nearest word the collection knows (rapidfuzz, one edit or
two for long words, a swap of neighbours counting as one, the first letter kept), unless an
English word is nearer or the word is English already (a rare English word one doubled letter
short of a common docs word is the docs' word: "planer" is "planner"); ``correct_parts`` does
the same for each part of a hyphen- or slash-joined word; ``unstretched`` reads "sooo" as "so".
The English word list and frequencies are pyspellchecker's, shipped in its wheel.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING

from rapidfuzz import process
from rapidfuzz.distance import OSA

from core.retrieval.lexicon import Lexicon
from core.retrieval.terms import STOPWORDS

if TYPE_CHECKING:
    from spellchecker import SpellChecker

_RUN = re.compile(r"([a-z])\1{2,}", re.IGNORECASE)
_VOWEL = re.compile(r"[aeiouy]", re.IGNORECASE)


def unstretched(word: str) -> str:
    """The English word a stretched one stands for, or the word as it is."""
    if len(set(word.lower())) < 2:
        return word  # "www", "aaa", "zzz": no word stretched
    frequency = _english().word_frequency
    # Each run kept once or twice: the commoner English word wins ("coool" is "cool", not "col").
    candidates = [_RUN.sub(kept, word) for kept in (r"\1", r"\1\1")]
    best = max(candidates, key=lambda c: frequency[c.lower()])
    # A word has a vowel: "Brrr" is no "Br".
    return best if frequency[best.lower()] and _VOWEL.search(best) else word


@lru_cache(maxsize=1)
def _english() -> SpellChecker:
    """pyspellchecker's general English word list and frequencies (shipped in its wheel)."""
    from spellchecker import SpellChecker

    return SpellChecker(distance=1)


@lru_cache(maxsize=1)
def english_words() -> frozenset[str]:
    """A general English word list (pyspellchecker's)."""
    return frozenset(_english().word_frequency.dictionary)


#: Words up to this long are corrected by one edit (a swap of neighbours counts as one);
#: longer ones by two. Two edits turn a short word into another ("realtime" -> "reactive").
_ONE_EDIT = 8


#: In words this short one changed letter makes another word ("ooms" -> "orms", "wifi" ->
#: "wiki"): only a missing letter or two swapped ones count as a typo.
_SHORT_WORD = 4


#: Stop words by their sorted letters: "thier" and "their" meet at "ehirt".
_SWAPPED_STOPWORDS: dict[str, str] = {"".join(sorted(w)): w for w in sorted(STOPWORDS) if w.isalpha()}


def _plausible(word: str, candidate: str) -> bool:
    """Whether ``candidate`` is what a typo of ``word`` likely meant.

    The first letter must match; in a short word only a letter left out or two swapped count.
    """
    if candidate[:1] != word[:1]:
        return False
    if len(word) > _SHORT_WORD:
        return True
    missing_letter = len(candidate) == len(word) + 1
    return missing_letter or (len(candidate) == len(word) and sorted(candidate) == sorted(word))


def correct_word(word: str, lexicon: Lexicon) -> str | None:
    """The word an unknown, misspelt ``word`` stands for, or None to keep it.

    A word the collection knows, or a real English word it does not use ("lecture",
    "knocked"), is kept: "correcting" it to a docs word would change the question (unless
    it is a rare word one doubled letter short of a common docs word: ``_doubled``).
    Otherwise the nearest collection word wins (the most frequent among equals),
    unless an English word is nearer ("forgeting" is "forgetting", not "forgoing")
    or a stop word is the same letters swapped and the docs word is not ("thier"
    is "their", not "tier"). No correction changes the first letter, which typos
    rarely touch ("pyinstaller" is not "installer"), and with no collection word
    near, the word is kept ("tuple" is no typo of "tulle").
    """
    if len(word) < 4 or not word.isalpha() or lexicon.empty or lexicon.knows(word):
        return None
    if word in english_words():
        return _doubled(word, lexicon)
    limit = 1 if len(word) <= _ONE_EDIT else 2
    matches = process.extract(word, lexicon.vocabulary, scorer=OSA.distance, score_cutoff=limit, limit=8)
    near = [(str(m[0]), int(m[1])) for m in matches if _plausible(word, str(m[0]))]
    if not near:
        return None  # a name the docs do not use ("tuple", "admin") stays as it is
    best, distance = min(near, key=lambda m: (m[1], -lexicon.words.get(m[0], 0), m[0]))
    if distance > 1 and (english := english_correction(word)) is not None:
        return english
    swapped = _SWAPPED_STOPWORDS.get("".join(sorted(word)))
    if swapped is not None and sorted(best) != sorted(word):
        return swapped
    return best


#: A rare English word the docs never use is a typo of the docs word it is one doubled letter
#: short of ("global planer" -> "planner") when that word is this many times commoner in English...
_DOUBLED_RATIO = 20
#: ...and the docs use it in at least this many chunks (their own vocabulary, not a passing word).
#: Both set from English word pairs, not from the sets: "planer"/"planner" differ 27 times,
#: "filed"/"filled" 3.4, "striped"/"stripped" 4, "taped"/"tapped" 1.1.
_DOUBLED_MIN_CHUNKS = 5


def _doubled(word: str, lexicon: Lexicon) -> str | None:
    """The docs word ``word`` is one doubled letter short of, when ``word`` is a rare English word.

    Leaving out one of a double letter is among the commonest typos, and it often makes
    another, rarer word ("planer", "diner"): the docs' word wins when English itself uses it
    far more. Short words ("prof" is no "proof") and common ones ("filed", "later") are kept.
    """
    if len(word) <= _SHORT_WORD:
        return None
    frequency = _english().word_frequency
    for i in range(1, len(word) + 1):
        candidate = f"{word[:i]}{word[i - 1:]}"
        if (lexicon.words.get(candidate, 0) >= _DOUBLED_MIN_CHUNKS
                and frequency[candidate] >= _DOUBLED_RATIO * frequency[word]):
            return candidate
    return None


@lru_cache(maxsize=4096)
def english_correction(word: str, *, min_frequency: int = 0) -> str | None:
    """The most frequent English word one edit from ``word`` with its first letter, if any.

    Of words as frequent, the first in alphabetical order: pyspellchecker's own ``correction``
    breaks such ties in set order, which changes with the hash seed from one run to the next
    ("tekton": "teton", "teston" or none), and a name's verdict with it. None too when that word
    is rarer than ``min_frequency`` (pyspellchecker's count).
    """
    checker = _english()
    frequency = checker.word_frequency.__getitem__
    english = max(sorted(checker.candidates(word) or ()), key=frequency, default=None)
    if english is None or english[:1] != word[:1] or frequency(english) < min_frequency:
        return None
    return english


#: Affixes English makes new words with: "stackable", "precompile", "relocking" are no names.
#: "post-" is left out ("postinstall" names a hook), and so is "-ly", which names end in ("fastly").
_PREFIXES = ("re", "pre", "un", "non")
_SUFFIXES = ("able", "ible", "ing", "ed", "er", "ers", "s", "es", "ness", "less")
#: Letters left after an affix comes off: "es" off "yes" leaves no word to look up.
_STEM_LETTERS = 4


def is_derived(word: str, english: frozenset[str]) -> bool:
    """Whether ``word`` is an English word with a prefix or suffix English adds ("stackable")."""
    for prefix in ("", *_PREFIXES):
        if not word.startswith(prefix):
            continue
        rest = word[len(prefix):]
        stems = [rest] if prefix else []
        stems += [rest[: -len(suffix)] for suffix in _SUFFIXES if rest.endswith(suffix)]
        if any(len(stem) >= _STEM_LETTERS and stem in english for stem in stems):
            return True
    return False


#: What joins the parts of a compound word as chat writes it: "pre-comit", "read/wirte".
_JOINS = re.compile(r"([-/])")


def correct_parts(word: str, lexicon: Lexicon) -> str | None:
    """``word`` with the misspelt parts of a hyphen- or slash-joined compound corrected, else None.

    ``correct_word`` reads words of letters only, so "pre-comit" kept its typo, and a word the
    docs never write sank the question's answerability ("pre-commit" is in every page of a hook).
    """
    # An address or a path names what is there, typed as it is. ``Lexicon.knows`` takes a compound
    # for known when one of its parts is ("pre-comit"): only the compound as the docs write it counts.
    if not _JOINS.search(word) or ":" in word or word.startswith(("/", "~", ".")) or word in lexicon.words:
        return None
    parts = _JOINS.split(word)
    fixed = [part if part in "-/" else (correct_word(part, lexicon) or part) for part in parts]
    return "".join(fixed) if fixed != parts else None
