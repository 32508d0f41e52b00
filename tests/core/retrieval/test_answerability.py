"""The answerability decision: relevance, cosine and names the collection never uses."""

from __future__ import annotations

from core.retrieval.answerability import judge, unknown_names
from core.retrieval.lexicon import Lexicon

LEXICON = Lexicon(chunks=20, words={"gazebo": 9, "sdf": 6, "world": 8, "gravity": 2, "install": 5})


def test_names_unknown_to_the_docs_and_to_english_are_reported() -> None:
    assert unknown_names("can i use mujoco instead of gazebo?", LEXICON) == ["mujoco"]
    # English words the docs do not use ("laptop") and known words are not names.
    assert unknown_names("install gazebo on my laptop", LEXICON) == []


def test_no_lexicon_names_nothing() -> None:
    assert unknown_names("mujoco kubernetes quicksort", Lexicon()) == []


def test_probability_grows_with_relevance_and_cosine() -> None:
    low = judge(relevance=0.1, cosine=0.25, names=[])
    mid = judge(relevance=0.3, cosine=0.4, names=[])
    high = judge(relevance=0.6, cosine=0.6, names=[])
    assert low.probability < 0.5 <= mid.probability < high.probability


def test_an_unknown_name_lowers_the_probability() -> None:
    plain = judge(relevance=0.3, cosine=0.4, names=[])
    named = judge(relevance=0.3, cosine=0.4, names=["mujoco"])
    assert named.probability < plain.probability
    assert "mujoco" in named.summary() and "p=" in named.summary()
