"""Ranking as pure functions: normalisation, convex fusion, calibrated relevance, selection, threshold."""

from __future__ import annotations

import itertools
import math

import pytest

from core.protocols import Hit, HybridHits
from core.retrieval.ranking import (
    COS_CEIL,
    COS_FLOOR,
    NEAR_BEST,
    Fused,
    algorithm_name,
    best_threshold,
    chunk_floor,
    coverage,
    fuse,
    normalise,
    relevance,
    select,
    semantic_score,
)


def hits(*pairs: tuple[str, float]) -> list[Hit]:
    return [Hit(cid, score, {"chunk_id": cid}) for cid, score in pairs]


# ------------------------------------------------------------------ normalisation


def test_minmax_maps_onto_unit_interval_and_missing_gets_zero() -> None:
    scores, floor = normalise(hits(("a", 10.0), ("b", 5.0), ("c", 0.0)))
    assert scores == {"a": 1.0, "b": 0.5, "c": 0.0}
    assert floor == 0.0


def test_minmax_of_equal_scores_is_all_ones() -> None:
    scores, _ = normalise(hits(("a", 3.0), ("b", 3.0)))
    assert scores == {"a": 1.0, "b": 1.0}


def test_zscore_centres_and_floor_is_the_lowest() -> None:
    scores, floor = normalise(hits(("a", 3.0), ("b", 1.0)), "zscore")
    assert scores == pytest.approx({"a": 1.0, "b": -1.0})
    assert floor == pytest.approx(-1.0)


def test_normalise_empty() -> None:
    assert normalise([]) == ({}, 0.0)


# ------------------------------------------------------------------ fusion


def test_convex_fusion_weights_and_order() -> None:
    both = HybridHits(dense=hits(("a", 0.9), ("b", 0.5), ("c", 0.1)),
                      sparse=hits(("b", 12.0), ("c", 6.0), ("d", 0.0)))
    fused = fuse(both, dense_weight=0.3)
    by_id = {f.chunk_id: f for f in fused}
    assert by_id["a"].fused == pytest.approx(0.3 * 1.0)
    assert by_id["b"].fused == pytest.approx(0.3 * 0.5 + 0.7 * 1.0)
    assert by_id["c"].fused == pytest.approx(0.0 + 0.7 * 0.5)
    assert by_id["d"].fused == pytest.approx(0.0)
    assert [f.chunk_id for f in fused] == ["b", "c", "a", "d"]
    assert by_id["a"].sparse is None and by_id["a"].dense == 0.9
    assert by_id["d"].dense is None and by_id["d"].sparse == 0.0


def test_dense_only_uses_dense_weight_one() -> None:
    fused = fuse(HybridHits(dense=hits(("a", 0.2), ("b", 0.8)), sparse=[]), dense_weight=0.3)
    assert [(f.chunk_id, f.fused) for f in fused] == [("b", 1.0), ("a", 0.0)]


def test_weight_extremes_reproduce_each_retriever() -> None:
    both = HybridHits(dense=hits(("a", 0.9), ("b", 0.1)), sparse=hits(("b", 9.0), ("a", 1.0)))
    assert [f.chunk_id for f in fuse(both, dense_weight=1.0)] == ["a", "b"]
    assert [f.chunk_id for f in fuse(both, dense_weight=0.0)] == ["b", "a"]


def test_ties_break_by_chunk_id() -> None:
    both = HybridHits(dense=hits(("z", 1.0), ("y", 1.0)), sparse=[])
    assert [f.chunk_id for f in fuse(both, dense_weight=0.5)] == ["y", "z"]


def test_algorithm_names_are_honest() -> None:
    assert algorithm_name(0.35) == "convex(bm25=0.65,dense=0.35)"
    assert algorithm_name(1.0) == "convex(bm25=0,dense=1)"
    assert algorithm_name(0.3, "zscore") == "convex-z(bm25=0.7,dense=0.3)"


# ------------------------------------------------------------------ relevance


def test_coverage_share() -> None:
    assert coverage(frozenset({1, 2, 3, 4}), frozenset({1, 2, 9})) == 0.5
    assert coverage(frozenset(), frozenset({1})) == 0.0
    assert coverage(frozenset({1}), frozenset()) == 0.0


