"""Does the collection answer this question? One decision from signals that mean the same everywhere.

Three signals, each independent of the corpus's size and subject:

* ``relevance`` of the best-fused chunk (``core.retrieval.ranking.relevance``: the share of
  the question's terms it holds, discounted when its meaning disagrees);
* ``cosine``: the best dense similarity between the question and a top chunk, always on the
  local model's scale (see ``HybridRetriever``), so it means the same with Cohere embeddings;
* ``unknown_names``: words of the question that the collection never uses and that are not
  English words either ("mujoco", "kubernetes", "quicksort"): a question about a named thing
  the docs never mention is very likely about something else.

They are combined by a logistic model whose four constants were fitted on three corpora's
chat-style questions (gazebo-docs, robotics-textbook-2, robotics-textbook: in-scope versus
off-topic and near-miss), after checking that a fit on any one or two corpora holds on the
others (BENCHMARKS.md, "Answers to chat-style questions"). No word list, synonym or corpus
name is involved.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from core.retrieval.lexicon import Lexicon
from core.retrieval.query import FILLER, english_words
from core.retrieval.terms import STOPWORDS, tokens

#: Logistic weights: relevance, cosine, "the question names something unknown", bias.
W_RELEVANCE = 8.45
W_COSINE = 9.13
W_UNKNOWN_NAME = -1.70
BIAS = -5.64
#: Probability at or above which the extractive answerer answers.
DEFAULT_MIN_PROBABILITY = 0.5


@dataclass(frozen=True, slots=True)
class Answerability:
    """The decision and what it was made from (logged with the ranking step)."""

    probability: float
    relevance: float
    cosine: float
    unknown_names: tuple[str, ...]

    def summary(self) -> str:
        """One line for the activity log."""
        names = f", unknown {', '.join(self.unknown_names)}" if self.unknown_names else ""
        return (f"answerable p={self.probability:.2f} (relevance {self.relevance:.2f}, "
                f"cosine {self.cosine:.2f}{names})")


def unknown_names(text: str, lexicon: Lexicon) -> list[str]:
    """Words of ``text`` that neither the collection nor English knows (names, jargon).

    An empty lexicon (nothing recorded yet) knows no word, so it names nothing rather
    than everything.
    """
    if lexicon.empty:
        return []
    english = english_words()
    return [w for w in dict.fromkeys(tokens(text))
            if len(w) >= 3 and w.isalpha() and w not in STOPWORDS and w not in FILLER
            and w not in english and not lexicon.knows(w)]


def judge(*, relevance: float, cosine: float, names: Sequence[str]) -> Answerability:
    """Combine the three signals into the probability that the docs answer the question."""
    z = W_RELEVANCE * relevance + W_COSINE * max(cosine, 0.0) + BIAS + (W_UNKNOWN_NAME if names else 0.0)
    return Answerability(probability=round(1.0 / (1.0 + math.exp(-z)), 4), relevance=relevance,
                         cosine=cosine, unknown_names=tuple(names))
