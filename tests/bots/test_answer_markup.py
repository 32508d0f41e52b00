"""Markdown quoted from docs as each platform shows it: Slack mrkdwn, terminal plain text."""

from __future__ import annotations

from bots.slack.format import escape, markdown_to_mrkdwn


def test_markdown_links_become_slack_links() -> None:
    text = markdown_to_mrkdwn(escape("See [the guide](https://x.example/a?b=1&c=2) now."))
    assert text == "See <https://x.example/a?b=1&amp;c=2|the guide> now."


def test_bold_and_fence_language_tags_are_converted() -> None:
    text = markdown_to_mrkdwn(escape("**Note:** run it:\n\n```bash\nbrew install gz-jetty\n```"))
    assert text == "*Note:* run it:\n\n```\nbrew install gz-jetty\n```"


def test_italics_and_bullets_read_in_slack_as_in_markdown() -> None:
    """Slack reads ``*x*`` as bold and shows a list's ``*`` as typed; code keeps its asterisks."""
    text = markdown_to_mrkdwn(escape(
        "A *path operation* is **not** `a*b*c`, 2 * 3 * 4.\n\n* *Swagger UI*: at `/docs`\n  - nested\n\n"
        "```py\nx = a * b * c\n* not an item\n```"))
    assert text == ("A _path operation_ is *not* `a*b*c`, 2 * 3 * 4.\n\n\u2022 _Swagger UI_: at `/docs`\n"
                    "  \u2022 nested\n\n```\nx = a * b * c\n* not an item\n```")
    assert markdown_to_mrkdwn(escape("`` `*args*` `` and *it*\n* * *")) == "`` `*args*` `` and _it_\n* * *"
    assert markdown_to_mrkdwn(escape("**`--frozen`** is *it*")) == "*`--frozen`* is _it_"  # bold wraps code


def test_every_fence_is_one_slack_knows() -> None:
    """A four-backtick fence showing a fence, and a tilde fence, read as code in Slack."""
    quoted = "Write:\n\n````md\n```py\nx = 1\n```\n````\n\n~~~sh\nls\n~~~\n\n  ```toml\n  a = 1\n  ```"
    text = markdown_to_mrkdwn(escape(quoted))
    assert text == ("Write:\n\n```\n`\u200b``py\nx = 1\n`\u200b``\n```\n\n```\nls\n```\n\n"
                    "  ```\n  a = 1\n  ```")


def test_relative_links_and_markup_stay_inert() -> None:
    text = markdown_to_mrkdwn(escape("[Slack](slack.md) <!channel>"))
    assert text == "[Slack](slack.md) &lt;!channel&gt;"


def test_the_terminal_prints_plain_text() -> None:
    from bots.terminal import markdown_to_plain

    text = "Run it with **brew**, see [the guide](https://x.example/g): [1]\n\n```bash\nbrew install gz\n```"
    plain = "Run it with brew, see the guide (https://x.example/g): [1]\n\n    brew install gz"
    assert markdown_to_plain(text) == plain


def test_markdown_escapes_are_read_outside_code() -> None:
    """Docs escape what Markdown would read as markup ("<name\\>"): only Discord reads escapes.

    Slack has no escapes: one of its own markup characters keeps the backslash, or "*not*" would be bold.
    """
    from bots.terminal import markdown_to_plain

    quoted = "Use `--filter <selector\\>` or --filter <name\\>, \\*not\\* bold, a\\_b; `\\n` stays."
    plain = "Use `--filter <selector\\>` or --filter <name>, *not* bold, a_b; `\\n` stays."
    assert markdown_to_plain(quoted) == plain
    assert markdown_to_mrkdwn(escape(quoted)) == (
        "Use `--filter &lt;selector\\&gt;` or --filter &lt;name&gt;, \\*not\\* bold, a_b; `\\n` stays.")


