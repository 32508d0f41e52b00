"""The Gemini generator: answers from numbered sources, searching again through a tool.

It talks to the Gemini API through the google-genai async client with automatic
function calling disabled: this module runs the tool loop itself, so every
search goes through the real pipeline (``SearchFn``), new chunks are numbered
after the existing ones, and the loop is bounded by ``max_tool_calls``.
Calls are retried and their failures mapped by core/providers (one retry policy
and one status/transport -> ProviderError table for Gemini and Cohere); what
still fails is a ``ProviderError`` the pipeline turns into the extractive fallback.
"""

from __future__ import annotations

import ssl
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import certifi
import httpx
from google import genai
from google.genai import types

from core.answer.citations import neutralize_mentions
from core.answer.prompt import (
    SYSTEM_INSTRUCTION,
    estimate_tokens,
    format_user_message,
    pack_context,
    pack_history,
)
from core.errors import ConfigurationError, ProviderResponseError
from core.models import AgentConfig, ConversationTurn, RetrievalTool, RetrievedChunk, TurnRole
from core.protocols import Generation, GenerationRequest, SearchFn
from core.providers.gemini import GEMINI
from core.providers.retry import RetryPolicy, call_with_retries
from core.settings import Settings

PROVIDER = "gemini"
TOOL_NAME = "search_knowledge_base"
#: Filter fields the model may use; a subset of core.models.FILTER_FIELDS.
TOOL_FILTERS = ("source_document", "section", "tags")

SEARCH_TOOL = RetrievalTool(
    tool_name=TOOL_NAME,
    description=(
        "Search the documentation knowledge base. Use it when the numbered sources do not answer "
        "the question; results are added as new numbered sources."
    ),
    parameters={
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What to look for, in words."},
            "top_k": {"type": "integer", "minimum": 1, "maximum": 20,
                      "description": "How many passages to return (default 5)."},
            "filters": {
                "type": "object",
                "description": "Optional restrictions on where to search.",
                "properties": {
                    "source_document": {"type": "string"},
                    "section": {"type": "string"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                },
            },
        },
        "required": ["query"],
    },
)

_BLOCKED_FINISH = frozenset({"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII",
                             "IMAGE_SAFETY", "LANGUAGE"})
#: Share of the prompt budget left for conversation history (sources get the rest).
_HISTORY_SHARE = 0.25


@dataclass(slots=True)
class _ToolState:
    """What a tool loop accumulates: the numbered chunks, searches made, tokens left."""

    chunks: list[RetrievedChunk]
    remaining: int
    calls: int = 0


class _ToolArgumentError(ValueError):
    """The model called the tool with unusable arguments; it is told so and may retry."""


