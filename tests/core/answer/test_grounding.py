"""Grounding validation: unit behaviour and accuracy on the labelled cases."""

from __future__ import annotations

import json
import pathlib
from collections.abc import Callable

import pytest

from core.answer.grounding import (
    DEFAULT_THRESHOLDS,
    GroundingReport,
    is_fact_sentence,
    validate_grounding,
    wordllama_similarity,
)
from core.models import RetrievedChunk
from tests.support.paths import TEST_DATA

CASES = TEST_DATA / "grounding_cases.jsonl"
#: The defaults score 0.90 on both methods (bench/grounding.py); the floor leaves room
#: for small tokeniser changes without letting the validator regress to guessing.
ACCURACY_FLOOR = 0.85


def chunk(i: int, content: str) -> RetrievedChunk:
    return RetrievedChunk(chunk_id=f"c{i}", content=content, score=0.8, url=f"https://docs.example/{i}",
                          title=f"T{i}", chunk_index=i, source_document=f"d{i}.md")


GAZEBO = chunk(1, "Gazebo models rigid body physics, sensors and lighting so robots can be tested before "
                  "hardware exists. Its physics engine steps every 1 millisecond by default.")
LAUNCH = chunk(2, "A launch file starts several nodes at once and sets their parameters. Launch files are "
                  "usually written in Python.")


def load_cases() -> list[dict]:
    cases = []
    for line in CASES.read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        case["chunks"] = [chunk(i, c["content"]) for i, c in enumerate(case["chunks"])]
        cases.append(case)
    return cases


@pytest.fixture(scope="module")
def dense() -> Callable[[str, str], float]:
    try:
        import wordllama
        from wordllama import WordLlama

        model = WordLlama.load(config="l2_supercat", dim=256,
                               cache_dir=pathlib.Path(wordllama.__file__).parent, disable_download=True)
    except Exception as exc:  # the weights ship inside the package; skip if a build lacks them
        pytest.skip(f"WordLlama not loadable offline: {exc}")
    return wordllama_similarity(model)


def test_supported_answer_passes() -> None:
    report = validate_grounding("Gazebo simulates rigid body physics and sensors so robots can be tested "
                                "before the hardware exists [1].", [GAZEBO, LAUNCH])
    assert isinstance(report, GroundingReport)
    assert report.passed and report.grounding_confidence == 1.0
    assert report.validation.method == "ngram"
    assert report.validation.supported_sentences == 1


def test_invalid_citation_fails_and_is_listed() -> None:
    report = validate_grounding("Launch files are usually written in Python [2]. See also [7].",
                                [GAZEBO, LAUNCH])
    assert not report.passed
    assert report.validation.invalid_citations == [7]


def test_invented_number_is_unsupported() -> None:
    report = validate_grounding("The physics engine steps every 5 milliseconds by default [1].", [GAZEBO])
    assert not report.passed
    assert report.validation.unsupported == ["The physics engine steps every 5 milliseconds by default [1]."]
    assert "number" in report.verdicts[0].reason
    assert report.grounding_confidence == 0.0


def test_wrong_citation_is_unsupported_even_if_another_chunk_supports_it() -> None:
    report = validate_grounding("A launch file starts several nodes at once [1].", [GAZEBO, LAUNCH])
    assert not report.passed


def test_uncited_sentence_may_be_supported_by_any_chunk_or_user_context() -> None:
    assert validate_grounding("Launch files are usually written in Python.", [GAZEBO, LAUNCH]).passed
    answer = ("Your robot runs ROS 2 Jazzy on a Raspberry Pi 5, and launch files are usually "
              "written in Python [2].")
    report = validate_grounding(answer, [GAZEBO, LAUNCH],
                                user_context="My robot runs ROS 2 Jazzy on a Raspberry Pi 5.")
    assert report.passed
    without = validate_grounding(answer, [GAZEBO, LAUNCH])
    assert not without.passed


def test_questions_disclaimers_and_connectives_are_not_facts() -> None:
    report = validate_grounding(
        "Here is what I found. I could not find anything in the sources about ROS 1 bridges. "
        "Would you like more detail?", [GAZEBO])
    assert report.passed and report.grounding_confidence == 1.0
    assert not any(v.is_fact for v in report.verdicts)
    assert is_fact_sentence("Launch files start several nodes at once [2].")
    assert not is_fact_sentence("The documentation does not cover ROS 1 bridges.")


def test_confidence_is_share_of_supported_fact_sentences() -> None:
    report = validate_grounding(
        "A launch file starts several nodes at once and sets their parameters [2]. "
        "Launch files were invented by NASA in 1969 [2].", [GAZEBO, LAUNCH])
    assert report.grounding_confidence == pytest.approx(0.5)
    assert report.validation.supported_sentences == 1 and report.validation.unsupported_sentences == 1


def test_negation_flip_is_unsupported() -> None:
    assert not validate_grounding("Launch files are not written in Python [2].", [GAZEBO, LAUNCH]).passed


def test_empty_answer_and_no_chunks() -> None:
    assert validate_grounding("", []).passed
    assert not validate_grounding("Gazebo was released in 2004 [1].", []).passed


def accuracy(similarity: Callable[[str, str], float] | None) -> float:
    cases = load_cases()
    correct = 0
    for case in cases:
        report = validate_grounding(case["answer"], case["chunks"], user_context=case["user_context"],
                                    similarity=similarity, thresholds=DEFAULT_THRESHOLDS)
        correct += report.passed == (case["expected"] == "supported")
    return correct / len(cases)


def test_cases_file_is_balanced_and_large_enough() -> None:
    cases = load_cases()
    assert len(cases) >= 40
    assert {c["expected"] for c in cases} == {"supported", "unsupported"}
    assert len({c["id"] for c in cases}) == len(cases)


def test_ngram_accuracy_on_labelled_cases() -> None:
    assert accuracy(None) >= ACCURACY_FLOOR


def test_dense_accuracy_on_labelled_cases(dense: Callable[[str, str], float]) -> None:
    report = validate_grounding("Launch files are usually written in Python [1].", [LAUNCH], similarity=dense)
    assert report.validation.method == "ngram+dense"
    assert accuracy(dense) >= ACCURACY_FLOOR
