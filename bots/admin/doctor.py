"""``ragbot doctor``: one line per check, OK / WARN / FAIL, with the fix; exit 1 on any FAIL.

Checks, in order: the settings, the data folder (exists, writable, private), the SQLite
database (opens, ``PRAGMA quick_check``, schema version), a running ``ragbot serve`` (its
``/healthz``), the knowledge base (collection, embedding model and dimension, points), the
last ingest recorded in the activity log, and each configured service reached with a short
timeout (Slack, Discord, Cohere, Gemini, a Qdrant server).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import aiohttp

from bots.admin.services import http_call
from core.errors import RagbotError
from core.settings import Settings


@dataclass(frozen=True, slots=True)
class Check:
    """One check's verdict."""

    name: str
    level: str  # OK, WARN or FAIL
    detail: str
    fix: str = ""

    def line(self) -> str:
        """``FAIL database      cannot open ... -> fix: ...``."""
        return f"{self.level:<5}{self.name:<15}{self.detail}" + (f"  -> fix: {self.fix}" if self.fix else "")


def settings_failed(error: Exception) -> Check:
    """The check line when the settings themselves cannot be read."""
    return Check("settings", "FAIL", str(error), "correct the variable named above (docs/configuration.md)")


def check_settings(settings: Settings) -> Check:
    """What the settings select: store, embedder, generator, adapters."""
    parts = [f"collection {settings.collection!r}",
             f"store {'Qdrant server ' + settings.qdrant_url if settings.qdrant_url else 'embedded'}",
             "Cohere embeddings" if settings.cohere_api_key else "local embeddings",
             "Gemini answers" if settings.gemini_api_key else "extractive answers"]
    tokens = (("slack", settings.slack_bot_token), ("discord", settings.discord_token))
    adapters = [name for name, token in tokens if token]
    parts.append("adapters " + (", ".join(adapters) or "none"))
    return Check("settings", "OK", "; ".join(parts))


def check_data_dir(settings: Settings) -> Check:
    """The data folder exists, is writable and is not readable by other users."""
    path = settings.data_dir
    if not path.exists():
        return Check("data dir", "WARN", f"{path} does not exist yet", "it is created by the first ingest")
    if not path.is_dir():
        return Check("data dir", "FAIL", f"{path} is not a folder", "point RAGBOT_DATA_DIR at a folder")
    if not os.access(path, os.W_OK | os.X_OK):
        return Check("data dir", "FAIL", f"{path} is not writable by this user",
                     f"chown the folder to the user running ragbot, or fix its mode: chmod 700 {path}")
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        return Check("data dir", "WARN", f"{path} is {mode:04o}: other users can read questions and ids",
                     f"chmod 700 {path}")
    return Check("data dir", "OK", f"{path} ({mode:04o}, writable)")


async def check_database(settings: Settings) -> Check:
    """The database opens, passes ``PRAGMA quick_check`` and is at this ragbot's schema version."""
    from storage.migrate import load_migrations
    from storage.stats import StatsReader

    path = settings.sqlite_path
    if not path.exists():
        return Check("database", "WARN", f"{path} does not exist yet", "it is created by the first question")
    try:
        async with await StatsReader.open(path) as db:
            result = await db.integrity()
            version = await db.schema_version()
    except RagbotError as exc:
        return Check("database", "FAIL", str(exc),
                     "if another process holds a lock, retry; if the file is damaged, restore a backup")
    if result != "ok":
        return Check("database", "FAIL", f"quick_check found damage: {result[:200]}",
                     f"stop ragbot, keep a copy of {path} and restore a backup")
    size = path.stat().st_size / 1e6
    known = load_migrations()[-1].version
    return Check("database", "OK", f"{path} ({size:.1f} MB, schema {version}/{known}, quick_check ok)")


async def serve_health(settings: Settings) -> dict[str, Any] | None:
    """The running ``ragbot serve``'s ``/healthz`` body, or None when it does not answer."""
    try:
        _, body = await http_call(f"http://127.0.0.1:{settings.port}/healthz", headers={})
    except (aiohttp.ClientError, OSError, TimeoutError):
        return None
    return body if isinstance(body, dict) else None