def test_an_escaped_underscore_in_a_word_and_an_escaped_link_read_as_text() -> None:
    from bots.terminal import markdown_to_plain

    quoted = "Set MAX\\_RETRIES, not \\_this\\_; see \\[docs\\](https://x.example/d)."
    assert markdown_to_mrkdwn(escape(quoted)) == "Set MAX_RETRIES, not \\_this\\_; see [docs](https://x.example/d)."
    assert markdown_to_plain(quoted) == "Set MAX_RETRIES, not _this_; see [docs](https://x.example/d)."


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


TABLE = ("Its keys: [1]\n\n| Key | Meaning |\n| --- | --- |\n| `type` | the [type](https://x.example/t) |\n"
         "| `loc` | a \\| b |")


def test_a_narrow_table_is_aligned_code_and_a_wide_one_a_list() -> None:
    from bots.chat.tables import ALIGNED_WIDTH, tables_for_chat

    assert tables_for_chat(TABLE) == (
        "Its keys: [1]\n\n```\nKey   Meaning\n----  --------\ntype  the type\nloc   a | b\n```")
    wide = "| Name | What |\n|---|---|\n| `a` | " + "x " * ALIGNED_WIDTH + "|\n| b | |"
    assert tables_for_chat(wide) == f"- a (What: {'x ' * (ALIGNED_WIDTH - 1)}x)\n- b"
    fenced = "````md\n```\n| a | b |\n|---|---|\n````"
    assert tables_for_chat(fenced) == fenced  # code shows what it shows
    assert tables_for_chat("| a | b |\n|---|---|\n| | " + "y " * ALIGNED_WIDTH + "|") == (
        f"- b: {'y ' * (ALIGNED_WIDTH - 1)}y")  # no first cell: its row is named by the others
    assert tables_for_chat("a | b\n" + " " * 20_000 + "x") == "a | b\n" + " " * 20_000 + "x"  # linear
    one_row = '| Default | CLI Override |\n|---|---|\n| `"as-needed"` | ' + "z " * ALIGNED_WIDTH + "|"
    wide_cell = "z " * (ALIGNED_WIDTH - 1) + "z"
    assert tables_for_chat(one_row) == f'- Default: "as-needed"\n- CLI Override: {wide_cell}'
    headerless = "| | |\n|---|---|\n| rule | the URL rule |\n| endpoint | its name |"
    assert tables_for_chat(headerless) == "```\nrule      the URL rule\nendpoint  its name\n```"


def test_slack_and_discord_show_a_table_as_aligned_code() -> None:
    from bots.discord.format import answer_embeds
    from bots.slack.format import answer_message
    from core.models import AgentResponse, ResponseStatus, RetrievedChunk, Source

    chunk = RetrievedChunk(chunk_id="c1", content="x", score=0.9, url="https://x.example/p", title="Errors",
                           chunk_index=0, source_document="errors.md")
    response = AgentResponse(
        query_id="q1", response_text=TABLE, retrieved_chunks=[chunk], status=ResponseStatus.ANSWERED,
        confidence_score=0.9,
        sources=[Source(index=1, chunk_id="c1", url=chunk.url, title="Errors", chunk_index=0, score=0.9)])
    slack = answer_message(response)["blocks"][0]["text"]["text"]
    assert "```\nKey   Meaning\n" in slack and "| --- |" not in slack
    discord = answer_embeds(response, question="what keys?")[0].description or ""
    assert "```\nKey   Meaning\n" in discord and "| --- |" not in discord


def test_slack_numbers_a_list_written_one_one_one() -> None:
    code = "```\n1. not a list\n1. here\n```"
    text = f"1. Install\n1. Configure\n   1. a file\n   1. another\n1. Run\n\n{code}\n\nNext:\n\n1. Again"
    assert markdown_to_mrkdwn(escape(text)) == (
        f"1. Install\n2. Configure\n   1. a file\n   2. another\n3. Run\n\n{code}\n\nNext:\n\n1. Again")


