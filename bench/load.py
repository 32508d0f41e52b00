"""Load: Slack HTTP and the Discord gateway at once against one data folder, idle and during re-ingests.

Run: ``.venv/bin/python bench/load.py [--questions 500] [--concurrency 50] [--soak 600]``.

One real core (``bots.runtime.build_runtime`` over a temporary data folder with ragbot's own
``docs/`` ingested: local embeddings, extractive answers, SQLite) serves both adapters in one
event loop, as ``ragbot serve`` does. Half the questions are signed ``app_mention`` events
POSTed to ``/slack/events`` (answered through a fake Slack Web API), half are ``/ask``
interactions sent over the fake Discord gateway; ``--concurrency`` are in flight at once.

Phases: *idle*; *re-ingest* (the same load while the docs, every page edited, are ingested
again and again in the same loop, as a hand-off to ``ragbot serve`` does); then a *soak* of
``--soak`` seconds alternating both, with the process RSS at its start and end. For every
phase it checks that each question got exactly one answer on its platform and that the log
holds exactly one ``query_received``, ``response_generated`` and ``response_sent`` per
question (none lost, none duplicated), and prints p50/p99 latency and the error rate.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import pathlib
import shutil
import sys
import tempfile
import time
import warnings
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import aiohttp
from aiohttp import web

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # discord.py imports audioop
    import discord.gateway
    import discord.http
    import yarl

from pydantic import SecretStr  # noqa: E402

from bench.discord_roundtrip import answered  # noqa: E402
from bots.discord.client import RagbotDiscord  # noqa: E402
from bots.runtime import Runtime, build_runtime, ingest  # noqa: E402
from bots.slack.app import build_slack_app, slack_web_app  # noqa: E402
from core.models import EventType  # noqa: E402
from core.settings import Settings  # noqa: E402
from tests.support.fake_discord import FAKE_TOKEN, USER_ID, FakeDiscord  # noqa: E402
from tests.support.fake_slack import Call, FakeSlack  # noqa: E402

SECRET = "load-signing-secret"
QUESTIONS = [
    "How do I connect ragbot to Slack?", "How do I install ragbot?", "How do I ingest my docs?",
    "Which environment variables configure ragbot?", "How do I export the logs as an admin?",
    "How do I run ragbot with a Qdrant server?", "What API keys does ragbot need?",
    "How do I deploy ragbot?", "What does ragbot do when it cannot find an answer?",
    "How does ragbot handle follow-up questions?",
]


def rss_mib() -> float:
    """Resident set size of this process, from /proc (Linux)."""
    for line in pathlib.Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (nan for no values)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5))) - 1]


@dataclass
class Phase:
    """What one phase sent and what came back."""

    name: str
    sent: Counter[str] = field(default_factory=Counter)
    answered_once: int = 0
    latencies: list[float] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    log_ok: bool = False
    errors_logged: int = 0
    seconds: float = 0.0
    ingests: int = 0

    @property
    def total(self) -> int:
        return sum(self.sent.values())

    @property
    def error_rate(self) -> float:
        return (self.total - self.answered_once + self.errors_logged) / max(1, self.total)


class Load:
    """The fakes, the adapters and the core, wired once; ``run`` sends one batch of questions."""

    def __init__(self, runtime: Runtime, slack: FakeSlack, discord_fake: FakeDiscord) -> None:
        self.runtime = runtime
        self.slack = slack
        self.discord = discord_fake
        self.url = ""
        self.n = 0
        self._slack_done: dict[str, asyncio.Future[float]] = {}
        slack.listeners.append(self._on_slack_call)

    def _on_slack_call(self, call: Call) -> None:
        future = self._slack_done.get(str(call.params.get("channel")))
        if call.method == "chat.update" and future is not None and not future.done():
            future.set_result(time.perf_counter())

    async def slack_one(self, http: aiohttp.ClientSession, i: int) -> float:
        channel, ts = f"C{i:06d}", f"1700000000.{i:06d}"
        self._slack_done[channel] = asyncio.get_running_loop().create_future()
        body = json.dumps({"type": "event_callback", "team_id": "T1", "api_app_id": "A1",
                           "event_id": f"EvLoad{i:07d}", "event_time": int(time.time()),
                           "event": {"type": "app_mention", "user": f"U{i:06d}", "channel": channel,
                                     "ts": ts, "event_ts": ts, "text": f"<@UBOT> {QUESTIONS[i % 10]}"}})
        stamp = str(int(time.time()))
        from slack_sdk.signature import SignatureVerifier

        signature = SignatureVerifier(SECRET).generate_signature(timestamp=stamp, body=body) or ""
        started = time.perf_counter()
        async with http.post(self.url, data=body.encode(), headers={
                "Content-Type": "application/json", "X-Slack-Request-Timestamp": stamp,
                "X-Slack-Signature": signature}) as resp:
            if resp.status != 200:
                raise RuntimeError(f"Slack answered HTTP {resp.status}")
        return await asyncio.wait_for(self._slack_done[channel], 120) - started

    async def discord_one(self, i: int) -> float:
        payload = self.discord.slash_payload("ask", {"question": QUESTIONS[i % 10]},
                                             user_id=USER_ID + i)
        started = time.perf_counter()
        await self.discord.interact(payload)
        await self.discord.wait_for(lambda: answered(self.discord, payload), timeout=120)
        self._discord_payloads.append(payload)
        return time.perf_counter() - started

    def forget(self) -> None:
        """Drop what the fakes recorded in earlier rounds: the soak measures the bot's memory, not theirs."""
        self.slack.calls.clear()
        self._slack_done.clear()
        for record in (self.discord.calls, self.discord.messages, self.discord.followups,
                       self.discord.callbacks, self.discord.threads):
            record.clear()

    async def run(self, phase: Phase, questions: int, concurrency: int) -> None:
        """Send ``questions`` (alternately Slack and Discord), ``concurrency`` at a time."""
        gate = asyncio.Semaphore(concurrency)
        self.forget()
        self._discord_payloads: list[dict[str, Any]] = []
        slack_channels: list[str] = []

        async def one(http: aiohttp.ClientSession, k: int) -> None:
            self.n += 1
            i, platform = self.n, ("slack" if k % 2 == 0 else "discord")
            async with gate:
                phase.sent[platform] += 1
                if i % 250 == 0:
                    print(f"  [{phase.name}] question {i}, RSS {rss_mib():.0f} MiB", file=sys.stderr,
                          flush=True)
                try:
                    if platform == "slack":
                        slack_channels.append(f"C{i:06d}")
                        phase.latencies.append(await self.slack_one(http, i))
                    else:
                        phase.latencies.append(await self.discord_one(i))
                except Exception as exc:
                    phase.problems.append(f"{platform} question {i}: {type(exc).__name__}: {exc}")

        async with aiohttp.ClientSession() as http:
            await asyncio.gather(*(one(http, k) for k in range(questions)))
        await asyncio.sleep(0.5)  # a duplicate answer, if any, would arrive now
        updates = Counter(str(c.params.get("channel")) for c in self.slack.calls
                          if c.method == "chat.update")
        phase.answered_once += sum(1 for c in slack_channels if updates[c] == 1)
        phase.answered_once += sum(1 for p in self._discord_payloads if answered(self.discord, p) == 1)


