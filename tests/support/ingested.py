"""A docs folder ingested through the real runtime (no keys), and runtimes over the result."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from bots.runtime import Runtime, build_runtime, ingest
from core.settings import Settings


def local_settings(data_dir: Path) -> Settings:
    """The embedded default's settings over ``data_dir``, ignoring any ``.env`` file."""
    return Settings(_env_file=None, data_dir=data_dir)  # type: ignore[call-arg]


def ingest_folder(docs: Path, data_dir: Path, *, base_url: str) -> Path:
    """Ingest ``docs`` into ``data_dir`` (for a module-scoped fixture); returns ``data_dir``."""

    async def load() -> None:
        rt = await build_runtime(local_settings(data_dir))
        try:
            await ingest(rt, str(docs), base_url=base_url, progress=False)
        finally:
            await rt.aclose()

    asyncio.run(load())
    return data_dir


@asynccontextmanager
async def runtime_over(data_dir: Path) -> AsyncIterator[Runtime]:
    """A runtime over an ingested data folder, closed on exit."""
    rt = await build_runtime(local_settings(data_dir))
    try:
        yield rt
    finally:
        await rt.aclose()
