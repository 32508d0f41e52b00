"""Fusion of dense and sparse candidates, and the calibrated relevance score.

Two different numbers come out of ranking, on purpose:

* the **fused score** orders chunks: a convex combination of the dense and the
  sparse scores, each min-max normalised over the query's candidates
  (``convex(bm25=1-w,dense=w)``, ``w`` = ``Settings.dense_weight``, 0.35 by
  default, tuned on SciFact *train*). Plain RRF is worse here: a weak dense
  model drags BM25 down (see BENCHMARKS.md).
* the **relevance** is what ``RetrievedChunk.score`` reports, what chunks are shown
  ordered by, and what the per-chunk floor (``Settings.relevance_threshold``) is
  applied to. Min-max scores are
  relative (the best chunk is always 1.0, even for an off-topic question), so
  relevance is absolute instead:

      relevance = coverage * (1 + semantic) / 2

  ``coverage`` is the share of the question's distinct search terms (stemmed,
  stopwords removed) that occur in the chunk's title, section or text;
  ``semantic`` maps the dense cosine similarity linearly from
  [COS_FLOOR, COS_CEIL] onto [0, 1] (a chunk that was not a dense candidate
  has semantic 0).

  Meaning: the share of the question's terms the chunk contains, discounted
  by up to half when its meaning does not agree with the question's. 1.0 =
  every term present and a cosine of at least COS_CEIL; a chunk with every
  term but no semantic agreement scores 0.5; one with half the terms scores
  between 0.25 and 0.5. The default floor (``DEFAULT_RELEVANCE_THRESHOLD`` = 0.15)
  only drops chunks holding almost none of the question's terms; whether the
  question is answered at all is decided from the top candidates' relevances and
  more (``core.retrieval.answerability``). COS_FLOOR/COS_CEIL are calibrated for the
  local WordLlama model; another dense model has another cosine scale, but coverage
  alone still reaches 0.5.
"""

from __future__ import annotations

import itertools
import math
import re
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from core.protocols import Hit, HybridHits

#: With WordLlama, cosines at or below the floor mean "unrelated" (off-topic questions reach
#: about 0.3; in-scope best chunks 0.38 and up), at or above the ceiling "same topic".
COS_FLOOR = 0.25
COS_CEIL = 0.6

Normalisation = Literal["minmax", "zscore"]


@dataclass(frozen=True, slots=True)
class Fused:
    """One candidate after fusion: fused score plus each retriever's raw score (None if absent)."""

    chunk_id: str
    fused: float
    dense: float | None
    sparse: float | None
    payload: dict[str, Any]


def algorithm_name(dense_weight: float, normalisation: Normalisation = "minmax") -> str:
    """The honest name recorded in RankedResults.ranking_algorithm.

    Args:
        dense_weight: weight of the dense retriever (1.0 when only dense ran).
        normalisation: how each list was normalised before the combination.

    Returns:
        For example ``convex(bm25=0.7,dense=0.3)`` (``convex-z(...)`` for z-scores).
    """
    prefix = "convex" if normalisation == "minmax" else "convex-z"
    return f"{prefix}(bm25={1 - dense_weight:.2g},dense={dense_weight:.2g})"


def normalise(hits: Sequence[Hit], method: Normalisation = "minmax") -> tuple[dict[str, float], float]:
    """Normalise one retriever's scores over the query's candidates.

    Args:
        hits: one retriever's candidates.
        method: ``minmax`` maps onto [0, 1]; ``zscore`` centres on the mean in standard deviations.

    Returns:
        (score per chunk id, the value given to a chunk missing from this list). A
        missing chunk ranked below every candidate, so it gets the list's floor:
        0 for min-max, the lowest z-score for z-scores.
    """
    if not hits:
        return {}, 0.0
    scores = [h.score for h in hits]
    if method == "zscore":
        mean = statistics.fmean(scores)
        spread = statistics.pstdev(scores)
        if spread <= 1e-12:
            return {h.chunk_id: 0.0 for h in hits}, 0.0
        return {h.chunk_id: (h.score - mean) / spread for h in hits}, (min(scores) - mean) / spread
    lo, hi = min(scores), max(scores)
    span = hi - lo
    if span <= 1e-12:
        return {h.chunk_id: 1.0 for h in hits}, 0.0
    return {h.chunk_id: (h.score - lo) / span for h in hits}, 0.0


