"""The step that acts: a sentence naming the setting, option or call that does what was asked.

People describe their problem in their own words, and the passage sharing the most of
them is often the page's description of that problem ("the server doesn't know it is
behind a trusted proxy, so it won't interpret those headers"); the page's fix is a
shorter sentence sharing few of the words: "By setting `--proxy-headers` ...", "you can
use `root_path` to ...". When the answer's first passage holds no step, the best-scoring
step of that passage's section (else of its page) joins the answer. A step is prose that
names, in code, something the question does not (or introduces a command that does), told
as docs tell the reader to act: "you can use", "by setting", "we recommend", or an
imperative where a sentence or a clause starts. English words of how docs instruct; no
corpus, no question's words.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from core.answer.units import CODE, WORD, Unit, quote_key
from core.retrieval.terms import LITERALS

#: A step is quoted when it scores at least this share of the answer's best block (0.6, the
#: share a further part needs, added fewer facts; BENCHMARKS.md, thirteenth pass).
PRESCRIPTION_RATIO = 0.5
#: A sentence or list item this long explains and happens to name something; a step is shorter.
PRESCRIPTION_CHARS = 450
#: A lead-in comes with at most this many items of the long list it introduces.
LIST_ITEMS = 6

_VERBS = (r"(?:use|set|setup|set\s+up|pass|add|enable|disable|activate|configure|run|call|specify|install"
          r"|change|define|declare|create|write|wrap|decorate|register|import|replace|override|opt\s+in|ensure"
          r"|make\s+sure|include|update|remove|try|start|restart|upgrade|edit|provide|put|export|point|switch|mark"
          r"|apply|pin|mount|load|return|raise|turn\s+(?:on|off))")
_GERUNDS = (r"(?:using|setting|passing|adding|enabling|disabling|configuring|running|calling|specifying"
            r"|installing)")
#: Where a sentence, a list item or a clause starts: an imperative there tells the reader to act.
_STARTS = r"(?:^[\s>*+\-\d.)#]*|[.:;!?]\s+\**|,\s+(?:(?:or|and)\s+)?)"
#: After "you can" any verb acts but those of reading and thinking, and those of meeting a problem:
#: "you can see the header", "you can read more", "you can't combine them" and "you may encounter
#: an error" tell nothing to do.
_NOT_DOING = (r"(?!(?:see|read|learn|find|notice|imagine|think|expect|refer|visit|consult|look|not|never"
              r"|be\s+sure|encounter|experience|run\s+into|stumble)\b)")
#: How docs tell the reader to act: "you can pair it with ...", "you'll need to install", "can be
#: set", "by setting", "we recommend", "Set `X` to ...", "When deploying, set ...", ", or use
#: `--port`", "Setting `X` to ...". "Docker will build and run", "the variables you want to pass",
#: "use of `eval`" and "works with the `asyncio` backend" describe.
_DOING = re.compile(
    r"\byou(?:\s+|['\u2019](?:ll|d)\s+|\s+will\s+)(?:can|could|should|may|might|must|need\s+to|have\s+to)\s+"
    rf"(?:(?:also|just|simply|then|now|first|instead|always|either)\s+)?{_NOT_DOING}[a-z]"
    r"|\b(?:can|should|must)\s+(?:also\s+)?be\s+(?:used|set|passed|enabled|disabled|configured|changed"
    r"|overridden|added|installed|specified|provided|included|defined|started)\b"
    rf"|\bby\s+{_GERUNDS}\b"
    r"|\b(?:we|it\s+is)\s+(?:(?:strongly|highly)\s+)?recommend(?:ed)?\b"
    rf"|{_STARTS}(?:(?:first|then|also|just|simply|instead|now),?\s+)?{_VERBS}\b(?!\s+(?:of|cases?)\b)"
    rf"|(?:^[\s>*+\-\d.)#]*|[.:;!?]\s+)\**{_GERUNDS}\b",
    re.IGNORECASE | re.MULTILINE)


@dataclass(frozen=True, slots=True, kw_only=True)
class Reading:
    """What the excerpt read: each chunk's units, page URL and heading path, in retrieval order."""

    per_chunk: Sequence[Sequence[Unit]]
    urls: Sequence[str]
    sections: Sequence[str]


def _new_code_words(unit: Unit, asked: frozenset[str]) -> frozenset[str]:
    """Words the unit writes in code that the question does not use (values left out)."""
    code = " ".join(CODE.findall(unit.block.text))
    return frozenset(w.lower() for w in WORD.findall(code)) - asked - LITERALS


