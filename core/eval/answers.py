"""Answer evaluation (``ragbot eval answers``): case files, per-case results and the figures.

A cases file is the development-set format of ``../shared/data/devsets``::

    {"version": 1, "corpus": "...", "docs_dir": "...", "cases": [
      {"id": "...", "kind": "in_scope", "question": "...",
       "expected_files": ["path/relative/to/docs.md"], "expected_keywords": ["a fact"]},
      {"id": "...", "kind": "follow_up", "question": "...", "follow_up": "...",
       "expected_files": [...], "expected_keywords": [...]},
      {"id": "...", "kind": "out_of_scope", "question": "..."},
      {"id": "...", "kind": "off_topic_in_thread", "question": "...", "follow_up": "..."}]}

Everything here is pure: loading validates the file at the boundary (``InputError``
naming the bad case and field), and the metrics are functions over ``CaseResult``
lists. A response counts as *answered* when its status is ``answered`` or
``validation_failed`` (the bot still replied from the docs) and it cites at least one
source; anything else (``no_relevant_documents``, a failure, an answer citing nothing)
counts as declined.

Metrics (``METRICS``): the answered rate over ``in_scope`` cases; the declined rate over
``out_of_scope`` cases; an expected file among the first 5 *cited* sources and an
expected keyword in the answer text (both only for answered cases), over ``in_scope`` and
separately over ``follow_up`` cases (their follow-up reply); the declined rate of
off-topic questions asked as the second message of a thread (``off_topic_in_thread``:
``in_thread`` derives one per ``out_of_scope`` case, after an in-scope question, since a
follow-up borrows its thread's subject); citation hygiene over every answered case (the
derived ones too, and the latency figure counts them, so both differ from reports saved
before they existed); and, as diagnostics, an expected file among the first 5 chunks the
answer was written from (cited or not): what "retrieval found it" means.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from core.answer.citations import without_code
from core.errors import InputError
from core.eval.metrics import percentile

#: How many of an answer's sources are searched for an expected file.
TOP_SOURCES = 5
#: Statuses under which the bot replied from the docs (with a note for validation_failed).
ANSWER_STATUSES = frozenset({"answered", "validation_failed"})
#: ``[1]``, ``[2, 3]``, ``[1-3]``: the citation markers an answer may use.
_MARKER = re.compile(r"\[(\s*\d+(?:\s*[-–,;]\s*\d+)*\s*)\]")
_RANGE_LIMIT = 50


class CaseKind(StrEnum):
    """What a case tests: an answerable question, a follow-up, an off-topic one, alone or in a thread."""

    IN_SCOPE = "in_scope"
    FOLLOW_UP = "follow_up"
    OUT_OF_SCOPE = "out_of_scope"
    OFF_TOPIC_IN_THREAD = "off_topic_in_thread"

    @property
    def off_topic(self) -> bool:
        """Whether the scored message should be declined."""
        return self in (CaseKind.OUT_OF_SCOPE, CaseKind.OFF_TOPIC_IN_THREAD)

    @property
    def threaded(self) -> bool:
        """Whether the case asks a second message in the thread, and that one is scored."""
        return self in (CaseKind.FOLLOW_UP, CaseKind.OFF_TOPIC_IN_THREAD)


@dataclass(frozen=True, kw_only=True)
class AnswerCase:
    """One case of a cases file; for ``follow_up`` the follow-up message is the one scored."""

    id: str
    kind: CaseKind
    question: str
    follow_up: str | None = None
    expected_files: tuple[str, ...] = ()
    expected_keywords: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class CaseSet:
    """A loaded cases file."""

    corpus: str
    docs_dir: str
    cases: tuple[AnswerCase, ...]


@dataclass(kw_only=True)
class CaseResult:
    """What the bot replied to a case's scored message, reduced to what the metrics need."""

    case: AnswerCase
    status: str
    text: str
    #: Each listed source's file (relative to the docs folder when it is a local file), in order.
    source_files: list[str] = field(default_factory=list)
    source_urls: list[str] = field(default_factory=list)
    #: Each listed source's ``[n]`` number, in order.
    source_indices: list[int] = field(default_factory=list)
    #: The files of the chunks the answer was written from (cited or not), best first.
    retrieved_files: list[str] = field(default_factory=list)
    latency_ms: float = 0.0

    @property
    def answered(self) -> bool:
        """Whether the bot answered from the docs, citing at least one source."""
        return self.status in ANSWER_STATUSES and bool(self.source_urls)


@dataclass(frozen=True)
class Ratio:
    """``hits`` out of ``total``; its value is None when nothing was measured."""

    hits: int
    total: int

    @property
    def value(self) -> float | None:
        """``hits / total``, or None when ``total`` is 0."""
        return self.hits / self.total if self.total else None


