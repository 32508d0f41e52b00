"""Discord round trip: N ``/ask`` interactions through the fake gateway, beside the bare AnswerService.

Run: ``.venv/bin/python bench/discord_roundtrip.py [-n 200] [-c 20] [--where channel|thread|private]
[--fake-core]``.

The real core (``bots.runtime.build_runtime``) answers from this repository's ``docs/``,
ingested into a temporary data dir with the local embedder (no network, no keys);
``--fake-core`` (or a core that cannot be built) uses FakeAnswerService instead and
says so. The bot is the real ``RagbotDiscord`` connected to ``tests/support/fake_discord.py``
on 127.0.0.1: each interaction goes out as a gateway INTERACTION_CREATE and is timed
until the fake receives the REST call that delivers the answer. The same questions
are then timed through ``services.answers.answer`` alone, at the same concurrency,
and the ratio shows what the adapter adds. It checks that every interaction got
exactly one answer and prints a markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import pathlib
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

with warnings.catch_warnings():
    warnings.filterwarnings("ignore", "'audioop' is deprecated", DeprecationWarning)
    import discord.gateway
    import discord.http
    import yarl

from pydantic import SecretStr  # noqa: E402

from bots.chat.services import Services, fake_services  # noqa: E402
from bots.discord.client import RagbotDiscord  # noqa: E402
from core.models import EventType  # noqa: E402
from core.settings import Settings  # noqa: E402
from tests.support.fake_discord import FAKE_TOKEN, USER_ID, FakeDiscord, thread_payload  # noqa: E402

QUESTIONS = [
    "How do I connect ragbot to Slack?",
    "How do I install ragbot?",
    "How do I ingest my docs?",
    "What does the relevance threshold do?",
    "How do I export the logs?",
    "Which environment variables configure Discord?",
    "How do I use a Qdrant server?",
    "What happens when nothing relevant is found?",
]


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0..100) by nearest rank."""
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[rank]


async def timed_all(n: int, concurrency: int, one: Callable[[int], Awaitable[None]]) -> list[float]:
    """Run ``one(i)`` for i < n with at most ``concurrency`` at a time; return each duration (s)."""
    gate = asyncio.Semaphore(concurrency)
    durations = [0.0] * n

    async def run(i: int) -> None:
        async with gate:
            started = time.perf_counter()
            await one(i)
            durations[i] = time.perf_counter() - started

    await asyncio.gather(*(run(i) for i in range(n)))
    return durations


async def open_services(data_dir: pathlib.Path, *, fake_core: bool) -> tuple[Services, str]:
    """The real core over this repo's docs, or the fake one; plus a line saying which."""
    settings = Settings(_env_file=None, data_dir=data_dir, rate_limit_per_minute=0,  # type: ignore[call-arg]
                        discord_token=SecretStr(FAKE_TOKEN))
    if fake_core:
        return fake_services(settings), "FakeAnswerService (--fake-core)"
    try:
        from bots.runtime import build_runtime
        from core.ingest.sync import ingest_path
    except ImportError as exc:
        return fake_services(settings), f"FakeAnswerService (bots.runtime unavailable: {exc})"
    runtime = await build_runtime(settings)
    summary = await ingest_path(ROOT / "docs", store=runtime.store, embedder=runtime.embedder,
                                collection=settings.collection, base_url="https://ragbot.dev/docs",
                                progress=False)
    return runtime.services, f"real core (bots.runtime.build_runtime), docs/ ingested: {summary.line()}"


def answered(fake: FakeDiscord, payload: dict[str, Any]) -> int:
    """How many answer embeds the bot delivered for this interaction (posted or edited in)."""
    count = 0
    for message in fake.messages_for(payload):
        count += bool(message["embeds"]) and not message.get("edits")
        count += sum(1 for edit in message.get("edits", []) if edit.get("embeds"))
    return count


async def bench(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="ragbot-discord-bench-") as tmp:
        services, core_note = await open_services(pathlib.Path(tmp), fake_core=args.fake_core)
        fake = await FakeDiscord().start()
        saved = discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY
        discord.http.Route.BASE = fake.api_base
        discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(fake.gateway_url)
        try:
            return await _measure(args, services, fake, core_note)
        finally:
            discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = saved
            await fake.close()
            await services.aclose()