def fuse(hits: HybridHits, *, dense_weight: float, normalisation: Normalisation = "minmax") -> list[Fused]:
    """Combine dense and sparse candidates, best first (ties broken by chunk id).

    Args:
        hits: both retrievers' candidates for one query.
        dense_weight: weight ``w`` of the dense list; the sparse list gets ``1 - w``.
        normalisation: see ``normalise``.

    Returns:
        Every distinct candidate once, by decreasing fused score.
    """
    dense_n, dense_floor = normalise(hits.dense, normalisation)
    sparse_n, sparse_floor = normalise(hits.sparse, normalisation)
    if not hits.sparse:  # dense only (question of stopwords, or a dense-only embedder)
        dense_weight = 1.0
    raw_dense = {h.chunk_id: h.score for h in hits.dense}
    raw_sparse = {h.chunk_id: h.score for h in hits.sparse}
    payloads = {h.chunk_id: h.payload for h in (*hits.sparse, *hits.dense)}
    fused = [
        Fused(
            chunk_id=cid,
            fused=dense_weight * dense_n.get(cid, dense_floor)
            + (1 - dense_weight) * sparse_n.get(cid, sparse_floor),
            dense=raw_dense.get(cid),
            sparse=raw_sparse.get(cid),
            payload=payload,
        )
        for cid, payload in payloads.items()
    ]
    fused.sort(key=lambda f: (-f.fused, f.chunk_id))
    return fused


def semantic_score(cosine: float | None) -> float:
    """Map a dense cosine similarity onto [0, 1] (see the module docstring)."""
    if cosine is None or math.isnan(cosine):
        return 0.0
    return min(1.0, max(0.0, (cosine - COS_FLOOR) / (COS_CEIL - COS_FLOOR)))


def coverage(query_terms: frozenset[int], chunk_terms: frozenset[int]) -> float:
    """Share of the question's distinct search terms present in the chunk, in [0, 1].

    Args:
        query_terms: the question's search-term ids.
        chunk_terms: the chunk's search-term ids (title, section and text).

    Returns:
        0.0 for a question without search terms.
    """
    if not query_terms:
        return 0.0
    return len(query_terms & chunk_terms) / len(query_terms)


def relevance(*, cosine: float | None, term_coverage: float) -> float:
    """The calibrated [0, 1] relevance reported as RetrievedChunk.score.

    Args:
        cosine: the chunk's dense cosine similarity to the question (None: not a dense candidate).
        term_coverage: ``coverage`` of the question's terms by the chunk.

    Returns:
        ``coverage * (1 + semantic) / 2`` in [0, 1], non-decreasing in both arguments,
        rounded to 6 decimals.
    """
    cov = 0.0 if math.isnan(term_coverage) else min(1.0, max(0.0, term_coverage))
    return round(cov * (1.0 + semantic_score(cosine)) / 2.0, 6)


#: How much a title or section naming all of the question's distinctive terms adds to the
#: fused score (which spans [0, 1]): enough to lift the page about the asked thing above
#: pages that merely mention its words, not enough to override a much better match.
TITLE_BOOST = 0.3


def title_boost(
    fused: Sequence[Fused],
    query_terms: frozenset[int],
    heading_terms: Mapping[str, frozenset[int]],
    idf: Callable[[int], float],
) -> list[Fused]:
    """Reorder candidates by fused score plus a bonus for a heading naming the asked thing.

    Args:
        fused: candidates, best first.
        query_terms: the question's search-term ids.
        heading_terms: each candidate's title + section term ids.
        idf: weight of a term id in the collection (a word in every title counts little).

    Returns:
        The candidates re-sorted (ties broken by chunk id); the fused scores are unchanged.
    """
    total = sum(idf(t) for t in query_terms)
    if not total:
        return list(fused)

    def key(f: Fused) -> tuple[float, str]:
        named = sum(idf(t) for t in query_terms & heading_terms.get(f.chunk_id, frozenset()))
        return (-(f.fused + TITLE_BOOST * named / total), f.chunk_id)

    return sorted(fused, key=key)