def test_semantic_score_is_clipped_linear() -> None:
    assert semantic_score(None) == 0.0
    assert semantic_score(COS_FLOOR - 0.1) == 0.0
    assert semantic_score(COS_CEIL + 0.1) == 1.0
    assert semantic_score((COS_FLOOR + COS_CEIL) / 2) == pytest.approx(0.5)
    assert semantic_score(math.nan) == 0.0


@pytest.mark.parametrize("cosine", [None, -1.0, 0.0, 0.2, 0.3, 0.5, 0.7, 1.0])
@pytest.mark.parametrize("cov", [0.0, 0.25, 0.5, 1.0])
def test_relevance_is_bounded(cosine: float | None, cov: float) -> None:
    assert 0.0 <= relevance(cosine=cosine, term_coverage=cov) <= 1.0


def test_relevance_is_monotonic_in_both_arguments() -> None:
    cosines = [i / 20 for i in range(-4, 21)]
    covs = [i / 10 for i in range(11)]
    for c1, c2 in itertools.pairwise(cosines):
        for cov in covs:
            assert relevance(cosine=c1, term_coverage=cov) <= relevance(cosine=c2, term_coverage=cov)
    for v1, v2 in itertools.pairwise(covs):
        for cos in cosines:
            assert relevance(cosine=cos, term_coverage=v1) <= relevance(cosine=cos, term_coverage=v2)


def test_relevance_meaning_at_the_corners() -> None:
    assert relevance(cosine=COS_CEIL, term_coverage=1.0) == 1.0
    assert relevance(cosine=None, term_coverage=1.0) == 0.5  # every term, no semantic agreement
    assert relevance(cosine=1.0, term_coverage=0.0) == 0.0  # no term of the question at all
    assert relevance(cosine=None, term_coverage=0.5) == 0.25
    assert relevance(cosine=0.9, term_coverage=math.nan) == 0.0


def test_default_threshold_reading() -> None:
    # Half the terms need some semantic agreement to pass 0.3; 60 % of them always pass.
    assert relevance(cosine=0.2, term_coverage=0.5) < 0.3
    assert relevance(cosine=0.4, term_coverage=0.5) >= 0.3
    assert relevance(cosine=None, term_coverage=0.6) >= 0.3


# ------------------------------------------------------------------ selection


def fused(*ids: str) -> list[Fused]:
    return [Fused(cid, 1.0 - i / 10, None, None, {}) for i, cid in enumerate(ids)]


def test_select_keeps_fused_order_threshold_and_top_k() -> None:
    rels = {"a": 0.9, "b": 0.1, "c": 0.5, "d": 0.7}
    kept = select(fused("a", "b", "c", "d"), rels, top_k=2, threshold=0.3)
    assert [(f.chunk_id, r) for f, r in kept] == [("a", 0.9), ("c", 0.5)]


def test_select_threshold_is_inclusive_and_missing_relevance_is_zero() -> None:
    kept = select(fused("a", "b"), {"a": 0.3}, top_k=5, threshold=0.3)
    assert [f.chunk_id for f, _ in kept] == ["a"]
    assert [f.chunk_id for f, _ in select(fused("a", "b"), {}, top_k=5, threshold=0.0)] == ["a", "b"]


def test_the_floor_comes_down_near_a_best_candidate_that_only_just_reaches_it() -> None:
    # A long chat message: the best fused candidate holds 0.14 of its terms, a worse one 0.17.
    rels = {"best": 0.14, "worse": 0.17, "noise": 0.05}
    floor = chunk_floor(0.15, rels.values(), NEAR_BEST)
    assert floor == pytest.approx(NEAR_BEST * 0.17)
    kept = select(fused("best", "worse", "noise"), rels, top_k=5, threshold=floor)
    assert [f.chunk_id for f, _ in kept] == ["best", "worse"]
    assert chunk_floor(0.15, [0.6, 0.1], NEAR_BEST) == 0.15  # a good candidate: the floor stands
    assert chunk_floor(0.15, [0.14, 0.1], NEAR_BEST) == 0.15  # none reaches it: none is kept
    assert chunk_floor(0.15, [0.16], 0.0) == 0.15  # an asker's own threshold is a hard floor
    assert chunk_floor(0.15, [], NEAR_BEST) == 0.15
    assert chunk_floor(0.15, [0.15], NEAR_BEST) == pytest.approx(NEAR_BEST * 0.15)  # its lowest
    assert chunk_floor(0.15, [0.2142857], NEAR_BEST) <= NEAR_BEST * 0.2142857  # rounded down