def _doing(unit: Unit) -> bool:
    return (unit.block.kind in ("para", "list") and not unit.asks and not unit.cut
            and _DOING.search(unit.block.text) is not None)


def prescribes(unit: Unit, asked: frozenset[str]) -> bool:
    """Whether ``unit`` tells the reader to use something, in code, the question (``asked``) does not name."""
    return _doing(unit) and bool(_new_code_words(unit, asked))


def _step(units: Sequence[Unit], i: int, asked: frozenset[str]) -> list[Unit]:
    """``units[i]`` with the code, list or table it introduces, when together they prescribe; else [].

    "The built-in reloader should be disabled so it does not interfere:" prescribes through the
    command after it. A list's next item is no body of the one before; a long list read item
    by item comes with its lead-in up to ``LIST_ITEMS`` items.
    """
    unit = units[i]
    if not _doing(unit):
        return []
    end = i + 1
    if (unit.block.kind == "para" and end < len(units) and units[end].block.is_body
            and not units[end].opens_section):
        end += 1
        while (units[end - 1].block.kind == "list" and end < len(units) and units[end].block.kind == "list"
               and not units[end].opens_section and end - i <= LIST_ITEMS):
            end += 1  # the next item of a long list read item by item
    step = list(units[i:end])
    if unit.block.is_lead_in and len(step) == 1:
        return []  # "set it in `pyproject.toml`:" without what it introduces says nothing
    return step if any(_new_code_words(u, asked) for u in step) else []


def _section(passage: Sequence[Unit], reading: Reading) -> frozenset[tuple[int, int]]:
    """The units of the section ``passage`` is in: its run between headings, and where it goes on.

    A chunk may hold several small sections, and a long section goes on in the page's next
    chunk, which has the same heading path.
    """
    chunk = passage[0].chunk
    units = reading.per_chunk[chunk]
    start = passage[0].position
    while start > 0 and not units[start].opens_section:
        start -= 1
    end = passage[-1].position + 1
    while end < len(units) and not units[end].opens_section:
        end += 1
    own = {(chunk, p) for p in range(start, end)}
    if end == len(units):
        for ci, other in enumerate(reading.per_chunk):
            if ci != chunk and (reading.urls[ci], reading.sections[ci]) == (reading.urls[chunk],
                                                                          reading.sections[chunk]):
                for u in other:
                    if u.opens_section:
                        break
                    own.add((ci, u.position))
    return frozenset(own)


def _prescribed(passage: Sequence[Unit], reading: Reading, asked: frozenset[str]) -> bool:
    """Whether ``passage`` already holds a step, with its body when the step needs one."""
    quoted = {(u.chunk, u.position) for u in passage}

    def held(step: Sequence[Unit]) -> bool:
        return bool(step) and all((s.chunk, s.position) in quoted for s in step)

    return any(prescribes(u, asked) or held(_step(reading.per_chunk[u.chunk], u.position, asked))
               for u in passage)


def prescription(
    question: str, *, passage: Sequence[Unit], quoted: Collection[str], scored: Sequence[tuple[float, Unit]],
    reading: Reading,
) -> list[Unit]:
    """The step to add to an answer whose first ``passage`` holds none; else nothing.

    Args:
        question: what was asked (already cleaned for search).
        passage: the answer's first part: its best block with the lead-in and body it grew.
        quoted: every block the answer quotes, each as its ``quote_key``.
        scored: every unit read, best first, with its score.
        reading: the units, page and heading path of each chunk read.

    Returns:
        The best-scoring step of the passage's section, else of its page, that the answer quotes
        nowhere, not even in part; empty when none qualifies.
    """
    asked = frozenset(w.lower() for w in WORD.findall(question))
    if not passage or not scored or _prescribed(passage, reading, asked):
        return []
    page = reading.urls[passage[0].chunk]
    section = _section(passage, reading)
    floor = PRESCRIPTION_RATIO * scored[0][0]
    # The step of the passage's own section first: the page's other steps answer other problems
    # ("When deploying, set `TRUSTED_HOSTS` ..." before a cookie option's "can be set to").
    for score, unit in sorted(scored, key=lambda su: (su[1].chunk, su[1].position) not in section):
        if score < floor or reading.urls[unit.chunk] != page or len(unit.block.text) > PRESCRIPTION_CHARS:
            continue
        step = _step(reading.per_chunk[unit.chunk], unit.position, asked)
        if not step:
            continue
        if any(quote_key(u.block.text) in q for u in step for q in quoted):
            continue  # quoted already, whole or in part (chunks overlap): a later part's own step
        return step
    return []
