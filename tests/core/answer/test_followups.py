"""Follow-ups: the thread's subject travels with a follow-up; its own words must still be found."""

from __future__ import annotations

from core.answer.followups import own_support, search_query_for
from core.models import ConversationTurn, TurnRole


def turn(role: TurnRole, text: str) -> ConversationTurn:
    return ConversationTurn(thread_id="t1", role=role, content=text)


HISTORY = [turn(TurnRole.USER, "how do I install gazebo on ubuntu?"), turn(TurnRole.ASSISTANT, "Run apt ...")]


def test_a_short_or_pointing_follow_up_borrows_the_last_question() -> None:
    expected = "how do I install gazebo on ubuntu? and on windows?"
    assert search_query_for("and on windows?", HISTORY) == expected
    long_but_pointing = "ok so what do I do when it says the package cannot be found at all"
    assert search_query_for(long_but_pointing, HISTORY).startswith("how do I install gazebo")


def test_a_long_self_contained_question_or_a_first_message_is_searched_as_it_is() -> None:
    standalone = "how do I record a simulation log and play the recorded log back later on?"
    assert search_query_for(standalone, HISTORY) == standalone
    assert search_query_for("and on windows?", []) == "and on windows?"


def test_there_is_and_that_after_say_do_not_point_back() -> None:
    # "is there a way" and "tell everyone that" name nothing earlier in the thread.
    for standalone in ("is there a way to run my own script after every sync, like a hook?",
                       "can you tell the whole team that the build server is down today?"):
        assert search_query_for(standalone, HISTORY) == standalone
    pointing = "is there a way to make that work on the old laptop of mine?"
    assert search_query_for(pointing, HISTORY).startswith("how do I install gazebo")


def test_own_support_weighs_a_follow_up_s_own_terms_by_rarity() -> None:
    weights = {1: 3.0, 2: 1.0, 3: 0.5}

    def idf(term: int) -> float:
        return weights.get(term, 0.0)

    assert own_support(frozenset({1, 2}), [frozenset({1}), frozenset({5})], idf) == 0.75
    assert own_support(frozenset({2}), [frozenset({1})], idf) == 0.0
    assert own_support(frozenset(), [frozenset({1})], idf) == 1.0
    assert own_support(frozenset({9}), [], idf) == 1.0  # nothing weighted: no opinion
