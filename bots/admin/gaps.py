"""Coverage gaps: group the questions the docs did not answer by similarity, most asked first.

Two questions are similar when the mean of two cosines passes ``GAP_SIMILARITY``: TF-IDF over
their stemmed search terms (the BM25 tokenizer's; IDF taken over the questions being grouped,
so a word every question shares, such as the product's name, counts for little) and
WordLlama's dense vectors (catches "pricing" / "what is the price"). A question joins the
group whose members it resembles most on average (average link, so groups do not chain), else
starts one. Exact repeats (case, spacing, mentions and trailing punctuation aside) merge first.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

#: Mean of the TF-IDF and dense cosines above which two questions are one gap.
GAP_SIMILARITY = 0.45
_MENTION = re.compile(r"<[@#!][^>]*>")
_SPACE = re.compile(r"\s+")


@dataclass(kw_only=True)
class Gap:
    """One group of unanswered questions."""

    question: str
    count: int
    last_asked: str
    variants: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        """The group as JSON."""
        return {"question": self.question, "count": self.count, "last_asked": self.last_asked,
                "variants": self.variants}


def normalise(text: str) -> str:
    """Lower case, no mentions, single spaces, no trailing punctuation."""
    return _SPACE.sub(" ", _MENTION.sub(" ", text)).strip().rstrip("?!.").strip().lower()


@dataclass(kw_only=True)
class _Distinct:
    key: str
    forms: Counter[str]
    count: int
    last: str


def _distinct(rows: Sequence[tuple[str, str]]) -> list[_Distinct]:
    """Merge exact repeats; most asked first, then most recent."""
    merged: dict[str, _Distinct] = {}
    for text, when in rows:
        key = normalise(text)
        if not key:
            continue
        item = merged.setdefault(key, _Distinct(key=key, forms=Counter(), count=0, last=when))
        item.forms[_SPACE.sub(" ", _MENTION.sub(" ", text)).strip()] += 1
        item.count += 1
        item.last = max(item.last, when)
    return sorted(merged.values(), key=lambda d: (-d.count, _negated(d.last)))


def _negated(text: str) -> tuple[int, ...]:
    return tuple(-ord(c) for c in text)


def _similarity(texts: Sequence[str]) -> np.ndarray:
    """Pairwise mean of TF-IDF (stemmed terms) and WordLlama cosines."""
    from core.embedders.local import LocalEmbedder

    embedder = LocalEmbedder()
    terms = [embedder.terms(t) for t in texts]
    df = Counter(term for ts in terms for term in ts)
    n = len(texts)
    shared = {term: i for i, term in enumerate(t for t, c in df.items() if c > 1)}
    weights = np.zeros((n, max(1, len(shared))), dtype=np.float32)
    norms = np.ones(n, dtype=np.float32)
    for row, ts in enumerate(terms):
        idf = {t: math.log((n + 1) / (df[t] + 0.5)) for t in ts}
        norms[row] = math.sqrt(sum(w * w for w in idf.values())) or 1.0
        for term, w in idf.items():
            if term in shared:
                weights[row, shared[term]] = w
    lexical = (weights @ weights.T) / np.outer(norms, norms)
    dense = np.asarray(embedder.dense(list(texts)), dtype=np.float32)
    return (lexical + dense @ dense.T) / 2


def _average_link(sim: np.ndarray) -> list[list[int]]:
    """Assign each item, in order, to the group it resembles most on average, or a new group."""
    n = sim.shape[0]
    totals = np.zeros((n, n), dtype=np.float32)  # row g: summed similarity of group g's members
    sizes = np.zeros(n, dtype=np.float32)
    groups: list[list[int]] = []
    for index in range(n):
        count = len(groups)
        if count:
            scores = totals[:count, index] / sizes[:count]
            best = int(np.argmax(scores))
            if scores[best] >= GAP_SIMILARITY:
                groups[best].append(index)
                totals[best] += sim[index]
                sizes[best] += 1
                continue
        groups.append([index])
        totals[count] = sim[index]
        sizes[count] = 1
    return groups


def group_unanswered(rows: Sequence[tuple[str, str]], *, limit: int = 15) -> list[Gap]:
    """Group ``(question, asked at)`` rows; the ``limit`` largest groups, most asked first."""
    items = _distinct(rows)
    if not items:
        return []
    groups = _average_link(_similarity([i.key for i in items]))
    gaps = []
    for members in groups:
        head = items[members[0]]
        gaps.append(Gap(
            question=head.forms.most_common(1)[0][0], count=sum(items[m].count for m in members),
            last_asked=max(items[m].last for m in members),
            variants=[items[m].forms.most_common(1)[0][0] for m in members[1:4]],
        ))
    gaps.sort(key=lambda g: (-g.count, _negated(g.last_asked)))
    return gaps[:limit]