async def _measure(args: argparse.Namespace, services: Services, fake: FakeDiscord, core_note: str) -> int:
    n, c = args.n, args.concurrency
    payloads: list[dict[str, Any]] = []
    for i in range(n):
        options: dict[str, Any] = {"question": QUESTIONS[i % len(QUESTIONS)]}
        channel = None
        if args.where == "private":
            options["private"] = True
        elif args.where == "thread":
            channel = thread_payload(fake.new_id())
        payloads.append(fake.slash_payload("ask", options, user_id=USER_ID + i, channel=channel))

    async with RagbotDiscord(services=services) as client:
        client._connection.guild_ready_timeout = 0.05  # the fake sends every guild at once
        task = asyncio.create_task(client.start(FAKE_TOKEN))
        await asyncio.wait_for(client.wait_until_ready(), 30)

        async def via_discord(i: int) -> None:
            await fake.interact(payloads[i])
            await fake.wait_for(lambda: answered(fake, payloads[i]), timeout=60)

        wall = time.perf_counter()
        discord_s = await timed_all(n, c, via_discord)
        discord_wall = time.perf_counter() - wall
        await asyncio.sleep(0.2)  # late duplicates, if any, would show up here
        await client.close()
        await task

    async def bare(i: int) -> None:
        await services.answers.answer(QUESTIONS[i % len(QUESTIONS)], thread_id=f"bench:bare:{i}",
                                      user_id=str(USER_ID + i))

    wall = time.perf_counter()
    bare_s = await timed_all(n, c, bare)
    bare_wall = time.perf_counter() - wall

    answers = [answered(fake, p) for p in payloads]
    callbacks = sum(1 for p in payloads if int(p["id"]) in fake.callbacks)
    sent = [e async for e in services.activity.export(event_type=EventType.RESPONSE_SENT)]
    once = all(a == 1 for a in answers) and callbacks == n and len(sent) == n

    def row(name: str, values: list[float], wall_s: float) -> str:
        ms = [v * 1000 for v in values]
        return (f"| {name} | {len(values)} | {c} | {percentile(ms, 50):.1f} | {percentile(ms, 99):.1f} | "
                f"{statistics.fmean(ms):.1f} | {len(values) / wall_s:.0f} |")

    b50, b99 = percentile(bare_s, 50), percentile(bare_s, 99)
    d50, d99 = percentile(discord_s, 50), percentile(discord_s, 99)
    print(f"Core: {core_note}\n")
    flow = " (placeholder, thread, edit)" if args.where == "channel" else ""
    print(f"Interactions: /ask in a {args.where}{flow}; REST calls to the fake: {len(fake.calls)}\n")
    print("| path | n | concurrency | p50 ms | p99 ms | mean ms | per s |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    print(row("AnswerService.answer (bare)", bare_s, bare_wall))
    print(row("Discord /ask round trip (gateway → REST answer)", discord_s, discord_wall))
    def ratio(a: float, b: float) -> str:
        # Against a sub-millisecond fake core a ratio says nothing; the absolute numbers do.
        return f"{a / b:.1f}×" if b >= 0.001 else "n/a"

    print(f"| ratio round trip / bare | | | {ratio(d50, b50)} | {ratio(d99, b99)} | | |")
    print(f"\nExactly one answer per interaction: {'yes' if once else 'NO'} "
          f"(answers {min(answers)}..{max(answers)} per interaction, {callbacks}/{n} deferred, "
          f"{len(sent)} response_sent entries)")
    return 0 if once else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=200, help="interactions (default 200)")
    parser.add_argument("-c", "--concurrency", type=int, default=20, help="in flight at once (default 20)")
    parser.add_argument("--where", choices=["channel", "thread", "private"], default="channel")
    parser.add_argument("--fake-core", action="store_true", help="use FakeAnswerService")
    return asyncio.run(bench(parser.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
