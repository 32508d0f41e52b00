"""The step that acts: a sentence naming the setting, option or call that does what was asked.

People describe their problem in their own words, and the passage sharing the most of
them is often the page's description of that problem ("the server doesn't know it is
behind a trusted proxy, so it won't interpret those headers"); the page's fix is a
shorter sentence sharing few of the words: "By setting `--proxy-headers` ...", "you can
use `root_path` to ...". When the answer's first passage prescribes nothing, the
best-scoring prescription of its page joins the answer. A prescription is prose that names,
in code, something the question does not, with a verb of doing ("you can", "by setting",
an imperative "use", "set", "pass" where a sentence or clause starts).
English words of how docs instruct; no corpus, no question's words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from core.answer.units import CODE, WORD, Unit

#: A prescription is quoted when it scores at least this share of the answer's best block
#: (0.6, the share a further part needs, added 5 facts and 2 follow-up facts over the fifteen
#: sets instead of 8 and 3; BENCHMARKS.md, thirteenth pass).
PRESCRIPTION_RATIO = 0.5
#: A sentence or list item this long explains and happens to name something; a step is shorter.
PRESCRIPTION_CHARS = 450

#: How docs tell the reader to do something: a modal addressed to them ("you can"), a passive
#: "can be set", "by setting ...", or an imperative where a sentence or a clause starts ("Set
#: `X` to ...", "When deploying, set ...", "or use `--port 5001`", "3. **Add** a job ..."). "Used
#: by `url_for`", "for use in email" and "works with the `asyncio` backend" describe.
_VERBS = (r"(?:use|set|pass|add|enable|disable|configure|run|call|specify|install|change|define|create|wrap"
          r"|decorate|register|import|replace|override|opt\s+in)")
_DOING = re.compile(
    r"\byou(?:\s+|['\u2019]ll\s+|\s+will\s+)(?:can|could|should|may|must|need\s+to|have\s+to)\b"
    r"|\b(?:can|should|must)\s+be\s+(?:used|set|passed|enabled|disabled|configured|changed|overridden|added"
    r"|installed)\b"
    r"|\bby\s+(?:using|setting|passing|adding|enabling|disabling|configuring|running|calling|specifying)\b"
    rf"|(?:^[\s>*+\-\d.)#]*|[.:;,!?]\s+\**|\b(?:or|and|then|just|simply|instead|first|also)\s+){_VERBS}\b",
    re.IGNORECASE)


def _new_code_words(unit: Unit, asked: frozenset[str]) -> frozenset[str]:
    """Words the unit writes in code that the question does not use."""
    code = " ".join(CODE.findall(unit.block.text))
    return frozenset(w.lower() for w in WORD.findall(code)) - asked


def _doing(unit: Unit) -> bool:
    return (unit.block.kind in ("para", "list") and not unit.asks and not unit.cut
            and _DOING.search(unit.block.text) is not None)


def prescribes(unit: Unit, asked: frozenset[str]) -> bool:
    """Whether ``unit`` tells the reader to use something, in code, the question (``asked``) does not name."""
    return _doing(unit) and bool(_new_code_words(unit, asked))


def _step(units: Sequence[Unit], i: int, asked: frozenset[str]) -> list[Unit]:
    """``units[i]`` with the code, list or table it introduces, when together they prescribe; else [].

    "The built-in reloader should be disabled so it does not interfere:" prescribes through the
    command after it; a list's next item is no body of the one before.
    """
    unit = units[i]
    if not _doing(unit):
        return []
    end = i + 1
    if (unit.block.kind == "para" and end < len(units) and units[end].block.is_body
            and not units[end].opens_section):
        end += 1
    step = list(units[i:end])
    if unit.block.is_lead_in and len(step) == 1:
        return []  # "set it in `pyproject.toml`:" without what it introduces says nothing
    return step if any(_new_code_words(u, asked) for u in step) else []


def _prescribed(passage: Sequence[Unit], per_chunk: Sequence[Sequence[Unit]], asked: frozenset[str]) -> bool:
    """Whether ``passage`` already holds a step, with its body when the step needs one."""
    quoted = {(u.chunk, u.position) for u in passage}

    def held(step: Sequence[Unit]) -> bool:
        return bool(step) and all((s.chunk, s.position) in quoted for s in step)

    return any(prescribes(u, asked) or held(_step(per_chunk[u.chunk], u.position, asked)) for u in passage)


def prescription(
    question: str, parts: Sequence[Sequence[Unit]], scored: Sequence[tuple[float, Unit]],
    per_chunk: Sequence[Sequence[Unit]], urls: Sequence[str],
) -> list[Unit]:
    """The prescription to add to an answer made of ``parts``: none when its first passage has one.

    Only the first passage counts: a later part's "`samesite` can be set to ..." answers
    another part of the message, and leaves the main one without its step.

    Args:
        question: what was asked (already cleaned for search).
        parts: the answer's parts so far, best first (not empty).
        scored: every unit read, best first, with its score.
        per_chunk: the units of each chunk read, in order.
        urls: the page of each chunk read.

    Returns:
        The prescribing unit of the first passage's section, else of its page, that scores best,
        with the list, code or table it introduces; empty when nothing qualifies.
    """
    asked = frozenset(w.lower() for w in WORD.findall(question))
    if _prescribed(parts[0], per_chunk, asked):
        return []
    chosen = {(u.chunk, u.position) for part in parts for u in part}
    page = urls[parts[0][0].chunk]
    floor = PRESCRIPTION_RATIO * scored[0][0]
    section = parts[0][0].chunk
    # The step of the passage's own section first: the page's other steps answer other problems
    # ("When deploying, set `TRUSTED_HOSTS` ..." before a cookie option's "can be set to").
    for score, unit in sorted(scored, key=lambda su: su[1].chunk != section):
        if score < floor:
            continue
        if ((unit.chunk, unit.position) in chosen or urls[unit.chunk] != page
                or len(unit.block.text) > PRESCRIPTION_CHARS):
            continue
        step = _step(per_chunk[unit.chunk], unit.position, asked)
        if step and not any((u.chunk, u.position) in chosen for u in step):
            return step  # a lead-in whose command is quoted already adds nothing
    return []