def expected_model(settings: Settings) -> tuple[str, int | None]:
    """The embedding model id (and dimension when known) the collection must have been built with."""
    if settings.cohere_api_key is None:
        from core.embedders.local import LOCAL_MODEL_ID, WORDLLAMA_DIM

        return LOCAL_MODEL_ID, WORDLLAMA_DIM
    # bots/runtime.py always gives Cohere the local BM25 as its sparse half: a hybrid collection.
    return f"cohere:{settings.cohere_embed_model}+bm25", settings.cohere_output_dimension


def judge_collection(settings: Settings, info: dict[str, Any] | None) -> Check:
    """The collection exists, was built with the configured model and holds chunks."""
    fix_ingest = "ragbot ingest PATH (docs/ingesting.md)"
    if info is None:
        return Check("vector store", "FAIL", f"collection {settings.collection!r} does not exist", fix_ingest)
    model, dimension = expected_model(settings)
    if info["model"] != model or (dimension is not None and info["dimension"] != dimension):
        return Check("vector store", "FAIL",
                     f"collection {settings.collection!r} was built with {info['model']} "
                     f"({info['dimension']} dimensions) but the settings embed with {model}",
                     "re-ingest with --replace, or restore the embedding settings it was built with")
    if not info["points"]:
        return Check("vector store", "FAIL", f"collection {settings.collection!r} is empty", fix_ingest)
    return Check("vector store", "OK", f"collection {settings.collection!r}: {info['points']} chunks, "
                                       f"{info['model']} ({info['dimension']} dimensions)")


async def check_store(settings: Settings, *, serving: bool) -> list[Check]:
    """The knowledge base, read through a running ``serve`` or opened here."""
    if serving:
        health = await serve_health(settings)
        if health is None:
            return [Check("serve", "WARN", "ragbot serve is running but its /healthz on port "
                          f"{settings.port} did not answer", "check PORT and RAGBOT_SLACK_HOST")]
        states = ", ".join(f"{n} {a['state']}" for n, a in health.get("adapters", {}).items()) or "no adapter"
        store = health.get("store") or {}
        serve = Check("serve", "OK" if health.get("ok") else "FAIL", f"running; {states}",
                      "" if health.get("ok") else "see the console of ragbot serve or ragbot.log")
        info = ({key: store.get(key) for key in ("model", "dimension", "points")}
                if "points" in store else None)
        return [serve, judge_collection(settings, info)]
    from bots.runtime import open_store

    try:
        if not settings.qdrant_url and not settings.store_dir.exists():
            return [judge_collection(settings, None)]
        store = open_store(settings)
        try:
            store_health = await store.health()
            found = await store.collection_info(settings.collection)
        finally:
            await store.close()
    except RagbotError as exc:
        return [Check("vector store", "FAIL", str(exc), "see docs/troubleshooting.md")]
    info = None if found is None else {"model": found.model_id, "dimension": found.dimension,
                                       "points": found.points}
    if not store_health.writable:
        # Searches may still work, but the next ingest would fail: free space or restore the folder.
        return [judge_collection(settings, info),
                Check("store writes", "FAIL", store_health.detail,
                      "free disk space or restore the data folder")]
    return [judge_collection(settings, info)]


async def check_last_ingest(settings: Settings) -> Check:
    """When the docs were last synced, from the activity log."""
    from storage.stats import StatsReader

    if not settings.sqlite_path.exists():
        return Check("last ingest", "WARN", "none recorded", "ragbot ingest PATH")
    try:
        async with await StatsReader.open(settings.sqlite_path) as db:
            last = await db.last_ingest()
    except RagbotError as exc:
        return Check("last ingest", "FAIL", str(exc))
    if last is None:
        return Check("last ingest", "WARN", "none recorded (runs before this version were not logged)",
                     "ragbot ingest PATH")
    age = datetime.now(UTC) - datetime.fromisoformat(last["when"])
    return Check("last ingest", "OK", f"{last['when'][:19]} UTC ({age.days} days ago): {last['summary']}")


async def run_checks(settings: Settings) -> list[Check]:
    """Every check, in order."""
    from bots.admin.services import check_services
    from bots.control import ping

    checks = [check_settings(settings), check_data_dir(settings), await check_database(settings)]
    serving = await ping(settings.control_socket)
    checks += await check_store(settings, serving=serving)
    checks.append(await check_last_ingest(settings))
    checks += await check_services(settings)
    return checks