#: A heading that is a version number, alone or with a date: "0.51.0 (2020-03-01)", "v2.1",
#: "[1.0.0] - 2017-06-20" (Keep a Changelog), "Version 1.2 \u2014 2024-05-01". A numbered
#: chapter ("1.1.7 Running your first simulation") is not one, nor a bare "2.1" (a section
#: number): a version heading has a "v", three parts or a date. The product's name may come
#: first, then with a dated release ("pytest 9.1.1 (2026-06-19)", towncrier's form) or an
#: announcement's title ("mytool-2.3.5: bug fixes", "Django 4.2 release notes"): "Ubuntu 22.04
#: (Jammy Jellyfish)", "Python 3.10.0" and "OAuth 2.0 (PKCE)" name what a page is about.
_VERSION_HEADING = re.compile(
    r"(?P<name>(?!v\d|version\b)[a-z][\w.-]*?(?:\s+|-))?"
    r"\[?(?P<prefix>v|version\s*)?(?P<number>\d+(?:\.\d+)+)(?:[-+][0-9a-z.]+|(?:rc|a|b|dev|post)\d*"
    r"|\s(?:rc|alpha|beta)\d*)?\]?"
    r"(?P<date>\s*(?:\([^)]*\)|[-\u2013\u2014/]\s*\d{4}-\d\d-\d\d))?"
    r"(?P<title>(?::|\s+[-\u2013\u2014])\s+.*|\s+release(?:\s+notes)?)?",
    re.IGNORECASE)
#: What numbers a book's or a guide's parts: "Chapter 1.2.3: Setup" and "Lab 1.1.2 - Intro" are no releases.
_PART_NAME = re.compile(
    r"(?:chapter|section|step|part|lesson|lab|exercise|figure|fig\.?|table|appendix|module|example|unit|week"
    r"|day|phase|stage|level|task|question|problem|equation|eq\.?|listing|algorithm|theorem|lemma|definition)",
    re.IGNORECASE)
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
#: A page's title saying it lists releases: "Release notes", "Changelog", "Scrapy history", "What's new"
#: (not "History, design and future").
_RELEASE_NOTES = re.compile(
    r"(?:[\w.-]+\s+)?(?:release\s+notes|releases|change\s*log|changes|history|news|what['\u2019]?s\s+new)",
    re.IGNORECASE)
#: A page's title saying it is nothing but releases, with no other word: "Changelog", "Release History".
_RELEASES_PAGE = re.compile(
    r"(?:release\s+notes|releases|(?:release\s+|version\s+|change\s+)?history|change\s*log|changes|news"
    r"|what['\u2019]?s\s+new)", re.IGNORECASE)
#: A page's title naming the release it is the notes of: "What's new in Celery 5.6 (Recovery)",
#: "Release notes for mytool 2.1", "Changes in version 3.0"; every section of it is a changelog's.
#: "What's new in the editor" names no release.
_RELEASE_TITLE = re.compile(
    r"(?:what['\u2019]?s\s+new|release\s+notes|changes)\s+(?:in|for|of)\s+"
    r"(?:(?!(?:since|before|after|from|until|to|with|for)\s)[\w.-]+\s+){0,2}?"
    r"(?:v|version\s*)?\d+(?:\.\d+)+(?:\s*\([^)]*\))?", re.IGNORECASE)
#: A question that asks about versions wants the changelog ("which version added ...").
_ASKS_VERSIONS = re.compile(r"\b(?:versions?|releases?|changelog|v?\d+\.\d+)\b", re.IGNORECASE)
#: Changelog entries give way only when another candidate is at least this relevant next to
#: the best of them: a changelog that alone answers ("why 401 instead of 403 since the upgrade")
#: is not replaced by a page sharing one word with the question.
CHANGELOG_MARGIN = 0.5


