"""The collection's own vocabulary: which words occur in how many chunks.

Query understanding needs it for two things that must mean the same in every
corpus: spelling correction against the words the docs actually use, and
inverse document frequency (how distinctive a question's word is here); it also
counts how the docs write a versioned name ("ROS 2" or "ros2") and the acronyms they define. It is
kept beside the store as ``lexicon-<collection>.json`` and updated document by
document at ingest (``core.ingest.sync.DocumentSync``), so a re-sync costs only
what changed. A collection ingested before the lexicon existed simply has none
until its next ingest fills it in; everything that reads it degrades gracefully.
"""

from __future__ import annotations

import bisect
import json
import logging
import math
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from core.retrieval.acronyms import commonest, definitions
from core.retrieval.terms import STOPWORDS, content_terms, tokens

log = logging.getLogger(__name__)

LEXICON_VERSION = 1
#: Shorter beginnings of a word are too many to read as its abbreviation ("conf" begins "conflict").
ABBREVIATION_MIN = 5
_WORD_RE = re.compile(r"^[a-z][a-z0-9_-]*[a-z0-9]$")


#: A name and its version number apart ("ROS 2", "Python 3"; a no-break space in HTML), not a
#: dotted version ("Python 3.12").
SPACED_VERSION_RE = re.compile(r"\b([A-Za-z]{2,})[ \u00a0](\d{1,2})\b(?!\.\d)")
#: The same written together ("ros2", "python3").
JOINED_VERSION_RE = re.compile(r"\b([A-Za-z]{2,})(\d{1,2})\b(?!\.\d)")


def chunk_words(text: str) -> set[str]:
    """The distinct lower-case words of one chunk that the lexicon records."""
    return {t for t in tokens(text) if _WORD_RE.match(t) and len(t) <= 40}


def chunk_versions(text: str) -> set[str]:
    """The distinct names written apart from their version in one chunk ("ros 2"), lower-case.

    "in 10" or "for 2" name nothing: a stop word before a number is no name.
    """
    return {f"{m.group(1)} {m.group(2)}".lower() for m in SPACED_VERSION_RE.finditer(text)
            if m.group(1).lower() not in STOPWORDS}


