"""Choose the passages that answer a question: coherent excerpts of one or two pages, cited.

The offline answer quotes the best passage of one source, with the lead-in that
introduces a list, table or command *and* that body, trimmed at block boundaries;
while it is short, it adds the passage that holds what the question asks and the
first leaves out (people ask two things in one message), or another passage, of the
same page or a second one, that scores almost as well. Quoting whole blocks keeps
commands, numbers and names intact, which is what people ask docs for; a collage of
loose sentences from several pages rarely contains the answer.

Scoring is pure and corpus-independent: question terms are weighted by their
inverse frequency among the candidate blocks (a word in every block says little),
plus word-pair overlap, the chunk's retrieval relevance and rank, whether the chunk's
heading path names the asked thing, and (when the local model is at hand) the dense
similarity of question and block, so meaning counts where the words differ. A block that
asks (a question, quiz options, an exercise's task), or any block of a chunk mostly made of
them or under an exercise's or a quiz's heading, is scored down like a fragment: textbooks'
quizzes and exercises restate the words of what they ask about but answer nothing. An answer
whose first passage only retells the problem gets the sentence of its section (else of its
page) that says what to use (``core.answer.prescription``).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

from core.answer.asked import question_sentences
from core.answer.blocks import rarity, render_block, table_header_lines
from core.answer.examples import asks_for_example, without_example_request
from core.answer.links import shown_links
from core.answer.passage import grow
from core.answer.picker import Picker
from core.answer.prescription import Reading, prescription
from core.answer.sentences import paragraph_looks_like_code
from core.answer.units import ASKING_WORD, Unit, read_units, unit_terms
from core.ingest.spans import MARKDOWN_ESCAPE
from core.models import RetrievedChunk
from core.retrieval.ranking import semantic_score
from core.retrieval.retriever import CosineFn
from core.retrieval.terms import content_terms, typed_names, with_name_parts

#: Block score weights: question terms held (IDF-weighted), word pairs, the chunk's relevance,
#: its heading naming the asked thing, early position in the chunk, retrieval rank, and a
#: penalty for a fragment (cut mid-sentence or unfenced code) or a block that asks (``is_asking``:
#: the same penalty, not tuned; BENCHMARKS.md, eighth pass). Rank was tuned on gazebo-docs
#: and checked on robotics-textbook-2 (BENCHMARKS.md).
W_OVERLAP = 0.5
W_PAIRS = 0.1
W_RELEVANCE = 0.2
#: 0.25 since the twenty-sixth pass: on 46 sets fact +7 and follow-up fact +1 (11 answers gained,
#: 2 lost) over 0.15; 0.35 gained less with more lost (gazebo-docs among them). The heading that
#: names the asked thing ("Does Black have an API?") lost to a block of the first chunk.
W_HEADING = 0.25
W_POSITION = 0.05
W_RANK = 0.1
W_FRAGMENT = 0.2
#: Bonus for prose that names something in code (`--flag`, `setting`): how docs answer "how do
#: I"; tuned on gazebo-docs (0.03 of 0.03/0.06/0.1), no loss on the other four sets.
W_NAMES = 0.03
#: Weight of the question-block dense similarity (tuned on gazebo-docs: 0.1 and 0.2 tied, 0.1
#: also helped robotics-textbook-2).
W_SEMANTIC = 0.1
#: Weight of the share of the code names the question types (``TYPED_NAME``) that a block writes
#: as they are: "--locked or --frozen?", "x_client_id", "add_middleware()", "keyType". The docs'
#: passage about a flag names it; its words alone ("lock", "frozen") are everywhere. As much as
#: the retrieval rank; 0.2 was measured too (BENCHMARKS.md, ninth pass).
W_TYPED = 0.1
#: How many of the best blocks by words are re-scored with the dense similarity.
SEMANTIC_DEPTH = 12
#: Asked for an example ("can you show an example?"), code sharing the question's words gains this
#: much (as much as a heading naming the asked thing did when it was set).
W_CODE_ASKED = 0.15
#: A word only the message's other sentences hold ("users keep double clicking submit. can htmx
#: disable the button?") weighs this share of its rarity: it tells why, the question what.
#: Measured on 46 sets: 0.5 fact +4 and follow-up fact +1 (11 answers gained, 6 lost); 0.25 -1.
CONTEXT_SHARE = 0.5
#: A short code block's share of the question's words counts this much (a long one's half).
SHORT_CODE_SHARE = 0.85


#: Words that name nothing ("can I pause it the same way?"): rare among the blocks read, they
#: would outweigh the word the question is about.
_VAGUE = frozenset(content_terms("way ways thing things stuff something anything everything"))


def _weights(question_terms: frozenset[str], units: Sequence[Unit]) -> dict[str, float]:
    n = max(1, len(units))
    df = {t: sum(1 for u in units if t in u.terms) for t in question_terms}
    return {t: rarity(n, d) for t, d in df.items() if d}


#: A verb done to a pronoun that ends its clause: "switch that on?", "how do i fix it?".
_DONE_TO = re.compile(r"(?<![\w-])([a-z][\w-]++)\s+(?:it|that|this|them|those|these)\b"
                      r"(?:\s+(?:on|off|up|out|in))?\s*[?.!,]", re.IGNORECASE)


def _done_to_pronoun(question: str) -> frozenset[str]:
    """The verbs the question does to a pronoun ("how do i switch that on?"), named nowhere else.

    What they act on is named elsewhere: the verb alone, rare among the blocks read, would choose
    the passage ("Switch to a virtualenv").
    """
    spans = [m.span(1) for m in _DONE_TO.finditer(question)]
    inside = frozenset(t for a, b in spans for t in content_terms(question[a:b]))
    rest = question
    for a, b in reversed(spans):
        rest = f"{rest[:a]} {rest[b:]}"
    return inside - frozenset(content_terms(rest))


def _asked_first(question: str, weights: dict[str, float]) -> dict[str, float]:
    """``weights`` with the words of the message's sentences that do not ask brought down.

    Rare among the blocks read, a word of the story around a question ("want", "keep", "users")
    outweighed what it asks about, held by every block retrieved, and chose the passage. So did a
    verb done to a pronoun ("how do i switch that on?"), which weighs half too.
    """
    done_to = _done_to_pronoun(question)
    if done_to:
        weights = {t: w * CONTEXT_SHARE if t in done_to else w for t, w in weights.items()}
    asked = question_sentences(question)
    if asked is None:
        return weights
    core = frozenset(content_terms(with_name_parts(asked)))
    if len(core & weights.keys()) < 2:
        return weights  # "... how to fix?" asks by its story: one word would choose alone
    return {t: w if t in core else w * CONTEXT_SHARE for t, w in weights.items()}


def _score(
    unit: Unit, chunk: RetrievedChunk, weights: dict[str, float], q_pairs: frozenset[tuple[str, str]]
) -> float:
    total = sum(weights.values())
    if not total or not unit.terms:
        return 0.0
    overlap = sum(w for t, w in weights.items() if t in unit.terms) / total
    pair_share = len(q_pairs & unit.pairs) / len(q_pairs) if q_pairs else 0.0
    # A merged part's label heads its blocks as the chunk's section heads the chunk.
    heading_terms = frozenset(unit_terms(f"{chunk.title} {chunk.section} {unit.part}"))
    heading = sum(w for t, w in weights.items() if t in heading_terms) / total
    text = unit.block.text
    # A fragment (cut mid-sentence, unfenced code) reads badly; a quiz or an exercise restates
    # the asked words but answers nothing.
    # A reference entry's name ("DEPTH_LIMIT") looks like code but heads its entry.
    fragment = unit.asks or unit.cut or (unit.block.kind == "para" and paragraph_looks_like_code(text)
                                         and not unit.block.is_label) or _unasked_traceback(unit, weights)
    if unit.block.kind == "code":
        # Code mentions many identifiers by chance; it answers when the prose around it does,
        # and grow() brings it along with its lead-in. A short block is often the answer itself
        # (a hook's YAML, a config's line): 0.85, not 0.7, since the twenty-sixth pass (46 sets:
        # fact +3, follow-up fact +2; 6 answers gained, 1 lost).
        overlap *= 0.5 if unit.block.text.count("\n") > 15 else SHORT_CODE_SHARE
    names = W_NAMES if unit.block.kind != "code" and "`" in text else 0.0
    return (W_OVERLAP * overlap + W_PAIRS * pair_share + W_RELEVANCE * chunk.score + W_HEADING * heading
            + names + W_POSITION / (1 + unit.position) + W_RANK / (1 + unit.chunk)
            - (W_FRAGMENT if fragment else 0.0))


#: A Python traceback: its fence's language, or its first line.
_TRACEBACK = re.compile(r"^```(?:pytb|py3tb|traceback)\b|^```[^\n]*\n\s*Traceback \(most recent call last\)")


def _unasked_traceback(unit: Unit, weights: dict[str, float]) -> bool:
    """A traceback the question does not ask about: its last line names no word of the question.

    A traceback's frames name functions ("wait_for_pending", "call") that share the
    question's words by chance; it shows an error, and answers only a question about that error.
    """
    text = unit.block.text
    if unit.block.kind != "code" or not _TRACEBACK.match(text):
        return False
    lines = [line for line in text.rstrip("`\n").splitlines() if line.strip()]
    return not (set(unit_terms(lines[-1], names=False)) & weights.keys()) if lines else True


def _render(selected: Sequence[Unit], marker: str, focus: frozenset[str], *, page_url: str) -> str:
    """Join blocks as Markdown; the citation ``marker`` goes after the first prose block ("": none).

    A merged part's label ("Expected Output") reads as the heading it is, in bold, unless it is
    the only prose to cite; at the end it labels nothing quoted and is left out. Prose links
    are shown as chat can follow them (``shown_links``); a block that was only a picture goes.
    """
    shown = [(u, render_block(u.block, focus=focus)) for u in selected]
    shown = [(u, text if u.block.kind == "code" else shown_links(text, page_url=page_url))
             for u, text in shown]
    shown = _rows_joined([(u, text) for u, text in shown if text.strip()])
    if not shown:
        return ""
    labels = [u.block.is_label for u, _ in shown]
    # A label ending the passage names a part it leaves out; after a lead-in it is the value
    # the lead-in gives ("Download it from:" then a bare address).
    while len(shown) > 1 and labels[-1] and not shown[-2][0].block.is_lead_in:
        shown, labels = shown[:-1], labels[:-1]
    prose = [i for i, (u, _) in enumerate(shown) if u.block.kind in ("para", "list")]
    cite = next((i for i in prose if not labels[i]), prose[0] if prose else None)
    parts: list[str] = []
    for i, (_, text) in enumerate(shown):
        if i == cite and marker:
            text = f"{text} {marker}"
        elif labels[i]:
            text = f"**{text.rsplit(' > ', 1)[-1]}**"  # the heading it is, not the path to it
        parts.append(text)
    if cite is None and marker:
        parts.append(marker)
    return "\n\n".join(parts)


def _rows_joined(shown: Sequence[tuple[Unit, str]]) -> list[tuple[Unit, str]]:
    """Rows of one table, each read under its header, quoted as one table with the header once.

    The header is compared and cut as lines of the rendered text, whose links were rewritten.
    """
    joined: list[tuple[Unit, str]] = []
    for unit, text in shown:
        size = table_header_lines(unit.block) if unit.block.kind == "table" else 0
        lines = text.split("\n")
        before = joined[-1] if joined else None
        if (size and before and before[0].block.kind == "table"
                and before[1].split("\n")[:size] == lines[:size]):
            joined[-1] = (before[0], "\n".join([before[1], *lines[size:]]))
        else:
            joined.append((unit, text))
    return joined


def _typed_share(unit: Unit, typed: Sequence[re.Pattern[str]]) -> float:
    """The share of the question's typed code names that ``unit`` writes as they are."""
    if not typed:
        return 0.0
    return sum(1 for name in typed if name.search(unit.block.text)) / len(typed)


