"""Which of an answer's sources it cites, and which it only lists as related pages.

The core lists the pages ranked next after the cited ones (``core.answer.citations.with_related``),
numbered after them but never cited in the text: shown as "[3] Install", a reader looks for a
"[3]" the answer does not have. Each platform shows the cited sources numbered and the others
apart, as related pages; so are the pages a "not found" reply lists as the closest (it cites none).
"""

from __future__ import annotations

from collections.abc import Sequence

from core.answer.citations import cited_indices
from core.models import AgentResponse, ResponseStatus, Source


def cited_and_related(text: str, sources: Sequence[Source]) -> tuple[list[Source], list[Source]]:
    """The sources ``text`` cites, in their order, and the others; all are cited when it cites none."""
    cited = set(cited_indices(text))
    ordered = sorted(sources, key=lambda s: s.index)
    if not cited & {s.index for s in ordered}:
        return ordered, []
    return [s for s in ordered if s.index in cited], [s for s in ordered if s.index not in cited]


def listed_sources(response: AgentResponse) -> tuple[list[Source], list[Source]]:
    """The sources ``response`` cites and the pages it lists besides (``cited_and_related``).

    A "not found" reply cites nothing: the pages it lists came closest, and none answers.
    """
    if response.status is ResponseStatus.NO_RELEVANT_DOCUMENTS:
        return [], sorted(response.sources, key=lambda s: s.index)
    return cited_and_related(response.response_text, response.sources)