def test_slack_and_the_terminal_list_uncited_sources_as_related_pages() -> None:
    from bots.slack.format import sources_text
    from bots.terminal import format_answer
    from core.models import AgentResponse, ResponseStatus, RetrievedChunk, Source

    chunks = [RetrievedChunk(chunk_id=f"c{i}", content="x", score=0.9, url=f"https://x.example/p{i}",
                             title=f"Page {i}", chunk_index=0, source_document=f"p{i}.md") for i in (1, 2)]
    sources = [Source(index=i, chunk_id=c.chunk_id, url=c.url, title=c.title, chunk_index=0, score=0.9)
               for i, c in enumerate(chunks, start=1)]
    response = AgentResponse(query_id="q1", response_text="Do it. [1]", retrieved_chunks=chunks,
                             status=ResponseStatus.ANSWERED, confidence_score=0.9, sources=sources)
    assert sources_text(sources[:1], sources[1:]) == (
        "*Sources*\n[1] <https://x.example/p1|Page 1>\n*Related:* <https://x.example/p2|Page 2>")
    assert format_answer(response).endswith(
        "Sources:\n  [1] Page 1\n      https://x.example/p1\n\nRelated:\n  - Page 2\n      https://x.example/p2")


def test_slack_keeps_the_numbers_of_lists_numbered_by_their_authors() -> None:
    text = "1. Open the dashboard [1]\n2. Click New\n\n1. Export it [2]\n2. Log in\n\n3. Set it [3]\n\n1. Go"
    assert markdown_to_mrkdwn(escape(text)) == text


def test_slack_sources_stay_within_a_text_object_with_related_pages() -> None:
    from bots.slack.format import SECTION_TEXT_LIMIT, sources_text
    from core.models import Source

    sources = [Source(index=i, chunk_id=f"c{i}", url=f"https://x.example/{'p' * 60}{i}", title="T" * 120,
                      section="S" * 80, chunk_index=0, score=0.9) for i in range(1, 21)]
    assert len(sources_text(sources[:19], sources[19:])) <= SECTION_TEXT_LIMIT


def test_the_pages_a_not_found_reply_lists_are_related_pages_on_every_platform() -> None:
    import time

    from bots.discord.format import answer_embeds
    from bots.slack.format import answer_message
    from bots.terminal import format_answer
    from core.answer.responses import CLOSEST_PAGES, CLOSEST_TEXT, NOT_FOUND_TEXT, not_found
    from core.models import RetrievedChunk, UserQuery

    def chunk(url: str, section: str) -> RetrievedChunk:
        return RetrievedChunk(chunk_id=f"{url}#{section}", content="x", score=0.3, url=url, title="Guide",
                              section=section, chunk_index=0, source_document="guide.md")

    closest = [chunk("https://d.example/Foo_(bar)", "Guide > [report] fail_under"),
               chunk("https://d.example/Foo_(bar)", "Guide > Other"),
               chunk("file:///srv/docs/b.md", "Guide > B"), chunk("https://d.example/c", "Guide > C"),
               chunk("https://d.example/d", "Guide > D")]
    query = UserQuery(query_text="how do i set the threshold?", user_context="t")
    response = not_found(query, time.perf_counter(), ranking_algorithm="x", closest=closest)
    # One source per page, none cited; the text says what they are.
    assert response.response_text == CLOSEST_TEXT and len(response.sources) == CLOSEST_PAGES
    slack = str(answer_message(response)["blocks"])
    assert "Related" in slack and "<https://d.example/Foo_(bar)|Guide>" in slack and "[1]" not in slack
    terminal = format_answer(response)
    assert "Related:" in terminal and "Sources:" not in terminal and "file:///srv/docs/b.md" in terminal
    [embed] = answer_embeds(response, question="how do i set the threshold?")
    assert [f.name for f in embed.fields] == ["Related"]
    plain = not_found(query, time.perf_counter())
    assert plain.response_text == NOT_FOUND_TEXT and plain.sources == []
