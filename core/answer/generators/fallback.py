"""The one fallback path: a Generator that answers with the LLM and falls back to quoting.

Two reasons to fall back: the provider failed (a ``ProviderError`` after its
bounded retries) or the answer could not be grounded in its sources. Either way
the user still gets a cited answer, ``Generation.fallback_reason`` says why (the
pipeline logs it as an ``error`` entry) and ``Generation.grounding`` carries the
verdict on what is returned. A model's "the sources do not answer this" reply
(``core.answer.prompt.NOT_IN_DOCS``) is passed through untouched.
"""

from __future__ import annotations

from core.answer.deadline import before_deadline
from core.answer.grounding import DEFAULT_THRESHOLDS, GroundingReport, GroundingThresholds, Similarity
from core.answer.grounding import validate_grounding as _validate
from core.answer.prompt import says_not_in_docs
from core.errors import ProviderError
from core.models import GroundingValidation
from core.protocols import Generation, GenerationRequest, Generator, SearchFn

VALIDATION_NOTE = (
    "_The generated answer could not be checked against the docs, so here are the most "
    "relevant passages instead._"
)


class FallbackGenerator:
    """Answer with ``primary``; quote with ``fallback`` when it fails or is not grounded.

    Args:
        primary: usually the GeminiGenerator (may be the fallback itself: no keys).
        fallback: the ExtractiveGenerator, grounded by construction.
        similarity: dense similarity for grounding checks of the primary's answers.
        thresholds: grounding thresholds.
    """

    def __init__(
        self,
        *,
        primary: Generator,
        fallback: Generator,
        similarity: Similarity | None = None,
        thresholds: GroundingThresholds = DEFAULT_THRESHOLDS,
    ) -> None:
        self.primary = primary
        self.fallback = fallback
        self.similarity = similarity
        self.thresholds = thresholds

    @property
    def name(self) -> str:
        """The primary's name (recorded as model_used unless a fallback answered)."""
        return self.primary.name

    async def generate(self, request: GenerationRequest, *, search: SearchFn) -> Generation:
        """Answer ``request``; see the module docstring for when the fallback answers."""
        if self.primary is self.fallback:
            return self._checked(await self.fallback.generate(request, search=search), request, quoted=True)
        try:
            generation = await before_deadline(self.primary.generate(request, search=search), "the answer")
        except ProviderError as exc:  # DeadlineExceeded included: past the deadline, quote instead
            generation = await self.fallback.generate(request, search=search)
            generation.fallback_reason = f"generation failed, answered extractively: {exc}"
            return self._checked(generation, request, quoted=True)
        if says_not_in_docs(generation.text):
            return generation
        report = self._report(generation, request, quoted=False)
        if report.passed:
            return _with(generation, report)
        return await self._replace(generation, report, request, search)

    async def _replace(self, generation: Generation, failed: GroundingReport, request: GenerationRequest,
                       search: SearchFn) -> Generation:
        """Quote the same chunks instead of an ungrounded answer, with a note saying so."""
        v = failed.validation
        replacement = await self.fallback.generate(
            GenerationRequest(query=request.query, chunks=generation.chunks, history=request.history,
                              search_text=request.search_text), search=search)
        report = self._report(replacement, request, quoted=True)
        report.validation.unsupported = v.unsupported
        return _with(Generation(
            text=f"{VALIDATION_NOTE}\n\n{replacement.text}", chunks=replacement.chunks,
            model_used=f"{generation.model_used}->{replacement.model_used}", retrieval_used=True,
            tool_calls=generation.tool_calls, validation_failed=True,
            fallback_reason=(f"validation_failed: {v.unsupported_sentences} unsupported sentence(s), "
                             f"invalid citations {v.invalid_citations}; answered extractively instead"),
        ), report)

    def _report(self, generation: Generation, request: GenerationRequest, *, quoted: bool) -> GroundingReport:
        # Quoted passages are verbatim: the word-level check suffices, the dense one only costs time.
        return _validate(generation.text, generation.chunks, user_context=request.query.user_context,
                         similarity=None if quoted else self.similarity, thresholds=self.thresholds)

    def _checked(self, generation: Generation, request: GenerationRequest, *, quoted: bool) -> Generation:
        if quoted:
            # Quoted passages are the sources' own words: grounded by construction, nothing to check.
            generation.grounding = GroundingValidation(method="quoted", passed=True)
            generation.grounding_confidence = 1.0
            return generation
        return _with(generation, self._report(generation, request, quoted=quoted))


def _with(generation: Generation, report: GroundingReport) -> Generation:
    generation.grounding = report.validation
    generation.grounding_confidence = report.grounding_confidence
    return generation