def is_changelog(section: str) -> bool:
    """Whether a chunk's heading path (``Title > Section``) runs through a version-number heading.

    On a page titled as release notes, a product's name and version is one too ("Release notes >
    Scrapy 0.14"), undated, and so is what sits right under its title; every section of a page
    titled as one release's notes is one.
    """
    headings = [heading.strip() for heading in section.split(">")]
    if _RELEASE_TITLE.fullmatch(headings[0]):
        return True
    notes = _RELEASE_NOTES.fullmatch(headings[0]) is not None
    # Directly under a page of releases: its opening, or short releases merged into one chunk,
    # whose version headings became lines of its text ("Release History"; not "Chat history").
    if len(headings) == 1 and _RELEASES_PAGE.fullmatch(headings[0]):
        return True
    return any(_is_release(heading, named=notes) for heading in headings)


def _is_release(heading: str, *, named: bool = False) -> bool:
    """Whether ``heading`` names a release; ``named``: a name and a version alone is one."""
    match = _VERSION_HEADING.fullmatch(heading)
    if match is None:
        return False
    if match["name"]:
        name = match["name"].strip(" -")
        dated = bool(match["date"]) and _YEAR.search(match["date"]) is not None
        return not _PART_NAME.fullmatch(name) and (dated or bool(match["title"]) or named)
    if match["title"] and not (match["prefix"] or match["date"]):
        return False  # "1.2.3: Setup" is a numbered chapter
    return bool(match["prefix"] or match["date"] or match["number"].count(".") >= 2)


def without_changelog(
    fused: Sequence[Fused], question: str, relevances: Mapping[str, float], *, threshold: float,
) -> list[Fused]:
    """Leave out changelog entries when the question does not ask about versions.

    A changelog names every feature in passing ("Add OAuth2 redirect page ... allowed
    origins"), so its entries match how-to questions word for word while the page that
    explains the feature answers them. They stay when the question asks about versions
    or releases, and when no other candidate reaches ``threshold`` and ``CHANGELOG_MARGIN``
    of their best relevance.

    Args:
        fused: candidates, best first.
        question: the searched text.
        relevances: relevance per chunk id.
        threshold: the relevance a kept chunk needs.

    Returns:
        ``fused`` without changelog entries, or unchanged.
    """
    if _ASKS_VERSIONS.search(question):
        return list(fused)
    # A page with no heading of its own ("CHANGES.rst" that only includes its entries) is named by
    # its title alone.
    entries = {f.chunk_id for f in fused
               if is_changelog(str(f.payload.get("section") or f.payload.get("title") or ""))}
    if not entries:
        return list(fused)
    rest = [f for f in fused if f.chunk_id not in entries]
    best_entry = max(relevances.get(cid, 0.0) for cid in entries)
    best_rest = max((relevances.get(f.chunk_id, 0.0) for f in rest), default=0.0)
    if best_rest < max(threshold, CHANGELOG_MARGIN * best_entry):
        return list(fused)
    return rest


#: A passage this long found twice is one passage shown on two pages (a site's print-all page, a
#: copied version folder); shorter ones (a "See also" line, a one-line command) may be two pages'
#: own words.
REPEAT_MIN_CHARS = 200


def without_repeats(fused: Sequence[Fused]) -> list[Fused]:
    """The candidates with each passage once, from the page it is nearest the start of.

    A built site's "print" page (mdBook's ``print.html``, Node's ``all.html``) repeats pages, a
    copied folder of an older version repeats them all: the same passage would be two sources.
    The copy nearer its page's start (the page about it, not one gathering many) takes the place
    of the better ranked. A passage holding another is no copy: it says more.

    Args:
        fused: candidates, best first.

    Returns:
        ``fused`` with the later copies of a passage left out.
    """
    kept: list[Fused] = []
    where: dict[str, int] = {}
    for f in fused:
        text = " ".join(str(f.payload.get("content", "")).split())
        at = where.get(text) if len(text) >= REPEAT_MIN_CHARS else None
        if at is None:
            where[text] = len(kept)
            kept.append(f)
        elif _chunk_index(f) < _chunk_index(kept[at]):
            kept[at] = f
    return kept