def test_best_threshold_separates_and_prefers_the_widest_margin() -> None:
    threshold, accuracy = best_threshold([0.6, 0.7, 0.9], [0.1, 0.2])
    assert accuracy == 1.0
    assert threshold == pytest.approx(0.4)


def test_best_threshold_with_overlap() -> None:
    threshold, accuracy = best_threshold([0.5, 0.8], [0.1, 0.6])
    assert accuracy == pytest.approx(0.75)
    assert 0.1 < threshold <= 0.8


def test_best_threshold_needs_both_groups() -> None:
    with pytest.raises(ValueError):
        best_threshold([], [0.1])


def test_a_heading_naming_the_distinctive_terms_moves_up() -> None:
    from core.retrieval.ranking import Fused, title_boost

    def cand(cid: str, score: float) -> Fused:
        return Fused(chunk_id=cid, fused=score, dense=None, sparse=None, payload={})

    fused = [cand("side-by-side", 0.92), cand("install-ubuntu", 0.80), cand("other", 0.79)]
    # term 1 = "gazebo" (in every page: weight 0.1), 2 = "install", 3 = "ubuntu" (rare: 2.0)
    weights = {1: 0.1, 2: 1.0, 3: 2.0}
    headings = {"side-by-side": frozenset({1, 2}), "install-ubuntu": frozenset({2, 3}), "other": frozenset()}
    order = title_boost(fused, frozenset({1, 2, 3}), headings, weights.__getitem__)
    assert [f.chunk_id for f in order] == ["install-ubuntu", "side-by-side", "other"]
    assert [f.fused for f in order] == [0.80, 0.92, 0.79]  # scores are not changed
    assert title_boost(fused, frozenset(), headings, weights.__getitem__) == fused


# ------------------------------------------------------------------ changelog entries


@pytest.mark.parametrize(("section", "changelog"), [
    ("Release Notes > 0.51.0 (2020-03-01)", True),
    ("Release Notes > 0.51.0 (2020-03-01) > Fixes", True),
    ("Changelog > v2.1", True),
    ("Changelog > 1.2.0 - 2024-01-02 > Added", True),
    ("Version 3.0", True),
    ("Module 1 > 1.1.7 Running Your First Simulation", False),  # a numbered chapter
    ("Release Notes > Gazebo Sim 10.0.0", False),  # a feature page naming its release
    ("Install > Python 3.12 or newer", False),
    ("Changelog > [1.0.0] - 2017-06-20 > Added", True),  # Keep a Changelog
    ("Notes > Version 1.2 \u2014 2024-05-01", True),
    ("Changelog > 0.4.0-beta.1", True),
    ("Guide > 2.1", False),  # a section number
    ("Changelog > pytest 9.1.1 (2026-06-19) > Bug fixes", True),  # towncrier: the name, then the version
    ("Changelog > pytest 8.0.0rc1 (2024-01-06)", True),
    ("Changelog > my-plugin 0.23.0 (2023-12-03)", True),
    ("mytool-2.3.5: bug fixes and little improvements", True),  # a release announcement
    ("Releases > Django 4.2 release notes", True),
    ("v1.2.3 - Bug fixes", True),
    ("1.2.3 (2024-01-01): Bug fixes", True),
    ("Chapter 2 > 1.2.3: Setup", False),  # a numbered chapter with a colon
    ("Chapter 1.2.3: Setup", False),
    ("Lab 1.1.2 - Intro", False),
    ("Exercise 2.3.1: Morphology", False),
    ("Guide > Python 3.12.1 support", False),
    ("Install > Ubuntu 22.04 (Jammy Jellyfish)", False),  # what the page is about, not a release
    ("Install > Python 3.10.0", False),
    ("Protocols > HTTP 1.1 (RFC 9112)", False),
    ("Security > OAuth 2.0 (PKCE)", False),
    ("Release notes > Scrapy 0.14 > New features and settings", True),  # undated, on a release page
    ("Scrapy history > Scrapy 0.12", True),
    ("History, design and future > FastAPI 0.1", False),  # no page of releases
    ("Install > Python 3.10", False),
    # A page titled as one release's notes; a version heading with a space before its "RC".
    ("What's new in Celery 5.6 (Recovery) > Exception Handling Memory Leak", True),
    ("What\u2019s New in mytool 4.0 > Upgrading", True),
    ("Release notes for mytool v2.1.0 > Fixes", True),
    ("Changes in version 3.0", True),
    ("Change history > 4.3.0 RC1", True),
    ("What's new in the editor > Tabs", False),
    ("Upgrading to mytool 2.0 > Steps", False),
    ("Changes in behaviour > Python 3.12 support", False),
    ("Changes in behaviour since 3.0", False), ("Release notes for Ubuntu 22.04 users > Install", False),
    ("Changes for Python 3.12 compatibility > Steps", False),
    # Right under a page of releases: short releases merged into one chunk lose their headings.
    ("Release History", True), ("Changelog", True), ("History, design and future", False),
    ("Installation", False), ("Chat history", False), ("Making changes", False),
    ("Publishing releases", False),
])
def test_a_changelog_entry_is_a_section_titled_by_a_version(section: str, changelog: bool) -> None:
    from core.retrieval.ranking import is_changelog

    assert is_changelog(section) is changelog