def _ranked(
    question: str, units: Sequence[Unit], chunks: Sequence[RetrievedChunk], weights: dict[str, float],
    q_pairs: frozenset[tuple[str, str]], cosines: CosineFn | None, *, code_asked: bool = False,
) -> list[tuple[float, Unit]]:
    """Units best first: by words, then the best few re-scored with their meaning too.

    Asked for an example, code that shares the question's words comes first.
    """
    typed = typed_names(question)
    scored = sorted(((_score(u, chunks[u.chunk], weights, q_pairs) + W_TYPED * _typed_share(u, typed)
                      + (W_CODE_ASKED if code_asked and u.block.kind == "code" and u.terms & weights.keys()
                         else 0.0), u)
                     for u in units), key=lambda su: (-su[0], su[1].chunk, su[1].position))
    if cosines is None or not scored:
        return scored
    # Embedding every block costs more than the rest of the answer; meaning only needs to
    # reorder the blocks the words already found.
    head = [u for _, u in scored[:SEMANTIC_DEPTH]]
    meaning = {id(u): semantic_score(c) for u, c in zip(head, cosines(question, [u.block.text for u in head]),
                                                        strict=True)}
    rescored = [(score + W_SEMANTIC * meaning.get(id(u), 0.0), u) for score, u in scored]
    return sorted(rescored, key=lambda su: (-su[0], su[1].chunk, su[1].position))


