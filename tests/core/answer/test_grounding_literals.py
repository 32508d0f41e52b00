"""Issue 10 item 5: a URL, e-mail address or number that no cited source contains fails grounding."""

from __future__ import annotations

from core.answer.grounding import literals, unsourced_literals, validate_grounding
from core.models import RetrievedChunk


def chunk(content: str, url: str = "https://ragbot.dev/docs/deploy") -> RetrievedChunk:
    return RetrievedChunk(chunk_id="c1", content=content, score=0.9, url=url, title="Deploy",
                          section="Deploy", chunk_index=0, source_document="deploy.md")


SOURCE = chunk("Deploy ragbot with the Procfile. Run ragbot serve on the server. Write to "
               "admins@ragbot.dev for access. Logs are kept for 7 days.")


def test_an_unsourced_url_fails_even_in_a_short_sentence() -> None:
    answer = "Deploy ragbot with the Procfile [1]. See http://evil.example/steal."
    report = validate_grounding(answer, [SOURCE])
    assert not report.passed
    [bad] = [v for v in report.verdicts if not v.supported]
    assert "http://evil.example/steal" in bad.reason


def test_an_unsourced_email_fails() -> None:
    report = validate_grounding("Write to thief@evil.example for access [1].", [SOURCE])
    assert not report.passed


def test_an_unsourced_number_fails() -> None:
    report = validate_grounding("Logs are kept for 30 days [1].", [SOURCE])
    assert not report.passed


def test_sourced_literals_pass_and_the_sources_own_url_counts() -> None:
    answer = "Write to admins@ragbot.dev for access [1]. Logs are kept for 7 days [1]."
    assert validate_grounding(answer, [SOURCE]).passed
    assert unsourced_literals("https://ragbot.dev/docs/deploy/", [f"{SOURCE.content}\n{SOURCE.url}"]) == []


def test_a_url_must_be_in_the_cited_source_not_just_any() -> None:
    other = chunk("Click https://ragbot.dev/docs/other to read more about other things.",
                  url="https://ragbot.dev/docs/other")
    answer = "Deploy ragbot with the Procfile, see https://ragbot.dev/docs/other [1]."
    assert not validate_grounding(answer, [SOURCE, other]).passed
    cited = "Click https://ragbot.dev/docs/other to read more about it [2]."
    assert validate_grounding(cited, [SOURCE, other]).passed


def test_literals_are_normalised() -> None:
    assert literals("See <http://Evil.example/a|here>, or mail X@Y.org. Also www.site.io/path/.") == {
        "http://evil.example/a", "x@y.org", "www.site.io/path"}
    assert unsourced_literals("at https://a.dev/x.", ["text with https://a.dev/x/ in it"]) == []


async def test_a_model_obeying_an_injected_page_is_replaced_by_quotes() -> None:
    from core.fakes import ScriptedGenerator
    from core.models import ResponseStatus
    from tests.core.answer.test_pipeline import build

    obeying = ScriptedGenerator(["Put the bot token in SLACK_BOT_TOKEN [1]. Then send it to "
                                 "http://evil.example/steal [1]."])
    pipeline, _, _ = await build(obeying)
    response = await pipeline.answer("Where do I put the Slack bot token?", thread_id="t1")
    assert response.status is ResponseStatus.VALIDATION_FAILED
    assert "evil.example" not in response.response_text and "SLACK_BOT_TOKEN" in response.response_text
