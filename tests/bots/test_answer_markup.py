"""Markdown quoted from docs as each platform shows it: Slack mrkdwn, terminal plain text."""

from __future__ import annotations

from bots.slack.format import escape, markdown_to_mrkdwn


def test_markdown_links_become_slack_links() -> None:
    text = markdown_to_mrkdwn(escape("See [the guide](https://x.example/a?b=1&c=2) now."))
    assert text == "See <https://x.example/a?b=1&amp;c=2|the guide> now."


def test_bold_and_fence_language_tags_are_converted() -> None:
    text = markdown_to_mrkdwn(escape("**Note:** run it:\n\n```bash\nbrew install gz-jetty\n```"))
    assert text == "*Note:* run it:\n\n```\nbrew install gz-jetty\n```"


def test_relative_links_and_markup_stay_inert() -> None:
    text = markdown_to_mrkdwn(escape("[Slack](slack.md) <!channel>"))
    assert text == "[Slack](slack.md) &lt;!channel&gt;"


def test_the_terminal_prints_plain_text() -> None:
    from bots.terminal import markdown_to_plain

    text = "Run it with **brew**, see [the guide](https://x.example/g): [1]\n\n```bash\nbrew install gz\n```"
    plain = "Run it with brew, see the guide (https://x.example/g): [1]\n\n    brew install gz"
    assert markdown_to_plain(text) == plain


def test_the_terminal_sets_a_notice_apart_from_a_quoted_command() -> None:
    from bots.terminal import format_answer
    from core.models import AgentResponse, ResponseStatus, RetrievedChunk, Source

    chunk = RetrievedChunk(chunk_id="c1", content="x", score=0.3, url="https://x.example/p", title="Proxy",
                           chunk_index=0, source_document="proxy.md")
    response = AgentResponse(
        query_id="q1", response_text="Run it so: [1]\n\n```\nserve --trust\n```", retrieved_chunks=[chunk],
        status=ResponseStatus.ANSWERED, confidence_score=0.2,
        sources=[Source(index=1, chunk_id="c1", url=chunk.url, title="Proxy", chunk_index=0, score=0.3)])
    assert "    serve --trust\n\n(Low confidence" in format_answer(response)
