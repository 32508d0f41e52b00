"""The answerability decision: top relevances, the best cosine, and how scattered the pages are."""

from __future__ import annotations

from core.retrieval.answerability import judge


def test_probability_grows_with_relevance_and_cosine() -> None:
    low = judge(relevances=[0.1, 0.1, 0.05], cosine=0.25, pages=5)
    mid = judge(relevances=[0.4, 0.35, 0.3], cosine=0.45, pages=2)
    high = judge(relevances=[0.8, 0.7, 0.7], cosine=0.6, pages=1)
    assert low.probability < 0.5 <= mid.probability < high.probability


def test_results_scattered_over_many_pages_count_against() -> None:
    focused = judge(relevances=[0.3, 0.3, 0.3], cosine=0.4, pages=1)
    scattered = judge(relevances=[0.3, 0.3, 0.3], cosine=0.4, pages=5)
    assert scattered.probability < focused.probability
    assert "5 page(s)" in scattered.summary() and "p=" in scattered.summary()


def test_only_the_first_three_relevances_count_and_none_means_no() -> None:
    three = judge(relevances=[0.5, 0.4, 0.3], cosine=0.4, pages=2)
    more = judge(relevances=[0.5, 0.4, 0.3, 0.0, 0.0], cosine=0.4, pages=2)
    assert three == more and three.relevance == 0.4
    assert judge(relevances=[], cosine=0.9, pages=0).probability == 0.0
