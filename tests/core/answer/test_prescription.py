"""An answer that retells the problem gets the page's step that acts on it (``core.answer.prescription``)."""

from __future__ import annotations

from core.answer.blocks import Block
from core.answer.excerpt import choose_excerpts
from core.answer.prescription import Reading, prescribes, prescription
from core.answer.units import Unit, quote_key, read_units
from core.models import RetrievedChunk

QUESTION = ("our gateway adds forwarding headers but the app builds links with the internal host. "
            "how do i fix it?")

#: The page describes the problem in the question's words, then gives the fix in few of them.
PROBLEM = (
    "A gateway in front of the app adds forwarding headers to every request, naming the public "
    "host and scheme the client used. The app does not read these headers by default, so it "
    "builds links with the internal host it listens on.\n\n"
    "That is a safe default: an app reachable without the gateway would otherwise believe any "
    "client that sends such headers itself."
)
FIX = "Run the server with `--trust-forwarded` so the app reads the forwarding headers of the gateway."


def chunk(n: int, content: str, *, page: int | None = None, score: float = 0.8) -> RetrievedChunk:
    page = n if page is None else page
    return RetrievedChunk(
        chunk_id=f"c{n}", content=content, score=score, url=f"https://docs.example/p{page}",
        title=f"Page {page}", section=f"Page {page} > Part {n}", chunk_index=n, source_document=f"p{page}.md",
    )


def reading(chunks: list[RetrievedChunk]) -> Reading:
    return Reading(per_chunk=read_units(chunks), urls=[c.url for c in chunks],
                   sections=[c.section for c in chunks])


def unit(text: str, *, kind: str = "para", asks: bool = False) -> Unit:
    return Unit(chunk=0, position=0, block=Block(kind, text),  # type: ignore[arg-type]
                terms=frozenset(), pairs=frozenset(), asks=asks)


def test_the_fix_on_the_same_page_joins_an_answer_that_only_retells_the_problem() -> None:
    command = "```\nserve --trust-forwarded 10.0.0.5\n```"
    chunks = [chunk(1, PROBLEM, page=1), chunk(2, f"{FIX}\n\n{command}", page=1)]
    answer = "\n\n".join(choose_excerpts(QUESTION, chunks))
    assert "internal host" in answer  # the problem, still first
    assert "`--trust-forwarded`" in answer
    assert "serve --trust-forwarded 10.0.0.5" in answer  # with the command it introduces
    assert answer.index("internal host") < answer.index("--trust-forwarded")


def test_a_fix_on_another_page_is_not_added() -> None:
    chunks = [chunk(1, PROBLEM, page=1), chunk(2, FIX, page=2, score=0.7)]
    answer = "\n\n".join(choose_excerpts(QUESTION, chunks))
    assert "--trust-forwarded" not in answer


def test_an_answer_that_already_prescribes_gets_nothing_more() -> None:
    fixed = "To fix it, set `forwarded_headers = true` in the app's settings."
    told = PROBLEM.replace("That is", f"{fixed}\n\nThat is")
    chunks = [chunk(1, told, page=1), chunk(2, FIX, page=1)]
    answer = "\n\n".join(choose_excerpts(QUESTION, chunks))
    assert "forwarded_headers" in answer
    assert "--trust-forwarded" not in answer


