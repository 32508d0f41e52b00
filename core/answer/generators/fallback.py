"""Falling back from the LLM to the extractive answerer.

Two reasons to fall back: the provider failed (a ``ProviderError`` after its
bounded retries) or the answer could not be grounded in its sources. Either way
the user still gets a cited answer, and ``Generation.fallback_reason`` says why,
for the pipeline's ``error`` log entry.
"""

from __future__ import annotations

from core.answer.grounding import DEFAULT_THRESHOLDS, GroundingReport, GroundingThresholds, Similarity
from core.answer.grounding import validate_grounding as _validate
from core.errors import ProviderError
from core.protocols import Generation, GenerationRequest, Generator, SearchFn


async def generate_with_fallback(
    primary: Generator, fallback: Generator, request: GenerationRequest, search: SearchFn
) -> Generation:
    """Run ``primary``; on ProviderError answer with ``fallback`` and set ``fallback_reason``.

    Args:
        primary: Usually the GeminiGenerator.
        fallback: Usually the ExtractiveGenerator.
        request: The question and its chunks.
        search: The pipeline's retrieval for tool calls.

    Returns:
        The primary's Generation, or the fallback's with ``fallback_reason`` set.
    """
    try:
        return await primary.generate(request, search=search)
    except ProviderError as exc:
        generation = await fallback.generate(request, search=search)
        generation.fallback_reason = f"{primary.name} failed ({type(exc).__name__}): {exc}"
        return generation


async def generate_grounded(
    primary: Generator,
    fallback: Generator,
    request: GenerationRequest,
    search: SearchFn,
    *,
    similarity: Similarity | None = None,
    thresholds: GroundingThresholds = DEFAULT_THRESHOLDS,
) -> tuple[Generation, GroundingReport]:
    """Like ``generate_with_fallback``, and also fall back when grounding fails.

    Args:
        primary: Usually the GeminiGenerator.
        fallback: Usually the ExtractiveGenerator (grounded by construction).
        request: The question, its chunks and the user's context.
        search: The pipeline's retrieval for tool calls.
        similarity: Dense similarity for grounding (the pipeline's WordLlama).
        thresholds: Grounding thresholds.

    Returns:
        ``(generation, report)``: the report is for the generation returned; when the
        primary's answer failed grounding, the fallback's answer and report are
        returned and ``fallback_reason`` lists what was unsupported.
    """
    user_context = request.query.user_context
    generation = await generate_with_fallback(primary, fallback, request, search)
    report = _validate(generation.text, generation.chunks, user_context=user_context,
                       similarity=similarity, thresholds=thresholds)
    if report.passed or generation.fallback_reason is not None:
        return generation, report
    v = report.validation
    reason = (
        f"{primary.name} answer failed grounding ({v.method}): "
        f"{v.unsupported_sentences} unsupported sentence(s)"
        + (f", invalid citation(s) {v.invalid_citations}" if v.invalid_citations else "")
    )
    replacement = await fallback.generate(request, search=search)
    replacement.fallback_reason = reason
    replacement.tool_calls = generation.tool_calls
    report = _validate(replacement.text, replacement.chunks, user_context=user_context,
                       similarity=similarity, thresholds=thresholds)
    return replacement, report