def _chunk_index(f: Fused) -> int:
    index = f.payload.get("chunk_index")
    return index if isinstance(index, int) else 0


#: A long chat message lowers every chunk's share of its terms; when the best candidate only
#: just reaches the threshold, chunks within this share of its relevance are kept too: the
#: first fused candidate at 0.14 must not give way to worse ones that reach 0.15 by holding
#: the chat words. Only then: when no candidate reaches the threshold, none is kept but those
#: holding a phrase the question quotes (``quoted_floor``). That floor also keeps long
#: off-topic messages unanswered (30 of 40 declined instead of 32 when it came down there too).
#: 0.9 changed nothing and the development sets did not move for 0.6-0.9; 0.7 was chosen on
#: fastapi-docs and uv-docs (0.6 missed a fact there, 0.8 gained less) and checked on the
#: three chat sets (no loss; BENCHMARKS.md).
NEAR_BEST = 0.7


def chunk_floor(threshold: float, relevances: Iterable[float], near_best: float) -> float:
    """The relevance a chunk needs: ``threshold``, or ``near_best`` x the best if that is lower.

    Args:
        threshold: the configured floor.
        relevances: the candidates' relevances.
        near_best: share of the best relevance that is enough when the best reaches
            ``threshold`` (so the floor never falls below ``near_best`` x ``threshold``);
            0 keeps ``threshold`` as it is.
    """
    best = max(relevances, default=0.0)
    if not near_best or best < threshold:
        return threshold
    # Four places, rounded down: the floor is shown and must not drop a chunk it admits.
    return min(threshold, math.floor(near_best * best * 10_000) / 10_000)


def select(
    fused: Sequence[Fused],
    relevances: Mapping[str, float],
    *,
    top_k: int,
    threshold: float,
) -> list[tuple[Fused, float]]:
    """Keep the ``top_k`` best fused chunks whose relevance reaches ``threshold``.

    Args:
        fused: candidates, best first.
        relevances: relevance per chunk id; a chunk without one counts as 0.
        top_k: how many to keep at most.
        threshold: minimum relevance (inclusive).

    Returns:
        (candidate, relevance) pairs in fused order.
    """
    kept: list[tuple[Fused, float]] = []
    for item in fused:
        rel = relevances.get(item.chunk_id, 0.0)
        if rel >= threshold:
            kept.append((item, rel))
            if len(kept) == top_k:
                break
    return kept


def best_threshold(
    in_scope: Sequence[float], out_of_scope: Sequence[float]
) -> tuple[float, float]:
    """The threshold that best separates in-scope from out-of-scope top relevances.

    Args:
        in_scope: the best relevance reached by each question the docs answer.
        out_of_scope: the best relevance reached by each question they do not.

    Returns:
        (threshold, balanced accuracy): the midpoint between two neighbouring
        observed scores that maximises the mean of the answered rate and the
        declined rate; among equals, the widest margin wins.
    """
    if not in_scope or not out_of_scope:
        raise ValueError("need at least one in-scope and one out-of-scope score")
    values = sorted(set(in_scope) | set(out_of_scope))
    cuts = [values[0] - 1e-6] + [(a + b) / 2 for a, b in itertools.pairwise(values)]
    cuts.append(values[-1] + 1e-6)
    best: tuple[float, float, float] | None = None
    for cut in cuts:
        answered = sum(s >= cut for s in in_scope) / len(in_scope)
        declined = sum(s < cut for s in out_of_scope) / len(out_of_scope)
        accuracy = (answered + declined) / 2
        margin = min([abs(s - cut) for s in (*in_scope, *out_of_scope)])
        key = (accuracy, margin, -cut)
        if best is None or key > best:
            best = key
    assert best is not None
    return round(-best[2], 6), best[0]
