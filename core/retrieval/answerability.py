"""Does the collection answer this question? One decision from signals that mean the same everywhere.

Five signals, each independent of the corpus's size and subject; the first four are read
off the fused ranking before anything is cut, the fifth off the question and the
collection's vocabulary:

* ``relevance``: the relevance (``core.retrieval.ranking.relevance``: the share of the
  question's terms a chunk holds, discounted when its meaning disagrees) of the first
  candidate. The mean of the first three, used before, declined short questions that one
  section answers ("which python version do i need": 0.46, 0.50, then 0.17); how widely
  the docs agree is the ``held`` and ``pages`` signals' part;
* ``held``: how many of the question's terms the first three chunks hold, a count, not a share:
  a share alone punishes every extra word a person types ("i've only got 8gb" halves it),
  while the count says a long message still found much of itself in the docs (capped at
  ten; its weakness, measured in BENCHMARKS.md: a long off-topic message, such as a pasted
  traceback, holds many common words too, and is answered more often than before);
* ``cosine``: the best dense similarity between the question and a top-ten chunk, always on
  the local model's scale (see ``HybridRetriever``), so it means the same with Cohere;
* ``pages``: how many different pages the first five candidates come from: the docs that
  answer a question agree on where; an off-topic question scatters over unrelated pages;
* ``names``: whether the question names something neither the docs nor English know
  (``core.retrieval.query.unknown_names``: "mujoco", "grpc", "pyinstaller"). A near miss
  shares every other word with the docs; what it asks about is the name they never use.
  Typos of English words ("sensers") are not names. People also name their own stack
  ("behind zscaler"), so it lowers the odds rather than deciding.

One more piece of evidence overrides them: a phrase of two or more words the question
quotes ("prof keeps saying 'reality gap'"), or a code name it types (``api.insecure``,
``--soft-time-limit``, ``keyType``; a file's or a host's name is none), that one of the first
three candidates holds word for word (``named``). People quote or type the term they ask
about, and docs that use the very phrase discuss it, however many chat words around it lower
the other signals.

They are combined by a logistic model (class-balanced, so 0.5 weighs a wrong "not found"
and a wrong answer alike) whose five constants were fitted on chat-style questions over
five corpora (gazebo-docs and robotics-textbook-2 from ../shared/data/devsets,
the team's robotics-textbook set, and our own fastapi-docs and uv-docs sets in
bench/answer_cases/), after choosing the signals by leaving each corpus out in turn and
scoring the fit on the one left out (BENCHMARKS.md, "Answers to chat-style questions"; the
first candidate's relevance replaced the mean of three in the sixth pass: leave-one-corpus-out
over all eight sets 13.89 -> 13.97, fitted on the five and tested on the three later sets
5.16 -> 5.25).
The ``names`` signal was added in the seventh pass (leave-one-corpus-out over the eight sets
13.97 -> 14.49, every corpus held out gaining or tying; fitted on the five and tested on the
three later sets 5.25 -> 5.30; long off-topic messages declined 0.75 -> 0.85). It had been
measured in the first pass and left out: without telling typos from names it did not hold on
unseen corpora. Also left out there: an IDF-weighted coverage.
No word list, synonym or corpus name is involved.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

#: Logistic weights: the first candidate's relevance, best cosine, pages among the top five
#: (/5), bias, mean terms held by the top three (/HELD_CAP), and a name unknown to the docs.
W_RELEVANCE = 6.098
W_COSINE = 7.046
W_PAGES = -1.504
BIAS = -6.413
W_HELD = 8.619
W_NAMES = -2.06
#: Terms held beyond this count add nothing more (a long message's count stops growing).
HELD_CAP = 10
#: The probability given to a question whose quoted phrase or typed code name the candidates hold
#: word for word.
NAMED_PROBABILITY = 0.9
#: Candidates the terms-held mean reads and the page count looks at.
HELD_DEPTH = 3
PAGES_DEPTH = 5


@dataclass(frozen=True, slots=True)
class Answerability:
    """The decision's inputs and the probability that the docs answer the question."""

    probability: float
    relevance: float
    cosine: float
    pages: int
    held: float
    named: bool = False
    names: tuple[str, ...] = ()

    def summary(self) -> str:
        """One line for the activity log."""
        named = "; a quoted phrase or typed name found word for word" if self.named else ""
        names = f"; names the docs do not use: {', '.join(self.names)}" if self.names else ""
        return (f"answerable p={self.probability:.2f} (relevance {self.relevance:.2f}, "
                f"{self.held:g} term(s) held, cosine {self.cosine:.2f}, "
                f"{self.pages} page(s) in the top {PAGES_DEPTH}{names}{named})")


def judge(*, relevances: Sequence[float], held: Sequence[int], cosine: float, pages: int,
          named: bool = False, names: Sequence[str] = ()) -> Answerability:
    """Combine the signals into the probability that the docs answer the question.

    Args:
        relevances: relevance of the first candidates in fused order (the first counts).
        held: how many of the question's distinct search terms each of those candidates holds
            (the first three count).
        cosine: the best question-chunk cosine among the first ten (local model's scale).
        pages: distinct pages among the first five candidates.
        named: a top candidate holds a phrase the question quotes, or a code name it types,
            word for word.
        names: the question's words neither the docs nor English know (``unknown_names``).

    Returns:
        The Answerability; no candidates at all gives probability 0.
    """
    if not relevances:
        return Answerability(probability=0.0, relevance=0.0, cosine=cosine, pages=pages, held=0.0)
    relevance = relevances[0]
    counts = list(held[:HELD_DEPTH])
    mean_held = sum(counts) / len(counts) if counts else 0.0
    z = (W_RELEVANCE * relevance + W_HELD * min(mean_held, HELD_CAP) / HELD_CAP
         + W_COSINE * max(cosine, 0.0) + W_PAGES * min(pages, PAGES_DEPTH) / PAGES_DEPTH
         + (W_NAMES if names else 0.0) + BIAS)
    probability = round(1.0 / (1.0 + math.exp(-z)), 4)
    if named:
        probability = max(probability, NAMED_PROBABILITY)
    return Answerability(probability=probability, relevance=round(relevance, 4),
                         cosine=cosine, pages=pages, held=round(mean_held, 2), named=named,
                         names=tuple(names))