def choose_excerpts(
    question: str, chunks: Sequence[RetrievedChunk], *, max_chunks: int = 5, max_sources: int = 2,
    cosines: CosineFn | None = None,
) -> list[str]:
    """Pick the excerpt(s) that answer ``question`` from the ranked ``chunks``.

    Args:
        question: what was asked (already cleaned for search).
        chunks: retrieved chunks, best first.
        max_chunks: how many of the top chunks are read.
        max_sources: at most this many different pages are quoted.
        cosines: dense similarity of the question with each block: meaning counts, not only
            shared words ("autonomous" and "autonomy" stem apart).

    Returns:
        The excerpts' Markdown, best first, each with the ``[n]`` of its chunk; empty when no block
        shares a term with the question.
    """
    per_chunk = read_units(chunks[:max_chunks], exercises_asked=ASKING_WORD.search(question) is not None)
    everything = [u for units in per_chunk for u in units]
    code_asked = asks_for_example(question)
    if code_asked:  # "show me", "got" name nothing; an example is code, or a sentence giving one
        question = f"{without_example_request(question)} example"
    asked = content_terms(with_name_parts(question))
    q_list = [t for t in asked if t not in _VAGUE] or asked
    weights = _weights(frozenset(q_list), everything)
    if not code_asked:  # "example", added above, would read as a sentence of the story
        weights = _asked_first(question, weights)
    # Pairs of the words as typed: a name's inserted words would split them.
    q_pairs = frozenset(itertools.pairwise(t for t in content_terms(question) if t not in _VAGUE))
    scored = _ranked(question, everything, chunks, weights, q_pairs, cosines, code_asked=code_asked)
    if not scored or scored[0][0] <= 0:
        return []
    picker = Picker(scored=scored, weights=weights, chunk_urls=[c.url for c in chunks[:max_chunks]],
                     max_sources=max_sources)
    parts: list[list[Unit]] = []
    unit: Unit | None = scored[0][1]
    while unit is not None:
        selected = picker.take(chunks[unit.chunk].url, grow(per_chunk[unit.chunk], unit.position, weights))
        if selected:
            parts.append(selected)
        unit = picker.next_part()
    passages = _merged(parts)
    if passages:
        # A first passage retelling the problem gets its section's step that acts on it.
        read = Reading(per_chunk=per_chunk, urls=[c.url for c in chunks[:max_chunks]],
                       sections=[c.section for c in chunks[:max_chunks]])
        # The best block and what it grew decide: a step that a later part adds answers another
        # part of the message (measured: judging the joined passage lost 2 facts; BENCHMARKS.md).
        step = prescription(question, passage=parts[0], quoted=picker.quoted, scored=scored,
                            reading=read)
        if step:
            passages = _merged([*passages, step])
    return _assemble(passages, chunks, frozenset(weights))