class GeminiGenerator:
    """A Generator backed by Gemini, with retrieval as a bounded tool loop."""

    def __init__(
        self,
        *,
        api_key: str,
        config: AgentConfig | None = None,
        base_url: str | None = None,
        timeout: float = 30.0,
        retries: int = 3,
        retry_base_delay: float = 0.5,
        retry_max_delay: float = 8.0,
        max_tool_calls: int = 3,
        force_first_search: bool = True,
        search_top_k: int = 5,
    ) -> None:
        if not api_key:
            raise ConfigurationError("Gemini needs an API key: set GEMINI_API_KEY")
        self.config = config or AgentConfig()
        self.retries = retries
        self.retry_base_delay = retry_base_delay
        self.retry_max_delay = retry_max_delay
        self._retry = RetryPolicy(retries=retries, base_delay=retry_base_delay, max_delay=retry_max_delay)
        self.max_tool_calls = max_tool_calls
        self.force_first_search = force_first_search
        self.search_top_k = search_top_k
        # Our own httpx client: the SDK's aiohttp path subclasses ClientSession (a
        # DeprecationWarning) and retries connection errors on its own for seconds.
        self._http = httpx.AsyncClient(timeout=timeout, verify=_ssl_context())
        self._client = genai.Client(
            api_key=api_key,
            http_options=types.HttpOptions(
                base_url=base_url,
                client_args={"verify": _ssl_context()},
                api_version="v1beta",
                timeout=int(timeout * 1000),
                httpx_async_client=self._http,
                # One attempt per call: the retries below are ours, bounded and logged.
                retry_options=types.HttpRetryOptions(attempts=1),
            ),
        )

    @classmethod
    def from_settings(cls, settings: Settings, **overrides: Any) -> GeminiGenerator:
        """Build from ``Settings`` (gemini_* values and ``agent_config()``).

        Raises:
            ConfigurationError: no GEMINI_API_KEY / GOOGLE_API_KEY is set.
        """
        if settings.gemini_api_key is None:
            raise ConfigurationError("Gemini is selected but GEMINI_API_KEY is not set")
        kwargs: dict[str, Any] = {
            "api_key": settings.gemini_api_key.get_secret_value(),
            "config": settings.agent_config(),
            "base_url": settings.gemini_base_url,
            "timeout": settings.provider_timeout,
            "retries": settings.provider_retries,
            "max_tool_calls": settings.max_tool_calls,
            "force_first_search": settings.force_first_search,
            "search_top_k": settings.top_k,
        }
        kwargs.update(overrides)
        return cls(**kwargs)

    @property
    def name(self) -> str:
        """The model name, recorded as AgentResponse.model_used."""
        return self.config.model_name

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        await self._client.aio.aclose()
        await self._http.aclose()

    # ------------------------------------------------------------------ generation

    async def generate(self, request: GenerationRequest, *, search: SearchFn) -> Generation:
        """Answer from ``request.chunks`` (numbered [1..n]), searching again when the model asks.

        Args:
            request: The question, the chunks of the forced first search, the history.
            search: The pipeline's retrieval, run for each tool call.

        Returns:
            The Generation; ``chunks`` is the full numbered list the ``[n]`` refer to.

        Raises:
            RateLimitedError: 429 after the bounded retries.
            ProviderTimeoutError: no answer in time after the bounded retries.
            ProviderResponseError: 5xx, malformed, empty or safety-blocked answer.
        """
        query = request.query
        chunks = list(request.chunks)
        if not chunks and self.force_first_search:
            chunks = list(await search(query.query_text, self.search_top_k, None))
        contents, chunks, remaining = self._first_turn(request, chunks)
        state = _ToolState(chunks=chunks, remaining=remaining)
        for _ in range(self.max_tool_calls + 1):
            response = await self._call(contents, allow_tools=state.calls < self.max_tool_calls)
            candidate = _usable_candidate(response)
            calls = [p.function_call for p in (candidate.content.parts or []) if p.function_call] \
                if candidate.content else []
            if not calls:
                text = _text_of(candidate)
                if not text:
                    raise ProviderResponseError(
                        f"the answer has no text (finish reason {_finish(candidate) or 'unknown'})",
                        provider=PROVIDER,
                    )
                # Second line of defence: the prompt forbids mentions, this makes sure.
                return Generation(text=neutralize_mentions(text), chunks=state.chunks, model_used=self.name,
                                  retrieval_used=True, tool_calls=state.calls)
            assert candidate.content is not None
            contents.append(candidate.content)
            contents.append(types.Content(role="user", parts=[
                await self._answer_call(call, state, search) for call in calls]))
        raise ProviderResponseError(
            f"the model kept calling tools after {self.max_tool_calls} searches", provider=PROVIDER
        )

    def _first_turn(
        self, request: GenerationRequest, chunks: list[RetrievedChunk]
    ) -> tuple[list[types.Content], list[RetrievedChunk], int]:
        """The history and the question with its numbered sources, packed to the context window.

        Returns:
            (contents, the chunks that fit, the token budget left for tool results).
        """
        query = request.query
        prompt_budget = (
            self.config.context_window
            - self.config.max_tokens
            - estimate_tokens(SYSTEM_INSTRUCTION)
            - estimate_tokens(query.query_text)
            - estimate_tokens(query.user_context or "")
            - 64  # tags and the tool declaration
        )
        history_budget = max(0, int(prompt_budget * _HISTORY_SHARE))
        history = _history_contents(pack_history(request.history, history_budget))
        spent_history = sum(estimate_tokens(p.text or "") for c in history for p in (c.parts or []))
        remaining = max(0, prompt_budget - spent_history)
        sources, chunks = pack_context(chunks, budget_tokens=remaining)
        contents = [*history, types.Content(role="user", parts=[types.Part(text=format_user_message(
            query.query_text, sources, user_context=query.user_context))])]
        return contents, chunks, remaining - estimate_tokens(sources)

    async def _answer_call(self, call: types.FunctionCall, state: _ToolState, search: SearchFn) -> types.Part:
        """Run one tool call (within the search limit) and number the new sources after the old."""
        if state.calls >= self.max_tool_calls:
            return _tool_reply(call, {"error": "search limit reached; answer now"})
        try:
            q, top_k, filters = self._parse_args(call)
        except _ToolArgumentError as exc:
            return _tool_reply(call, {"error": str(exc)})
        found = await search(q, top_k, filters)
        state.calls += 1
        known = {c.chunk_id for c in state.chunks}
        new = [c for c in found if c.chunk_id not in known]
        text, used = pack_context(new, budget_tokens=max(0, state.remaining), start=len(state.chunks) + 1)
        state.chunks.extend(used)
        state.remaining -= estimate_tokens(text)
        return _tool_reply(call, {
            "sources": text or "No new sources found.",
            "new_source_numbers": list(range(len(state.chunks) - len(used) + 1, len(state.chunks) + 1)),
        })

    def _parse_args(self, call: types.FunctionCall) -> tuple[str, int, dict[str, Any] | None]:
        if call.name != TOOL_NAME:
            raise _ToolArgumentError(f"unknown tool {call.name!r}; use {TOOL_NAME}")
        args = dict(call.args or {})
        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            raise _ToolArgumentError("query must be a non-empty string")
        raw_k = args.get("top_k", self.search_top_k)
        try:
            top_k = max(1, min(20, int(raw_k)))
        except (TypeError, ValueError):
            raise _ToolArgumentError(f"top_k must be an integer from 1 to 20, got {raw_k!r}") from None
        filters = args.get("filters") or None
        if filters is not None:
            if not isinstance(filters, dict):
                raise _ToolArgumentError("filters must be an object")
            unknown = sorted(set(filters) - set(TOOL_FILTERS))
            if unknown:
                raise _ToolArgumentError(f"unsupported filter(s) {unknown}; use {list(TOOL_FILTERS)}")
            filters = {k: v for k, v in filters.items() if v not in (None, "", [])} or None
        return query.strip(), top_k, filters

    # ------------------------------------------------------------------ transport

    def _request_config(self, *, allow_tools: bool) -> types.GenerateContentConfig:
        return types.GenerateContentConfig(
            system_instruction=SYSTEM_INSTRUCTION,
            temperature=self.config.temperature,
            max_output_tokens=self.config.max_tokens,
            tools=[types.Tool(function_declarations=[types.FunctionDeclaration(
                name=SEARCH_TOOL.tool_name,
                description=SEARCH_TOOL.description,
                parameters_json_schema=SEARCH_TOOL.parameters,
            )])],
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
            tool_config=types.ToolConfig(function_calling_config=types.FunctionCallingConfig(
                mode=types.FunctionCallingConfigMode.AUTO if allow_tools
                else types.FunctionCallingConfigMode.NONE,
            )),
        )

    async def _call(
        self, contents: Sequence[types.Content], *, allow_tools: bool
    ) -> types.GenerateContentResponse:
        """One generateContent call, retried and mapped as every provider call is (core/providers)."""
        config = self._request_config(allow_tools=allow_tools)
        return await call_with_retries(
            lambda: self._client.aio.models.generate_content(
                model=self.config.model_name, contents=list(contents), config=config
            ),
            provider=GEMINI, policy=self._retry, what=f"generating with {self.config.model_name}",
        )