async def check_log(runtime: Runtime, phase: Phase, since: datetime) -> None:
    """Exactly one query_received, response_generated and response_sent per question of the phase."""
    per_query: dict[str, Counter[EventType]] = {}
    sent_by: Counter[str] = Counter()
    async for entry in runtime.services.activity.export(since=since):
        if entry.event_type is EventType.ERROR:
            phase.errors_logged += 1
        if entry.query_id:
            per_query.setdefault(entry.query_id, Counter())[entry.event_type] += 1
        if entry.event_type is EventType.RESPONSE_SENT:
            sent_by[(entry.response_summary or "").split(":")[0]] += 1
    wanted = (EventType.QUERY_RECEIVED, EventType.RESPONSE_GENERATED, EventType.RESPONSE_SENT)
    bad = [q for q, c in per_query.items() if any(c[t] != 1 for t in wanted)]
    phase.log_ok = not bad and len(per_query) == phase.total and sent_by == phase.sent
    if not phase.log_ok:
        phase.problems.append(f"log: {len(per_query)} queries for {phase.total} questions, {len(bad)} "
                              f"with a lost or duplicated row, response_sent by platform {dict(sent_by)}")


async def reingest_forever(runtime: Runtime, docs: pathlib.Path, phase: Phase, pause: float) -> None:
    """Edit every page and ingest the folder again, every ``pause`` seconds, until cancelled."""
    while True:
        phase.ingests += 1
        for page in sorted(docs.rglob("*.md")):
            revision = f"\n\nRevision {phase.name} {phase.ingests}.\n"
            page.write_text(page.read_text("utf-8") + revision, "utf-8")
        await ingest(runtime, str(docs), progress=False)
        await asyncio.sleep(pause)


async def measure(load: Load, name: str, args: argparse.Namespace, docs: pathlib.Path | None) -> Phase:
    """One phase of ``args.questions`` questions, with re-ingests running when ``docs`` is given."""
    phase = Phase(name)
    since = datetime.now(UTC)
    started = time.perf_counter()
    ingesting = (asyncio.create_task(reingest_forever(load.runtime, docs, phase, args.ingest_pause))
                 if docs else None)
    try:
        await load.run(phase, args.questions, args.concurrency)
    finally:
        if ingesting is not None:
            ingesting.cancel()
            await asyncio.gather(ingesting, return_exceptions=True)
    phase.seconds = time.perf_counter() - started
    await check_log(load.runtime, phase, since)
    return phase