def _merged(parts: Sequence[Sequence[Unit]]) -> list[list[Unit]]:
    """The parts best first as passages: a part going on where an earlier one stopped joins it."""
    passages: list[list[Unit]] = []
    for part in parts:
        for passage in passages:
            if _adjoin(passage, part):
                passage.extend(part)
                break
        else:
            passages.append(list(part))
    return passages


def _assemble(passages: Sequence[Sequence[Unit]], chunks: Sequence[RetrievedChunk], focus: frozenset[str]
              ) -> list[str]:
    """Render the passages best first, each cited once, an entry's name over the first from its section."""
    # A heading's words alone ("Expected Output") answer nothing; nor does a picture chat cannot show.
    texts: list[str] = []
    named: set[tuple[str, str, str | None]] = set()
    for p in _reading_order(passages, chunks):
        chunk = chunks[p[0].chunk]
        text = "" if all(u.block.heads_entry for u in p) else _render(p, f"[{p[0].chunk + 1}]", focus,
                                                                        page_url=chunk.url)
        # A small section merged into a chunk keeps its heading as a label line ("nodeLinker"): the
        # passage under one is that entry's, whatever the chunk's section names.
        name = entry_name(p[0].part) if p[0].part else entry_name(chunk.section)
        entry = (chunk.url, chunk.section, name)
        if text and name and name.lower() not in text.lower() and entry not in named:
            text = f"**`{name}`**\n\n{text}"  # "If set to `true`, ..." says nothing without its setting
        if text:
            named.add(entry)
            texts.append(text)
    return texts