def test_changelog_entries_give_way_unless_the_question_asks_about_versions() -> None:
    from core.retrieval.ranking import without_changelog

    def cand(cid: str, section: str) -> Fused:
        return Fused(chunk_id=cid, fused=0.5, dense=None, sparse=None, payload={"section": section})

    fused = [cand("note", "Release Notes > 0.23.0 (2019-05-21)"), cand("guide", "CORS > Use CORSMiddleware")]
    rels = {"note": 0.6, "guide": 0.4}
    how = "how do i allow cookies from another origin"
    assert [f.chunk_id for f in without_changelog(fused, how, rels, threshold=0.15)] == ["guide"]
    # Asked about versions, or nothing else is relevant enough: the changelog stays.
    for question in ("which version added cors credentials", "what changed in 0.23 for cors"):
        assert without_changelog(fused, question, rels, threshold=0.15) == fused
    assert without_changelog(fused, how, {"note": 0.6, "guide": 0.1}, threshold=0.15) == fused
    # A changelog entry that alone answers is not replaced by a page sharing a word with the question.
    assert without_changelog(fused, how, {"note": 0.9, "guide": 0.2}, threshold=0.15) == fused


def test_a_changelog_page_with_no_heading_of_its_own_is_named_by_its_title() -> None:
    from core.retrieval.ranking import without_changelog

    def cand(cid: str, title: str, section: str) -> Fused:
        return Fused(cid, 0.5, None, None, {"title": title, "section": section})

    # "CHANGES.rst" that only includes its entries: no heading, so no section; its title says it.
    fused = [cand("note", "Changes", ""), cand("guide", "Combining", "Combining > Re-mapping paths")]
    how = "how do i merge the data files"
    rels = {"note": 0.6, "guide": 0.4}
    assert [f.chunk_id for f in without_changelog(fused, how, rels, threshold=0.15)] == ["guide"]
    # A page titled otherwise, or a section that says what it is, decides as before.
    other = [cand("note", "Changes", "Changes > Combining"), fused[1]]
    assert without_changelog(other, how, rels, threshold=0.15) == other


def test_a_passage_repeated_on_a_print_all_page_is_kept_once_from_its_own_page() -> None:
    from core.retrieval.ranking import REPEAT_MIN_CHARS, without_repeats

    def cand(cid: str, content: str, index: int) -> Fused:
        return Fused(cid, 0.5, None, None, {"content": content, "chunk_index": index})

    passage = "Tuples can be destructured in a match. " * (REPEAT_MIN_CHARS // 30)
    gathered, other = cand("print", passage, 312), cand("other", "Closures capture. " * 20, 0)
    own = cand("page", passage.replace(". ", ".\n"), 1)  # the same words, laid out otherwise
    # The page's own copy takes the place of the print page's better ranked one.
    assert [f.chunk_id for f in without_repeats([gathered, other, own])] == ["page", "other"]
    assert [f.chunk_id for f in without_repeats([own, gathered])] == ["page"]
    # A passage holding another is not a copy of it; short passages found twice may be two pages'
    # own words: all stay.
    longer = cand("longer", f"{passage} And more.", 0)
    assert without_repeats([gathered, longer]) == [gathered, longer]
    short = [cand("a", "See also: the guide.", 3), cand("b", "See also: the guide.", 0)]
    assert without_repeats(short) == short
