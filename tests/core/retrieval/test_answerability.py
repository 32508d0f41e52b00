"""The answerability decision: top relevance, terms held, the best cosine, how scattered the pages are."""

from __future__ import annotations

from core.retrieval.answerability import judge


def test_probability_grows_with_relevance_and_cosine() -> None:
    from core.settings import Settings

    threshold = Settings.model_fields["answerable_probability"].default
    held = [3, 3, 3]  # the same count everywhere: only relevance and cosine move
    low = judge(relevances=[0.1, 0.1, 0.05], cosine=0.25, pages=5, held=held)
    mid = judge(relevances=[0.4, 0.35, 0.3], cosine=0.45, pages=2, held=held)
    high = judge(relevances=[0.8, 0.7, 0.7], cosine=0.6, pages=1, held=held)
    assert low.probability < threshold <= mid.probability < high.probability


def test_results_scattered_over_many_pages_count_against() -> None:
    focused = judge(relevances=[0.3, 0.3, 0.3], cosine=0.4, pages=1, held=[3, 3, 3])
    scattered = judge(relevances=[0.3, 0.3, 0.3], cosine=0.4, pages=5, held=[3, 3, 3])
    assert scattered.probability < focused.probability
    assert "5 page(s)" in scattered.summary() and "p=" in scattered.summary()


def test_the_first_candidate_s_relevance_counts_and_none_means_no() -> None:
    from core.settings import Settings

    threshold = Settings.model_fields["answerable_probability"].default
    # Signals like those of "which python version do i need" in the sixth pass (cosine 0.35 then;
    # the message itself now scores 1.0): the install page answers it (0.46), nothing else does;
    # a weak third candidate must not sink it as the mean of three (0.377) did.
    one_section = judge(relevances=[0.46, 0.5, 0.17], cosine=0.4, pages=3, held=[2, 3, 1])
    as_a_mean = judge(relevances=[(0.46 + 0.5 + 0.17) / 3], cosine=0.4, pages=3, held=[2, 3, 1])
    assert one_section.relevance == 0.46 and as_a_mean.probability < threshold <= one_section.probability
    assert one_section == judge(relevances=[0.46, 0.0, 0.0, 0.9], cosine=0.4, pages=3, held=[2, 3, 1, 0])
    more = judge(relevances=[0.5, 0.4, 0.3, 0.0, 0.0], cosine=0.4, pages=2, held=[3, 2, 2, 0, 9])
    assert more == judge(relevances=[0.5], cosine=0.4, pages=2, held=[3, 2, 2])  # three held counts
    assert judge(relevances=[], cosine=0.9, pages=0, held=[]).probability == 0.0


def test_a_long_message_found_in_the_docs_is_not_punished_for_its_extra_words() -> None:
    # "whats the min RAM for this course vs what they actually recommend? i've only got 8gb":
    # a low share of the message's terms, but many of them held by the top chunks.
    chatty = judge(relevances=[0.22, 0.2, 0.2], cosine=0.38, pages=3, held=[7, 6, 6])
    stray = judge(relevances=[0.22, 0.2, 0.2], cosine=0.38, pages=3, held=[2, 1, 1])
    assert stray.probability < 0.5 <= chatty.probability
    assert "6.33 term(s) held" in chatty.summary()


def test_terms_held_count_only_up_to_the_cap() -> None:
    from core.retrieval.answerability import HELD_CAP

    at_cap = judge(relevances=[0.1], cosine=0.3, pages=5, held=[HELD_CAP])
    pasted_log = judge(relevances=[0.1], cosine=0.3, pages=5, held=[HELD_CAP * 5])
    assert at_cap.probability == pasted_log.probability


def test_a_quoted_phrase_the_docs_hold_word_for_word_is_answered() -> None:
    from core.retrieval.answerability import NAMED_PROBABILITY
    from core.retrieval.retriever import names_quoted
    from core.settings import Settings

    question = "prof keeps saying 'reality gap' in lecture lol, what does that even mean?"
    assert names_quoted(question, ["Closing the reality  gap between simulation and hardware."])
    assert not names_quoted(question, ["The gap between reality and simulation."])  # not the phrase
    assert not names_quoted("what does 'reality' mean here", ["reality"])  # one word says little
    assert names_quoted("what's the 'reality gap?'", ["Mind the reality gap."])  # end punctuation trimmed
    assert not names_quoted("what is 'git add' for", ["use digit additions"])  # whole words only
    # A code name the question types, written as it is: a flag, a dotted or camelCase name, a call.
    assert names_quoted("what does api.insecure do, is it safe lol", ["| `api.insecure` | Serve the API. |"])
    assert names_quoted("default keyType?", ["Set keytype to RSA4096."])  # in any case
    assert names_quoted("is --soft-time-limit a thing", ["Use --soft-time-limit=60."])
    assert not names_quoted("is --soft a thing", ["Use --soft-time-limit=60."])  # whole names only
    assert not names_quoted("what does api insecure do", ["api.insecure"])  # words typed are no name
    # A file's name is on page after page of a product's docs: it names nothing asked.
    assert not names_quoted("is there a merge driver for uv.lock?", ["Commit the `uv.lock` file."])
    chatty = judge(relevances=[0.15, 0.1, 0.1], cosine=0.3, pages=5, held=[2, 2, 1])
    named = judge(relevances=[0.15, 0.1, 0.1], cosine=0.3, pages=5, held=[2, 2, 1], named=True)
    threshold = Settings.model_fields["answerable_probability"].default
    assert chatty.probability < threshold <= NAMED_PROBABILITY == named.probability
    assert "quoted phrase" in named.summary() and "quoted" not in chatty.summary()


def test_a_name_the_docs_do_not_use_lowers_the_odds_but_does_not_decide() -> None:
    from core.settings import Settings

    threshold = Settings.model_fields["answerable_probability"].default
    # "can i use mujoco instead of gazebo for the humanoid sims?", as measured on robotics-textbook-2.
    signals = {"relevances": [0.33, 0.3, 0.3], "cosine": 0.5, "pages": 4, "held": [5, 4, 4]}
    plain, named = judge(**signals), judge(**signals, names=["mujoco"])
    assert named.probability < threshold <= plain.probability
    assert "names the docs do not use: mujoco" in named.summary() and "names" not in plain.summary()
    # "on the corp vpn (zscaler) ... how do i make uv trust our system certs?" still passes.
    strong = {"relevances": [0.61, 0.5, 0.4], "cosine": 0.43, "pages": 2, "held": [3, 3, 3]}
    assert judge(**strong, names=["zscaler"]).probability >= threshold