#: A reference entry's heading: a setting, option, variable or API name ("virtualenvs.in-project",
#: "--no-root", "-L, --latest", "--reporter=<name>", "max_connections", "DEPTH_LIMIT", "nodeLinker"),
#: not words ("Built-in types", "step-by-step"), a product ("Node.js", "JavaScript", "iPhone"), a
#: version ("v1.2.3") or an abbreviation ("i.e."). Possessive, and a lookahead for the dotted or
#: snake_case name: "_" is a word character too, and the nested runs backtracked exponentially.
_OPTION = r"--?[a-zA-Z][\w-]*+(?:=[\w-]++|[= ]?<[\w-]{1,30}>)?"
_ENTRY_NAME = re.compile(
    rf"{_OPTION}(?:,\s*{_OPTION})*+"
    r"|(?=[a-z][\w.-]*[._][A-Za-z_][\w-]*$)[a-z][\w-]*+(?:\.[\w-]++)*+"
    r"|[A-Z][A-Z0-9]*+(?:_[A-Z0-9]++)++"
    r"|[a-z][a-z0-9]++(?:[A-Z][a-z0-9]++)++"
    r"|\[[a-z][\w.:-]*+\] [a-z_][\w.-]*+")  # a setting under its INI section: "[report] fail_under"
#: Shorter names are abbreviations ("e.g", "i.e").
_ENTRY_MIN_CHARS = 5


def entry_name(section: str) -> str | None:
    """The name a section's last heading gives a reference entry, without backticks; else None."""
    last = section.rsplit(" > ", 1)[-1].strip()
    # Headings keep Markdown's escapes ("<name\>", "DEPTH\_LIMIT"); the name is shown as code, where
    # a backslash would show.
    name = MARKDOWN_ESCAPE.sub(r"\g<escaped>", last.strip("`"))
    return name if _ENTRY_MIN_CHARS <= len(name) <= 60 and _ENTRY_NAME.fullmatch(name) else None


#: A numbered list's item: a step of a procedure, read in its order.
_STEP = re.compile(r"\s*\d{1,3}[.)]\s")


def _reading_order(passages: Sequence[Sequence[Unit]], chunks: Sequence[RetrievedChunk]
                   ) -> list[Sequence[Unit]]:
    """Best first, but the steps of a section's numbered list in the page's order, in their places.

    Best first, a section's steps read "3. ... 2. ... 1. ..."; every other passage keeps its place.
    """
    ordered = list(passages)
    slots: dict[tuple[str, str], list[int]] = {}
    for i, passage in enumerate(passages):
        if _STEP.match(passage[0].block.text):
            chunk = chunks[passage[0].chunk]
            slots.setdefault((chunk.url, chunk.section), []).append(i)
    for places in slots.values():
        steps = sorted((passages[i] for i in places),
                       key=lambda p: (chunks[p[0].chunk].chunk_index, p[0].position))
        for i, step in zip(places, steps, strict=True):
            ordered[i] = step
    return ordered


def _adjoin(before: Sequence[Unit], after: Sequence[Unit]) -> bool:
    """Whether ``after`` goes on, in its section, right where ``before`` stops."""
    # A label ending a part is left out of it (``_render``): what follows it is no going on.
    last, first = before[-1], after[0]
    return (last.chunk == first.chunk and last.position + 1 == first.position and not first.opens_section
            and not last.block.is_label)
