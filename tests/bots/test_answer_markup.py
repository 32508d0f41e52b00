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