async def soak(load: Load, args: argparse.Namespace, docs: pathlib.Path) -> tuple[Phase, float, float]:
    """Alternate idle and re-ingest rounds for ``args.soak`` seconds; RSS before and after."""
    total = Phase("soak")
    start_rss = rss_mib()
    deadline = time.perf_counter() + args.soak
    rounds = 0
    while time.perf_counter() < deadline:
        part = await measure(load, f"soak{rounds}", args, docs if rounds % 2 else None)
        rounds += 1
        total.sent.update(part.sent)
        total.answered_once += part.answered_once
        total.latencies += part.latencies
        total.errors_logged += part.errors_logged
        total.problems += part.problems
        total.ingests += part.ingests
        total.seconds += part.seconds
    total.log_ok = not [p for p in total.problems if p.startswith("log")]
    return total, start_rss, rss_mib()


def report(phases: list[Phase], rss: tuple[float, float, float, float], args: argparse.Namespace) -> int:
    print(f"## Load: {args.questions} questions per phase, {args.concurrency} in flight, "
          "Slack HTTP + Discord gateway, one data folder\n")
    print("| phase | questions (slack/discord) | answered exactly once | log rows exact | errors | "
          "p50 ms | p99 ms | per s | re-ingests |")
    print("|---|---|---:|---|---:|---:|---:|---:|---:|")
    for p in phases:
        p50, p99 = (percentile(p.latencies, q) * 1000 for q in (50, 99))
        print(f"| {p.name} | {p.total} ({p.sent['slack']}/{p.sent['discord']}) | {p.answered_once} | "
              f"{'yes' if p.log_ok else 'NO'} | {p.error_rate:.2%} | {p50:.0f} | {p99:.0f} | "
              f"{p.total / max(p.seconds, 1e-9):.1f} | {p.ingests} |")
    start, warm, soak_start, soak_end = rss
    print(f"\nRSS: {start:.0f} MiB after start-up, {warm:.0f} MiB after the first phases; soak of "
          f"{args.soak:.0f} s: {soak_start:.0f} -> {soak_end:.0f} MiB")
    failed = False
    for p in phases:
        for problem in p.problems[:10]:
            print(f"- {p.name}: {problem}")
        failed |= bool(p.problems) or p.answered_once != p.total or not p.log_ok
    return 1 if failed else 0


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=500, help="questions per phase (default 500)")
    parser.add_argument("--concurrency", type=int, default=50, help="in flight at once (default 50)")
    parser.add_argument("--soak", type=float, default=60.0, help="soak seconds (default 60; 0 skips it)")
    parser.add_argument("--ingest-pause", type=float, default=1.0,
                        help="seconds between two re-ingests of the re-ingest phases (default 1)")
    parser.add_argument("--embed-on-loop", action="store_true",
                        help="embed documents on the event loop, as before issue 10 item 15 (for comparison)")
    args = parser.parse_args(argv)
    if args.embed_on_loop:
        from core.embedders.local import LocalEmbedder

        async def inline(self: LocalEmbedder, texts: Any) -> Any:
            return self._embed_documents(list(texts))

        LocalEmbedder.embed_documents = inline  # type: ignore[method-assign]
    slack, discord_fake = await FakeSlack().start(), await FakeDiscord().start()
    saved = discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY
    discord.http.Route.BASE = discord_fake.api_base
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(discord_fake.gateway_url)
    try:
        with tempfile.TemporaryDirectory(prefix="ragbot-load-") as tmp:
            return await _run(args, pathlib.Path(tmp), slack, discord_fake)
    finally:
        discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = saved
        await slack.close()
        await discord_fake.close()


async def _run(args: argparse.Namespace, tmp: pathlib.Path, slack: FakeSlack, fake: FakeDiscord) -> int:
    docs = tmp / "docs"
    shutil.copytree(ROOT / "docs", docs)
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None, data_dir=tmp / "data", rate_limit_per_minute=0,
        slack_bot_token=SecretStr("xoxb-load"), slack_signing_secret=SecretStr(SECRET),
        slack_api_url=slack.api_url, discord_token=SecretStr(FAKE_TOKEN),
        slack_app_token=None, cohere_api_key=None, gemini_api_key=None, qdrant_url=None,
    )
    runtime = await build_runtime(settings)
    try:
        await ingest(runtime, str(docs), progress=False)
        start_rss = rss_mib()
        runner = web.AppRunner(slack_web_app(build_slack_app(services=runtime.services)), access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        load = Load(runtime, slack, fake)
        load.url = f"http://127.0.0.1:{runner.addresses[0][1]}/slack/events"
        async with RagbotDiscord(services=runtime.services) as client:
            client._connection.guild_ready_timeout = 0.05
            gateway = asyncio.create_task(client.start(FAKE_TOKEN))
            await asyncio.wait_for(client.wait_until_ready(), 30)
            phases = [await measure(load, "idle", args, None), await measure(load, "re-ingest", args, docs)]
            warm_rss = rss_mib()
            soak_rss = (warm_rss, warm_rss)
            if args.soak > 0:
                soaked, *soak_rss_list = await soak(load, args, docs)
                phases.append(soaked)
                soak_rss = (soak_rss_list[0], soak_rss_list[1])
            await client.close()
            await gateway
        await runner.cleanup()
    finally:
        await runtime.aclose()
    return report(phases, (start_rss, warm_rss, *soak_rss), args)


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
