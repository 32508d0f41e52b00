"""A fake Cohere v2 API on 127.0.0.1: checks request shapes, answers, fails on demand.

Point ``COHERE_BASE_URL`` (``Settings.cohere_base_url``) at ``FakeCohere.url`` and the
real ``cohere.AsyncClientV2`` talks to it. ``POST /v2/embed`` and ``POST /v2/rerank``
are implemented; any other request is recorded in ``unexpected`` and answered 404.
Every request that breaks the API's rules is recorded in ``violations`` and answered 400.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from aiohttp import web

from tests.support.loopback import start_app

API_KEY = "test-key"
#: Backoff short enough for tests: retries cost milliseconds.
FAST_RETRIES: dict[str, Any] = {"retry_base_delay": 0.001, "retry_max_delay": 0.01}
MAX_TEXTS = 96
EMBED_MODELS = {"embed-v4.0": 1536, "embed-english-v3.0": 1024}
RERANK_MODELS = {"rerank-v3.5"}
INPUT_TYPES = {"search_document", "search_query", "classification", "clustering"}


@dataclass(frozen=True, slots=True)
class Scripted:
    """One scripted answer: an HTTP status and body, or a delay before answering normally."""

    status: int = 200
    body: Any = None
    raw: str | None = None
    headers: dict[str, str] | None = None
    delay: float = 0.0


def vector(text: str, dim: int) -> list[float]:
    """A deterministic unit vector for ``text`` (so tests can check order)."""
    seed = hashlib.sha256(text.encode()).digest()
    raw = [((seed[i % 32] + i) % 17) - 8.0 for i in range(dim)]
    norm = math.sqrt(sum(v * v for v in raw)) or 1.0
    return [v / norm for v in raw]


class FakeCohere:
    """Imitates api.cohere.com's v2 embed and rerank endpoints.

    Attributes:
        calls: (path, json body) of every request to a known route, in order.
        script: path -> answers to give before the normal one, consumed in order.
        rerank_scores: relevance per document index; default: documents containing more
            query words score higher.
    """

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.violations: list[str] = []
        self.unexpected: list[str] = []
        self.script: dict[str, list[Scripted]] = {"/v2/embed": [], "/v2/rerank": []}
        self.rerank_scores: dict[int, float] | None = None
        self.return_dimension: int | None = None
        self._runner: web.AppRunner | None = None
        self.url = ""

    async def start(self) -> FakeCohere:
        """Listen on a free loopback port."""
        app = web.Application()
        app.router.add_post("/v2/embed", self._embed)
        app.router.add_post("/v2/rerank", self._rerank)
        app.router.add_route("*", "/{tail:.*}", self._other)
        self._runner, port = await start_app(app, shutdown_timeout=0.1)
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def close(self) -> None:
        """Stop the server."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def bodies(self, path: str) -> list[dict[str, Any]]:
        """JSON bodies of every call to ``path``."""
        return [b for p, b in self.calls if p == path]

    # ------------------------------------------------------------------ handlers

    async def _begin(self, request: web.Request) -> tuple[dict[str, Any], web.StreamResponse | None]:
        body: dict[str, Any] = await request.json()
        self.calls.append((request.path, body))
        if request.headers.get("Authorization") != f"Bearer {API_KEY}":
            return body, self._violation(f"Authorization header was {request.headers.get('Authorization')!r}",
                                         status=401)
        script = self.script.get(request.path)
        if script:
            item = script.pop(0)
            if item.delay:
                await asyncio.sleep(item.delay)
            if item.raw is not None:
                return body, web.Response(status=item.status, text=item.raw, headers=item.headers,
                                          content_type="application/json")
            if item.body is not None or item.status != 200:
                return body, web.json_response(item.body or {"message": "scripted failure"},
                                               status=item.status, headers=item.headers)
        return body, None

    def _violation(self, message: str, *, status: int = 400) -> web.Response:
        self.violations.append(message)
        return web.json_response({"message": message}, status=status)

    async def _embed(self, request: web.Request) -> web.StreamResponse:
        body, early = await self._begin(request)
        if early is not None:
            return early
        texts = body.get("texts")
        model = body.get("model")
        if model not in EMBED_MODELS:
            return self._violation(f"unknown embed model {model!r}")
        if body.get("input_type") not in INPUT_TYPES:
            return self._violation(f"input_type {body.get('input_type')!r} is invalid")
        if not isinstance(texts, list) or not texts or len(texts) > MAX_TEXTS:
            return self._violation(f"texts must hold 1..{MAX_TEXTS} strings, got {len(texts or [])}")
        if body.get("embedding_types") != ["float"]:
            return self._violation(f"embedding_types was {body.get('embedding_types')!r}")
        dim = body.get("output_dimension") or EMBED_MODELS[model]
        dim = self.return_dimension or dim
        return web.json_response({
            "id": "embed-1",
            "response_type": "embeddings_by_type",
            "embeddings": {"float": [vector(t, dim) for t in texts]},
            "texts": texts,
            "meta": {"api_version": {"version": "2"}, "billed_units": {"input_tokens": len(texts)}},
        })

    async def _rerank(self, request: web.Request) -> web.StreamResponse:
        body, early = await self._begin(request)
        if early is not None:
            return early
        if body.get("model") not in RERANK_MODELS:
            return self._violation(f"unknown rerank model {body.get('model')!r}")
        documents = body.get("documents")
        if not isinstance(documents, list) or not documents or not isinstance(body.get("query"), str):
            return self._violation("query and documents are required")
        top_n = body.get("top_n") or len(documents)
        words = set(body["query"].lower().split())
        scores = self.rerank_scores or {
            i: len(words & set(d.lower().split())) / (len(words) or 1) for i, d in enumerate(documents)
        }
        ranked = sorted(scores.items(), key=lambda kv: -kv[1])[:top_n]
        return web.json_response({
            "id": "rerank-1",
            "results": [{"index": i, "relevance_score": s} for i, s in ranked],
            "meta": {"api_version": {"version": "2"}, "billed_units": {"search_units": 1}},
        })

    async def _other(self, request: web.Request) -> web.StreamResponse:
        self.unexpected.append(f"{request.method} {request.path}")
        return web.json_response({"message": "not found"}, status=404)


@asynccontextmanager
async def serving() -> AsyncIterator[FakeCohere]:
    """A started FakeCohere, stopped after the block; fails if the SDK called unknown routes."""
    server = await FakeCohere().start()
    try:
        yield server
    finally:
        await server.close()
    assert server.unexpected == [], "the SDK called routes the fake does not know"


class Recorder:
    """An httpx client whose every request URL is recorded, to prove nothing goes elsewhere."""

    def __init__(self, timeout: float = 5.0) -> None:
        self.urls: list[str] = []

        async def record(request: httpx.Request) -> None:
            self.urls.append(str(request.url))

        self.client = httpx.AsyncClient(timeout=timeout, event_hooks={"request": [record]})


def unused_loopback_url() -> str:
    """An http://127.0.0.1 URL on a port nothing listens on (a refused connection)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


@pytest.fixture(name="fake")
async def fake_cohere() -> AsyncIterator[FakeCohere]:
    """The ``fake`` fixture of the Cohere test modules: a served FakeCohere."""
    async with serving() as server:
        yield server


@pytest.fixture(name="recorder")
def recorder_fixture() -> Recorder:
    """The ``recorder`` fixture of the Cohere test modules."""
    return Recorder()