#: Metric names, in the order tables print them, with their labels.
METRICS: dict[str, str] = {
    "in_scope_answered": "in-scope answered",
    "off_topic_declined": "off-topic declined",
    "file_top5": "expected file in top 5",
    "fact": "expected fact in the answer",
    "follow_up_file_top5": "follow-up file in top 5",
    "follow_up_fact": "follow-up fact",
    "off_topic_in_thread_declined": "off-topic in a thread declined",
    "citations_clean": "citations clean",
    "retrieved_top5": "diagnostic: expected file in top 5 retrieved",
    "follow_up_retrieved_top5": "diagnostic: follow-up file in top 5 retrieved",
}


# --------------------------------------------------------------------------- loading


def load_cases(path: Path) -> CaseSet:
    """Read and validate a cases file.

    Raises:
        InputError: one line naming the file, and the bad case and field when there is one.
    """
    try:
        raw = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read cases file {str(path)!r}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise InputError(f"cases file {str(path)!r} is not UTF-8 text") from None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InputError(f"cases file {str(path)!r} is not JSON: {exc.msg} at line {exc.lineno}") from None
    try:
        return parse_cases(data)
    except InputError as exc:
        raise InputError(f"cases file {str(path)!r}: {exc}") from None


def parse_cases(data: Any) -> CaseSet:
    """Validate the decoded JSON of a cases file.

    Raises:
        InputError: naming the bad case (by id, or position when it has none) and field.
    """
    if not isinstance(data, dict):
        raise InputError('expected an object {"version": 1, "cases": [...]}')
    cases = data.get("cases")
    if not isinstance(cases, list) or not cases:
        raise InputError('"cases" must be a non-empty list')
    for name in ("corpus", "docs_dir"):
        if not isinstance(data.get(name, ""), str):
            raise InputError(f'"{name}" must be text')
    parsed = tuple(_parse_case(item, position) for position, item in enumerate(cases, start=1))
    seen: set[str] = set()
    for case in parsed:
        if case.id in seen:
            raise InputError(f"case {case.id!r}: the id is used twice")
        seen.add(case.id)
    return CaseSet(corpus=str(data.get("corpus", "")), docs_dir=str(data.get("docs_dir", "")), cases=parsed)


def _parse_case(item: Any, position: int) -> AnswerCase:
    """Validate one case object; ``position`` (1-based) names it when its id is unusable."""
    if not isinstance(item, dict):
        raise InputError(f"case #{position}: expected an object")
    case_id = item.get("id")
    if not isinstance(case_id, str) or not case_id.strip():
        raise InputError(f"case #{position}: field 'id' must be non-empty text")
    where = f"case {case_id!r}"
    try:
        kind = CaseKind(str(item.get("kind")))
    except ValueError:
        allowed = ", ".join(k.value for k in CaseKind)
        raise InputError(f"{where}: field 'kind' must be one of {allowed}") from None
    question = _text(item, "question", where)
    follow_up = _text(item, "follow_up", where) if kind.threaded else None
    files = _text_list(item, "expected_files", where)
    keywords = _text_list(item, "expected_keywords", where)
    if kind.off_topic and (files or keywords):
        raise InputError(f"{where}: an {kind.value} case has no expected_files or expected_keywords")
    if not kind.off_topic and not files:
        raise InputError(f"{where}: field 'expected_files' must list at least one file")
    for name in files:
        if name.startswith("/") or ".." in Path(name).parts:
            raise InputError(f"{where}: expected file {name!r} must be relative to the docs folder")
    return AnswerCase(id=case_id, kind=kind, question=question, follow_up=follow_up,
                      expected_files=files, expected_keywords=keywords)


def _text(item: dict[str, Any], name: str, where: str) -> str:
    value = item.get(name)
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{where}: field {name!r} must be non-empty text")
    return value