def test_a_prescription_names_something_in_code_the_question_does_not_with_a_verb_of_doing() -> None:
    asked = frozenset({"how", "do", "i", "use", "proxy_mode"})
    assert prescribes(unit("You can set `proxy_headers` to read them."), asked)
    assert prescribes(unit("* Pass `--workers 4` to run four processes."), asked)
    assert not prescribes(unit("You can set `proxy_mode` to read them."), asked)  # the question's own name
    assert not prescribes(unit("The `proxy_headers` flag was added in 2.1."), asked)  # no verb of doing
    assert not prescribes(unit("Can you set `proxy_headers` here?", asks=True), asked)  # asks only
    assert not prescribes(unit("use `proxy_headers`", kind="code"), asked)  # code is what prose introduces
    assert prescribes(unit("When deploying, set `TRUSTED` to the public names."), asked)  # after a clause
    assert prescribes(unit("Stop the other program, or use `--port 5001`."), asked)
    assert prescribes(unit("3. **Add** a `pre_build` job to the config."), asked)
    assert prescribes(unit("It restarts by setting `reload_dirs`."), asked)
    assert prescribes(unit("Then, you\u2019ll need to install `gcc` with the package manager."), asked)
    assert prescribes(unit("- Read the notes.\n- Ensure `trusted_ips` lists the gateway."), asked)  # any item
    assert prescribes(unit("We recommend the `strict` mode for gateways."), asked)
    assert prescribes(unit("Setting `trusted_ips` to the gateway's address fixes it."), asked)
    # Descriptions that name code are no steps.
    assert not prescribes(unit("The header is used by `url_for()` for use in emails."), asked)
    assert not prescribes(unit("It works with the `asyncio` backend too."), asked)
    assert not prescribes(unit("You can see the `X-Forwarded-Proto` header in the logs."), asked)
    assert not prescribes(unit("Note that you can't just combine `--reload` with `--workers`."), asked)
    # Meeting a problem is no step either: "you may encounter" tells what happens.
    assert not prescribes(unit("With a `countdown` you may encounter a `PreconditionFailed` error:"), asked)
    assert prescribes(unit("You can hit the `/ping` endpoint to check it."), asked)  # hitting acts
    assert not prescribes(unit("The server will then call `on_startup` once."), asked)
    assert not prescribes(unit("Use of `eval` is discouraged."), asked)
    assert not prescribes(unit("You can set it to `true`."), asked)  # a value names nothing to use


def test_code_already_quoted_is_not_quoted_again() -> None:
    # Chunks overlap: the command the problem's chunk ends with opens the fix's chunk too.
    command = "```\nserve --trust-forwarded 10.0.0.5\n```"
    chunks = [chunk(1, f"{PROBLEM}\n\n{command}", page=1), chunk(2, f"{FIX}\n\n{command}", page=1)]
    answer = "\n\n".join(choose_excerpts(QUESTION, chunks))
    assert answer.count("serve --trust-forwarded 10.0.0.5") == 1


def test_a_prescribing_list_item_comes_without_the_next_item() -> None:
    items = "\n".join([
        "* Run the server with `--trust-forwarded` so the app reads the forwarding headers of the gateway.",
        *(f"* The `--option-{n}` value sets how many workers of kind {n} the server starts at boot."
          for n in range(6)),
    ])
    chunks = [chunk(1, PROBLEM, page=1), chunk(2, items, page=1)]
    answer = "\n\n".join(choose_excerpts(QUESTION, chunks))
    assert "`--trust-forwarded`" in answer
    assert "--option-0" not in answer


def test_a_lead_in_whose_command_is_not_read_is_no_prescription() -> None:
    lead_in = "Run the server with `--trust-forwarded` so the app reads the forwarding headers, like this:"
    chunks = [chunk(1, PROBLEM, page=1), chunk(2, lead_in, page=1)]
    answer = "\n\n".join(choose_excerpts(QUESTION, chunks))
    assert "--trust-forwarded" not in answer


def test_only_the_answers_first_passage_decides_whether_it_prescribes_already() -> None:
    # A later part prescribing something else ("`samesite` can be set to ...") leaves the main
    # passage without its step.
    chunks = [chunk(1, PROBLEM, page=1), chunk(2, FIX, page=1),
              chunk(3, "The `samesite` option can be set to `lax` for cookies.", page=3)]
    read = reading(chunks)
    first, fix, other = read.per_chunk[0][0], read.per_chunk[1][0], read.per_chunk[2][0]
    scored = [(1.0, first), (0.6, fix), (0.5, other)]
    found = prescription(QUESTION, passage=[first], quoted=[], scored=scored, reading=read)
    assert [u.block.text for u in found] == [FIX]
    assert prescription(QUESTION, passage=[first, fix], quoted=[], scored=scored, reading=read) == []