@dataclass(frozen=True)
class Lexicon:
    """Chunk frequencies of a collection's words (read-only view).

    Args:
        chunks: how many chunks the collection holds.
        words: in how many chunks each lower-case word occurs.
        acronyms: the long form the docs define for each lower-case acronym ("sdg" ->
            "synthetic data generation"; ``core.retrieval.acronyms``).
        versions: in how many chunks each name is written apart from its version ("ros 2"),
            to set against ``words``' count of the joined form ("ros2").
    """

    chunks: int = 0
    words: dict[str, int] = field(default_factory=dict)
    acronyms: dict[str, str] = field(default_factory=dict)
    versions: dict[str, int] = field(default_factory=dict)
    _term_df: dict[int, dict[int, int]] = field(default_factory=dict, repr=False, compare=False)

    @property
    def empty(self) -> bool:
        """True when nothing is known (no ingest recorded yet)."""
        return self.chunks == 0

    @cached_property
    def stems(self) -> dict[str, int]:
        """Chunk frequency per search stem (an upper bound: word forms are summed, capped)."""
        out: Counter[str] = Counter()
        for word, df in self.words.items():
            for stem in content_terms(word):
                out[stem] += df
        return {s: min(df, self.chunks) for s, df in out.items()}

    @cached_property
    def vocabulary(self) -> list[str]:
        """Words long enough to be spelling-correction targets, most frequent first."""
        return sorted((w for w in self.words if len(w) >= 3 and w not in STOPWORDS),
                      key=lambda w: (-self.words[w], w))

    def term_idf(self, terms: Callable[[str], frozenset[int]]) -> Callable[[int], float]:
        """Inverse chunk frequency per search-term id of ``terms`` (the sparse model's vocabulary).

        Word forms that share a term id pool their counts; an id never seen gets the
        highest value. Cached per lexicon and term function.
        """
        cached = self._term_df.get(id(terms))
        if cached is None:
            df: Counter[int] = Counter()
            for word, count in self.words.items():
                for term in terms(word):
                    df[term] += count
            cached = self._term_df[id(terms)] = dict(df)
        n = self.chunks

        def idf(term: int) -> float:
            return math.log((n + 1) / (min(cached.get(term, 0), n) + 0.5))

        return idf

    @cached_property
    def joined(self) -> frozenset[str]:
        """The stems of the hyphenated words written solid: "call-outs" is "callout", "pop-up" "popup"."""
        return frozenset(stem for word in self.words if "-" in word
                         for stem in content_terms(word.replace("-", "")))

    def knows(self, word: str) -> bool:
        """True when ``word`` (lower-case) or its stem occurs in the collection, hyphenated or not."""
        if word in self.words:
            return True
        return any(s in self.stems or s in self.joined for s in content_terms(word))

    @cached_property
    def _alphabetical(self) -> list[str]:
        """The collection's words in order, for finding the words one begins by bisection."""
        return sorted(self.words)

    def abbreviated(self, word: str) -> str | None:
        """A longer word of the collection that ``word`` begins ("concat": "concatenate"), else None.

        People shorten the docs' long words in chat; an abbreviation names no thing the docs lack.
        ``word`` is lower-case; one under ``ABBREVIATION_MIN`` letters begins too many words to tell.
        The longer word has two letters more at least: one more is a plural or an inflection.
        """
        if len(word) < ABBREVIATION_MIN:
            return None
        words = self._alphabetical
        i = bisect.bisect_left(words, word)
        while i < len(words) and words[i].startswith(word):
            if len(words[i]) >= len(word) + 2:
                return words[i]
            i += 1
        return None

    def idf(self, stem: str) -> float:
        """Inverse chunk frequency of a stem; an unknown stem gets the highest value."""
        df = self.stems.get(stem, 0)
        return math.log((self.chunks + 1) / (df + 0.5))