def _text_list(item: dict[str, Any], name: str, where: str) -> tuple[str, ...]:
    value = item.get(name, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise InputError(f"{where}: field {name!r} must be a list of non-empty texts")
    return tuple(value)


def in_thread(cases: Sequence[AnswerCase]) -> list[AnswerCase]:
    """The cases plus each off-topic question asked again after an in-scope question, in its thread.

    The n-th ``out_of_scope`` case follows the n-th ``in_scope`` question (cycling); the
    derived case's id is the off-topic case's with ``@thread``. Nothing is derived when the
    file has no in-scope question, nor where the file already uses that id (each case has
    a thread of its own, named by its id).
    """
    firsts = [c.question for c in cases if c.kind is CaseKind.IN_SCOPE]
    if not firsts:
        return list(cases)
    taken = {c.id for c in cases}
    off = [c for c in cases if c.kind is CaseKind.OUT_OF_SCOPE and f"{c.id}@thread" not in taken]
    derived = [AnswerCase(id=f"{c.id}@thread", kind=CaseKind.OFF_TOPIC_IN_THREAD,
                          question=firsts[n % len(firsts)], follow_up=c.question)
               for n, c in enumerate(off)]
    return [*cases, *derived]


def missing_files(cases: CaseSet, docs: Path) -> list[tuple[str, str]]:
    """Return ``(case id, file)`` for every expected file that does not exist under ``docs``."""
    return [(case.id, name) for case in cases.cases for name in case.expected_files
            if not (docs / name).is_file()]


# --------------------------------------------------------------------------- per-case judgements


def citation_numbers(text: str) -> list[int]:
    """Return the distinct ``[n]`` numbers of ``text``'s prose in order of first use (ranges expanded).

    Code is no citation: ``<Response [200]>`` and ``np.where(d)[0]`` quote the docs.
    """
    seen: dict[int, None] = {}
    for match in _MARKER.finditer(without_code(text)):
        for part in re.split(r"[,;]", match.group(1)):
            bounds = [int(b) for b in re.split(r"[-–]", part) if b.strip()]
            if len(bounds) == 2 and 0 <= bounds[1] - bounds[0] <= _RANGE_LIMIT:
                bounds = list(range(bounds[0], bounds[1] + 1))
            for n in bounds:
                seen.setdefault(n, None)
    return list(seen)


def citations_clean(result: CaseResult) -> bool:
    """Whether every ``[n]`` is a listed source, sources are numbered 1..n, and no URL repeats."""
    indices = result.source_indices
    markers = set(citation_numbers(result.text))
    resolve = markers <= set(indices)
    numbered = sorted(indices) == list(range(1, len(indices) + 1))
    unique = len(set(result.source_urls)) == len(result.source_urls)
    return resolve and numbered and unique


def file_hit(result: CaseResult) -> bool:
    """Whether an expected file is among the first ``TOP_SOURCES`` sources of an answer."""
    if not result.answered:
        return False
    expected = set(result.case.expected_files)
    return any(name in expected for name in result.source_files[:TOP_SOURCES])


def retrieved_hit(result: CaseResult) -> bool:
    """Whether an expected file is among the first ``TOP_SOURCES`` chunks the answer was written from.

    A diagnostic beside ``file_hit``: it separates "retrieval missed the page" from "the
    answer did not cite it" (a declined question has no chunks, so it is a miss here too).
    """
    expected = set(result.case.expected_files)
    return any(name in expected for name in result.retrieved_files[:TOP_SOURCES])


def fact_hit(result: CaseResult) -> bool:
    """Whether an answer's text holds any expected keyword (case-insensitive substring)."""
    if not result.answered:
        return False
    text = result.text.casefold()
    return any(keyword.casefold() in text for keyword in result.case.expected_keywords)


def failure_reasons(result: CaseResult) -> list[str]:
    """Why a case counts as failed (empty when it passed every check that applies to it)."""
    if result.case.kind.off_topic:
        return ["answered an off-topic question"] if result.answered else []
    if not result.answered:
        return ["not answered"]
    reasons = []
    if not file_hit(result):
        reasons.append(f"no expected file in the top {TOP_SOURCES} sources")
    if result.case.expected_keywords and not fact_hit(result):
        reasons.append("expected fact missing")
    if not citations_clean(result):
        reasons.append("citations not clean")
    return reasons


# --------------------------------------------------------------------------- figures


def _ratio(results: Sequence[CaseResult], kind: CaseKind, judge: Any, *, keywords: bool = False) -> Ratio:
    pool = [r for r in results if r.case.kind is kind and (r.case.expected_keywords or not keywords)]
    return Ratio(sum(bool(judge(r)) for r in pool), len(pool))


def score(results: Sequence[CaseResult]) -> dict[str, Ratio]:
    """Compute every metric of ``METRICS`` over the results, as hit counts out of totals.

    Fact metrics only count cases that have expected keywords; citation hygiene counts
    every answered case, whatever its kind.
    """
    answered = [r for r in results if r.answered]
    return {
        "in_scope_answered": _ratio(results, CaseKind.IN_SCOPE, lambda r: r.answered),
        "off_topic_declined": _ratio(results, CaseKind.OUT_OF_SCOPE, lambda r: not r.answered),
        "file_top5": _ratio(results, CaseKind.IN_SCOPE, file_hit),
        "fact": _ratio(results, CaseKind.IN_SCOPE, fact_hit, keywords=True),
        "follow_up_file_top5": _ratio(results, CaseKind.FOLLOW_UP, file_hit),
        "follow_up_fact": _ratio(results, CaseKind.FOLLOW_UP, fact_hit, keywords=True),
        "off_topic_in_thread_declined": _ratio(results, CaseKind.OFF_TOPIC_IN_THREAD,
                                               lambda r: not r.answered),
        "citations_clean": Ratio(sum(citations_clean(r) for r in answered), len(answered)),
        "retrieved_top5": _ratio(results, CaseKind.IN_SCOPE, retrieved_hit),
        "follow_up_retrieved_top5": _ratio(results, CaseKind.FOLLOW_UP, retrieved_hit),
    }


def latency_p50(results: Sequence[CaseResult]) -> float:
    """Median latency of the scored messages, in milliseconds (0.0 for no results)."""
    return percentile([r.latency_ms for r in results], 50)
