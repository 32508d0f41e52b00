"""Which parts an answer quotes: the best block, then blocks answering what it leaves out, never twice.

Pure bookkeeping over the scored units of ``core.answer.excerpt``: what is quoted, from which
pages, how much, and which blocks repeat one already quoted (pages repeat a note; chunks overlap).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from core.answer.blocks import Block
from core.answer.links import link_labels
from core.answer.passage import EXCERPT_CHARS
from core.answer.units import Unit, prose_chars, quote_key

#: A passage adding none of the question's words (another answer to it, on the same page or a
#: second one) is added only when it scores this close to the best one. Until the ninth pass only
#: a second page could be; the same page's "you can disable it by setting ..." after its "by
#: default ..." went unquoted (BENCHMARKS.md, ninth pass).
RUNNER_UP_RATIO = 0.8
#: A further block is quoted when it holds at least this share of the question's weighted
#: terms that the answer so far leaves out...
MIN_NEW_COVERAGE = 0.1
#: ...and scores at least this share of the best block.
EXTRA_RATIO = 0.6
#: A sentence this long or longer, quoted already inside a longer block, is not quoted again.
_REPEAT_CHARS = 40
_WORD = re.compile(r"\w+")


class Picker:
    """Chooses the parts of an answer: the best block, then blocks that answer what it leaves out.

    People ask two or three things in one message; after the best block, the next part is
    the block that holds the most of the question's weighted terms not yet quoted (from the
    same page or, within ``max_sources``, another), while the answer is still short; failing
    that, the best block not yet quoted that scores almost as well as the first.
    """

    def __init__(self, *, scored: Sequence[tuple[float, Unit]], weights: dict[str, float],
                 chunk_urls: Sequence[str], max_sources: int) -> None:
        self.scored = scored
        self.chunk_urls = chunk_urls
        self.weights = weights
        self.total = sum(weights.values()) or 1.0
        self.top = scored[0][0]
        self.max_sources = max_sources
        self.urls: list[str] = []
        self.chosen: set[tuple[int, int]] = set()
        self.quoted: set[str] = set()
        self.said: list[str] = []
        self.covered: set[str] = set()
        self.size = 0

    def take(self, url: str, grown: Sequence[Unit]) -> list[Unit]:
        """Record ``grown`` (from page ``url``) as quoted; return the blocks not quoted before."""
        for unit in grown:
            self.chosen.add((unit.chunk, unit.position))
            self.covered |= unit.terms
        selected = _unseen(grown, self.quoted, self.said)
        if selected and url not in self.urls:
            self.urls.append(url)  # a page counts against max_sources only once it is quoted
        self.size += sum(prose_chars(u.block) for u in selected if u.block.kind != "code")
        return selected

    def next_part(self) -> Unit | None:
        """The next block worth quoting, or None when the answer is complete or long enough."""
        if self.size >= EXCERPT_CHARS:
            return None
        best: Unit | None = None
        best_gain = 0.0
        runner_up: Unit | None = None
        for score, unit in self.scored:
            if score < EXTRA_RATIO * self.top:
                break
            if (unit.chunk, unit.position) in self.chosen:
                continue
            if self.chunk_urls[unit.chunk] not in self.urls and len(self.urls) >= self.max_sources:
                continue
            if runner_up is None and score >= RUNNER_UP_RATIO * self.top:
                runner_up = unit
            gain = sum(w for t, w in self.weights.items() if t in unit.terms and t not in self.covered)
            gain /= self.total
            if gain > best_gain:
                best, best_gain = unit, gain
        if best is None or best_gain < MIN_NEW_COVERAGE:
            return runner_up
        return best


def _unseen(selected: Sequence[Unit], quoted: set[str], said: list[str]) -> list[Unit]:
    """Drop blocks already quoted (pages repeat a note; chunks overlap), remembering the rest.

    ``quoted`` holds each block quoted by its ``quote_key``, ``said`` by its ``_words``. A block
    counts as quoted when its words were, whatever its links point at or its fence's language,
    and a sentence when a longer block quoted holds it ("... run Prettier with a file watcher.").
    """
    kept = []
    for unit in selected:
        key = quote_key(unit.block.text)
        words = _words(unit.block)
        inside = unit.block.kind == "para" and len(words) >= _REPEAT_CHARS and any(
            f" {words} " in f" {s} " for s in said)  # whole words: "run it" is not in "rerun it"
        seen = key in quoted or (bool(words) and words in said) or inside
        # A tab's label ("Linux:") names the code under it, which decides whether it repeats.
        repeated = seen and not unit.block.is_tab_label
        if not repeated:
            quoted.add(key)
            said.append(words)
            kept.append(unit)
        elif unit.block.kind in ("code", "list", "table"):
            # "macOS:" over the same command as Linux's labels nothing, and "Reinstall the
            # dependencies:" over a command quoted before introduces nothing; nor does a lead-in
            # over that lead-in.
            position = unit.position
            while (kept and (kept[-1].chunk, kept[-1].position) == (unit.chunk, position - 1)
                   and kept[-1].block.is_bare_lead_in):
                position = kept[-1].position
                _unsay(kept, quoted, said)
    if kept and kept[-1] is selected[-1] and kept[-1].block.is_tab_label:
        _unsay(kept, quoted, said)  # a label ending the passage labels nothing
    return kept


def _unsay(kept: list[Unit], quoted: set[str], said: list[str]) -> None:
    """Take the last block kept back, as if never quoted."""
    label = kept.pop().block
    quoted.discard(quote_key(label.text))
    said.remove(_words(label))


def _words(block: Block) -> str:
    """What a block says, as a reader compares it.

    Prose: its words, without link addresses or punctuation. Code: its lines without the fence
    (``sh`` or ``bash``), spaces collapsed; JSON and YAML of the same settings differ.
    """
    if block.kind == "code":
        return " ".join("\n".join(block.text.split("\n")[1:-1]).split())  # inside its fences
    return " ".join(_WORD.findall(link_labels(block.text)))