class LexiconFile:
    """The on-disk lexicon of one collection, updated per document.

    Args:
        path: the JSON file (created on first save).
    """

    def __init__(self, *, path: Path) -> None:
        self.path = path
        self._docs: dict[str, dict[str, Any]] = self._read()
        self._dirty = False

    def _read(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("lexicon %s unreadable, rebuilding it: %s", self.path, exc)
            return {}
        if not isinstance(data, dict) or data.get("version") != LEXICON_VERSION:
            return {}
        docs = data.get("documents")
        if not isinstance(docs, dict):
            return {}
        # A hand-edited or damaged entry is dropped, not read: the next ingest records it again.
        return {name: entry for name, entry in docs.items() if _well_formed(entry)}

    def has(self, source_document: str, content_hash: str) -> bool:
        """True when this version of the document is already recorded."""
        entry = self._docs.get(source_document)
        return entry is not None and entry.get("hash") == content_hash and self.complete(source_document)

    def complete(self, source_document: str) -> bool:
        """Whether the document is recorded with everything read today (its acronyms and versions too).

        An entry written before acronyms or versions were read must be recorded again: ingest
        reads the document once more even when it has not changed (a sitemap page whose date
        is the same).
        """
        entry = self._docs.get(source_document)
        return entry is not None and "acronyms" in entry and "versions" in entry

    def put(self, source_document: str, content_hash: str, texts: Sequence[str]) -> None:
        """Record a document's chunk texts (replacing what was recorded for it)."""
        counts: Counter[str] = Counter()
        versions: Counter[str] = Counter()
        defined: Counter[tuple[str, str]] = Counter()
        for text in texts:
            counts.update(chunk_words(text))
            versions.update(chunk_versions(text))
            defined.update(definitions(text))
        acronyms: dict[str, dict[str, int]] = {}
        for (acronym, long_form), n in defined.items():
            acronyms.setdefault(acronym, {})[long_form] = n
        self._docs[source_document] = {"hash": content_hash, "chunks": len(texts), "words": dict(counts),
                                       "acronyms": acronyms, "versions": dict(versions)}
        self._dirty = True

    def drop(self, source_documents: Iterable[str]) -> None:
        """Forget documents removed from the collection."""
        for name in source_documents:
            if self._docs.pop(name, None) is not None:
                self._dirty = True

    def save(self) -> None:
        """Write atomically (a crash mid-write leaves the previous file)."""
        if not self._dirty:
            return
        tmp = self.path.with_suffix(".tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps({"version": LEXICON_VERSION, "documents": self._docs}),
                           encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError as exc:
            # The chunks are stored; without the vocabulary only spelling correction and
            # heading ranking are missing, and the next ingest writes it again.
            log.warning("could not save the vocabulary %s: %s", self.path, exc)
            return
        self._dirty = False

    def lexicon(self) -> Lexicon:
        """The aggregated view over every recorded document."""
        words: Counter[str] = Counter()
        versions: Counter[str] = Counter()
        forms: dict[str, Counter[str]] = {}
        chunks = 0
        counted_all = True
        for entry in self._docs.values():
            chunks += int(entry.get("chunks", 0))
            words.update(entry.get("words", {}))
            versions.update(entry.get("versions", {}))
            counted_all = counted_all and "versions" in entry
            # Recorded before acronyms were read: none until the next ingest records it again.
            for acronym, counted in entry.get("acronyms", {}).items():
                forms.setdefault(acronym, Counter()).update(counted)
        # Until every document is recorded again with them, pair counts from some documents set
        # against word counts from all would favour the joined form: none are used.
        return Lexicon(chunks=chunks, words=dict(words), acronyms=commonest(forms),
                       versions=dict(versions) if counted_all else {})


def _well_formed(entry: Any) -> bool:
    """Whether a recorded document has the shape ``LexiconFile.put`` writes."""
    if not isinstance(entry, dict) or not isinstance(entry.get("chunks", 0), int):
        return False
    return all(isinstance(entry.get(key, {}), dict) for key in ("words", "acronyms", "versions"))


class LexiconCache:
    """Loads a collection's lexicon once and again only when the file changes.

    Args:
        path: the lexicon file (may not exist yet).
    """

    def __init__(self, *, path: Path) -> None:
        self.path = path
        self._stamp: tuple[int, int] | None = None
        self._lexicon = Lexicon()

    def get(self) -> Lexicon:
        """The current lexicon; an empty one when none was recorded."""
        try:
            stat = self.path.stat()
        except OSError:
            return Lexicon()
        stamp = (stat.st_mtime_ns, stat.st_size)
        if stamp != self._stamp:
            self._lexicon = LexiconFile(path=self.path).lexicon()
            self._stamp = stamp
        return self._lexicon


class LexiconCaches:
    """One ``LexiconCache`` per collection, made on first use (a question may name its collection).

    Args:
        folder: where the ``lexicon-<collection>.json`` files are kept (the data folder).
    """

    def __init__(self, *, folder: Path) -> None:
        self.folder = folder
        self._caches: dict[str, LexiconCache] = {}

    def path(self, collection: str) -> Path:
        """The lexicon file of ``collection``."""
        return self.folder / f"lexicon-{collection}.json"

    def get(self, collection: str) -> Lexicon:
        """The current lexicon of ``collection``; an empty one when none was recorded."""
        cache = self._caches.get(collection)
        if cache is None:
            cache = self._caches[collection] = LexiconCache(path=self.path(collection))
        return cache.get()


def no_lexicon(collection: str) -> Lexicon:
    """The lexicon provider when none is wired: nothing known, nothing corrected."""
    return Lexicon()