# ---------------------------------------------------------------------- helpers


@lru_cache(maxsize=1)
def _ssl_context() -> ssl.SSLContext:
    # Loading the CA bundle takes ~70 ms; every client of the process can share one context.
    # certifi's bundle, as httpx uses by default.
    return ssl.create_default_context(cafile=certifi.where())


def _history_contents(turns: Sequence[ConversationTurn]) -> list[types.Content]:
    contents = [
        types.Content(role="user" if t.role is TurnRole.USER else "model", parts=[types.Part(text=t.content)])
        for t in turns
    ]
    # Gemini expects the conversation to start with the user.
    while contents and contents[0].role != "user":
        contents.pop(0)
    return contents


def _finish(candidate: types.Candidate) -> str:
    reason = candidate.finish_reason
    return str(getattr(reason, "value", reason) or "")


def _usable_candidate(response: types.GenerateContentResponse) -> types.Candidate:
    feedback = response.prompt_feedback
    if feedback is not None and feedback.block_reason:
        reason = getattr(feedback.block_reason, "value", feedback.block_reason)
        raise ProviderResponseError(f"the prompt was blocked ({reason})", provider=PROVIDER)
    if not response.candidates:
        raise ProviderResponseError("the response has no candidates", provider=PROVIDER)
    candidate = response.candidates[0]
    finish = _finish(candidate)
    if finish in _BLOCKED_FINISH:
        raise ProviderResponseError(f"the answer was blocked (finish reason {finish})", provider=PROVIDER)
    return candidate


def _text_of(candidate: types.Candidate) -> str:
    parts = candidate.content.parts if candidate.content and candidate.content.parts else []
    return "".join(p.text for p in parts if p.text and not p.thought).strip()


def _tool_reply(call: types.FunctionCall, payload: dict[str, Any]) -> types.Part:
    return types.Part(function_response=types.FunctionResponse(
        id=call.id, name=call.name or TOOL_NAME, response=payload))


def chunk_numbers(chunks: Sequence[RetrievedChunk]) -> dict[str, int]:
    """Map chunk ids to their 1-based source numbers (handy for logs and tests)."""
    return {c.chunk_id: i for i, c in enumerate(chunks, start=1)}