def test_a_step_a_later_part_quotes_already_is_never_quoted_again() -> None:
    # A later part may quote a step (chunks overlap, or it answers another part of the message):
    # the next step of the page comes instead, never the same text twice.
    other = "For cookies, you can set `link_style` to `strict`."
    chunks = [chunk(1, PROBLEM, page=1), chunk(2, FIX, page=1), chunk(3, other, page=1)]
    read = reading(chunks)
    first, fix, cookie = read.per_chunk[0][0], read.per_chunk[1][0], read.per_chunk[2][0]
    scored = [(1.0, first), (0.7, fix), (0.6, cookie)]
    quoted = [quote_key(f"Before it: {FIX}")]
    found = prescription(QUESTION, passage=[first], quoted=quoted, scored=scored, reading=read)
    assert [u.block.text for u in found] == [other]


def test_a_step_whose_code_is_in_its_command_comes_with_the_command() -> None:
    # The sentence names nothing in code itself; the command after it does.
    step = ("While a gateway adds forwarding headers, the internal reloader should be disabled so the "
            "app reads the headers.\n\n```\nserve --no-reload --trust-forwarded\n```")
    chunks = [chunk(1, PROBLEM, page=1), chunk(2, step, page=1)]
    answer = "\n\n".join(choose_excerpts(QUESTION, chunks))
    assert "should be disabled" in answer and "serve --no-reload --trust-forwarded" in answer


def test_a_lead_in_whose_command_is_quoted_already_is_not_added_alone() -> None:
    command = "```\nserve --trust-forwarded 10.0.0.5\n```"
    lead_in = "Run the server so the app reads the forwarding headers of the gateway:"
    chunks = [chunk(1, f"{PROBLEM}\n\n{command}", page=1), chunk(2, f"{lead_in}\n\n{command}", page=1)]
    answer = "\n\n".join(choose_excerpts(QUESTION, chunks))
    assert lead_in not in answer


def test_the_step_of_the_passages_own_section_comes_before_a_better_scoring_one_elsewhere() -> None:
    own = "When the gateway is trusted, set `FORWARDED_ALLOW` to its address."
    other = "For cookies, you can set `link_style` to `strict`."
    # The passage's section goes on in the page's next chunk (same heading path); the small
    # section before it in the same chunk is another one.
    chunks = [chunk(1, f"## Cookies\n\n{other}\n\n## Gateways\n\n{PROBLEM}", page=1), chunk(2, own, page=1)]
    chunks[1] = chunks[1].model_copy(update={"section": chunks[0].section})
    read = reading(chunks)
    cookie, first, step = read.per_chunk[0][0], read.per_chunk[0][1], read.per_chunk[1][0]
    scored = [(1.0, first), (0.9, cookie), (0.6, step)]
    found = prescription(QUESTION, passage=[first], quoted=[], scored=scored, reading=read)
    assert [u.block.text for u in found] == [own]


def test_a_lead_in_comes_with_the_items_of_the_long_list_it_introduces() -> None:
    items = "\n".join(f"* `OPTION_{n}`: what the gateway option number {n} of the server does."
                      for n in range(8))
    lead_in = "Run the server with these options set to the gateway's values:"
    chunks = [chunk(1, PROBLEM, page=1), chunk(2, f"{lead_in}\n\n{items}", page=1)]
    read = reading(chunks)
    units = read.per_chunk[1]
    scored = [(1.0, read.per_chunk[0][0]), (0.6, units[0])]
    found = prescription(QUESTION, passage=[read.per_chunk[0][0]], quoted=[], scored=scored, reading=read)
    assert found[0].block.text == lead_in
    assert [u.block.kind for u in found[1:]] == ["list"] * 6
