"""Slack round trip: signed @mentions through the HTTP app against a fake Slack Web API.

Run: ``.venv/bin/python bench/slack_roundtrip.py [--events 200] [--concurrency 20] [--fake]``.

It sends ``--events`` signed ``app_mention`` events, ``--concurrency`` at a time, to
``/slack/events`` served on a loopback port, and times each from the POST to the
fake receiving the final ``chat.update``. In the same run it times the bare
AnswerService on the same questions at the same concurrency, so the adapter's
overhead shows as a ratio. It then checks that every event got exactly one
placeholder and one answer, and one complete set of log entries. The real core
(``bots.runtime.build_runtime`` over a temporary data dir with ragbot's own ``docs/``
ingested, local embedder and extractive answers, no API keys) is used when it
loads; otherwise, or with ``--fake``, FakeAnswerService stands in and the table
says so.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import pathlib
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable

import aiohttp
from aiohttp import web
from pydantic import SecretStr
from slack_sdk.signature import SignatureVerifier

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bots.chat.services import Services, fake_services  # noqa: E402
from bots.slack.app import RagbotSlackApp, build_slack_app, slack_web_app  # noqa: E402
from core.models import EventType  # noqa: E402
from core.settings import Settings  # noqa: E402
from tests.support.fake_slack import Call, FakeSlack  # noqa: E402

SECRET = "bench-signing-secret"
QUESTIONS = [
    "How do I connect ragbot to Slack?",
    "How do I install ragbot?",
    "How do I ingest my docs?",
    "Which environment variables configure ragbot?",
    "How do I export the logs as an admin?",
    "How do I run ragbot with a Qdrant server?",
    "What API keys does ragbot need?",
    "How do I deploy ragbot?",
    "What does ragbot do when it cannot find an answer?",
    "How does ragbot handle follow-up questions?",
]
#: What the pipeline plus the adapter log for one answered question.
REQUIRED = (EventType.QUERY_RECEIVED, EventType.EMBEDDING_GENERATED, EventType.RETRIEVAL_PERFORMED,
            EventType.RESPONSE_GENERATED, EventType.RESPONSE_SENT)


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile of ``values`` (0 < q <= 100)."""
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


async def open_services(
    settings: Settings, *, use_fake: bool
) -> tuple[Services, str, Callable[[], Awaitable[None]]]:
    """The real core over ``settings.data_dir`` with docs/ ingested, or the fake one."""
    if not use_fake:
        try:
            from bots.runtime import build_runtime
            from core.ingest.sync import ingest_path

            runtime = await build_runtime(settings)
            try:
                summary = await ingest_path(
                    ROOT / "docs", store=runtime.store, embedder=runtime.embedder,
                    collection=settings.collection, base_url="https://ragbot.dev/docs", progress=False,
                )
            except BaseException:
                await runtime.aclose()
                raise
            return runtime.services, f"real core ({summary.line()})", runtime.aclose
        except Exception as exc:  # a partial checkout still gets a number, clearly labelled
            note = f"FakeAnswerService (real core unavailable: {type(exc).__name__}: {exc})"
    else:
        note = "FakeAnswerService (--fake)"
    services = fake_services(settings)

    async def nothing() -> None:
        return None

    return services, note, nothing


async def bare_latencies(services: Services, *, events: int, concurrency: int) -> list[float]:
    """Time ``services.answers.answer`` alone on the same questions at the same concurrency."""
    gate = asyncio.Semaphore(concurrency)
    latencies: list[float] = []

    async def one(i: int) -> None:
        async with gate:
            started = time.perf_counter()
            await services.answers.answer(QUESTIONS[i % len(QUESTIONS)], thread_id=f"bench:bare:{i}",
                                          user_id=f"UBARE{i}")
            latencies.append(time.perf_counter() - started)

    await asyncio.gather(*(one(i) for i in range(events)))
    return latencies


async def slack_latencies(
    services: Services, fake: FakeSlack, *, events: int, concurrency: int
) -> tuple[list[float], list[float], dict[str, str]]:
    """Send signed mentions to the HTTP app; return answer latencies, ack latencies, channel -> thread."""
    app = build_slack_app(services=services)
    runner = web.AppRunner(slack_web_app(app), access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    url = f"http://127.0.0.1:{runner.addresses[0][1]}/slack/events"
    loop = asyncio.get_running_loop()
    answered: dict[str, asyncio.Future[float]] = {
        f"C{i:04d}": loop.create_future() for i in range(events)
    }

    def on_call(call: Call) -> None:
        future = answered.get(str(call.params.get("channel")))
        if call.method == "chat.update" and future is not None and not future.done():
            future.set_result(call.at)

    fake.listeners.append(on_call)
    gate = asyncio.Semaphore(concurrency)
    latencies: list[float] = []
    acks: list[float] = []
    threads: dict[str, str] = {}
    signer = SignatureVerifier(SECRET)

    async def one(session: aiohttp.ClientSession, i: int) -> None:
        channel, ts = f"C{i:04d}", f"1700000000.{i:06d}"
        threads[channel] = f"slack:T1:{channel}:{ts}"
        body = json.dumps({
            "type": "event_callback", "team_id": "T1", "api_app_id": "A1", "event_id": f"EvBench{i:05d}",
            "event_time": int(time.time()),
            "event": {"type": "app_mention", "user": f"U{i:05d}", "channel": channel, "ts": ts,
                      "event_ts": ts, "text": f"<@UBOT> {QUESTIONS[i % len(QUESTIONS)]}"},
        })
        async with gate:
            stamp = str(int(time.time()))
            headers = {"Content-Type": "application/json", "X-Slack-Request-Timestamp": stamp,
                       "X-Slack-Signature": signer.generate_signature(timestamp=stamp, body=body) or ""}
            started = time.perf_counter()
            async with session.post(url, data=body.encode(), headers=headers) as resp:
                if resp.status != 200:
                    raise RuntimeError(f"event {i} got HTTP {resp.status}: {await resp.text()}")
            acks.append(time.perf_counter() - started)
            done_at = await asyncio.wait_for(answered[channel], timeout=120)
            latencies.append(done_at - started)

    try:
        async with aiohttp.ClientSession() as session:
            await asyncio.gather(*(one(session, i) for i in range(events)))
        assert isinstance(app, RagbotSlackApp)
        await app.bot.drain()
    finally:
        fake.listeners.remove(on_call)
        await runner.cleanup()
    return latencies, acks, threads


async def check(services: Services, fake: FakeSlack, threads: dict[str, str]) -> tuple[int, int, list[str]]:
    """Count events answered exactly once and threads with exactly one complete log set."""
    posts = Counter(str(p.get("channel")) for p in fake.calls_to("chat.postMessage"))
    updates = Counter(str(p.get("channel")) for p in fake.calls_to("chat.update"))
    once = sum(1 for ch in threads if posts[ch] == 1 and updates[ch] == 1)
    per_thread: dict[str, Counter[EventType]] = defaultdict(Counter)
    async for entry in services.activity.export():
        if entry.thread_id:
            per_thread[entry.thread_id][entry.event_type] += 1
    problems: list[str] = []
    complete = 0
    for thread in threads.values():
        counts = per_thread.get(thread, Counter())
        wanted = REQUIRED if counts[EventType.QUERY_RECEIVED] else (EventType.RESPONSE_SENT,)
        if all(counts[t] == 1 for t in wanted) and not counts[EventType.ERROR]:
            complete += 1
        elif len(problems) < 5:
            problems.append(f"{thread}: {dict(counts)}")
    return once, complete, problems


async def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print a markdown table; exit 1 if a check fails."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=20)
    parser.add_argument("--fake", action="store_true", help="use FakeAnswerService even if the core loads")
    args = parser.parse_args(argv)

    fake = await FakeSlack().start()
    with tempfile.TemporaryDirectory(prefix="ragbot-bench-") as tmp:
        settings = Settings(  # type: ignore[call-arg]
            _env_file=None, data_dir=pathlib.Path(tmp), rate_limit_per_minute=0,
            slack_bot_token=SecretStr("xoxb-test"), slack_signing_secret=SecretStr(SECRET),
            slack_api_url=fake.api_url,
            slack_app_token=None, cohere_api_key=None, gemini_api_key=None, qdrant_url=None,
        )
        services, note, close = await open_services(settings, use_fake=args.fake)
        try:
            # Warm up (model loading, caches) outside the measured runs.
            await bare_latencies(services, events=len(QUESTIONS), concurrency=len(QUESTIONS))
            bare = await bare_latencies(services, events=args.events, concurrency=args.concurrency)
            wall = time.perf_counter()
            slack, acks, threads = await slack_latencies(
                services, fake, events=args.events, concurrency=args.concurrency
            )
            wall = time.perf_counter() - wall
            once, complete, problems = await check(services, fake, threads)
        finally:
            await close()
            await fake.close()

    ms = 1000.0
    print(f"## Slack round trip: {args.events} mentions, {args.concurrency} at a time\n")
    print(f"Answer service: {note}\n")
    print("| measure | p50 ms | p99 ms | mean ms |")
    print("|---|---:|---:|---:|")
    for label, values in (("bare AnswerService.answer", bare), ("Slack event -> answer (chat.update)", slack),
                          ("Slack HTTP ack", acks)):
        mean = sum(values) / len(values)
        print(f"| {label} | {percentile(values, 50) * ms:.1f} | {percentile(values, 99) * ms:.1f} "
              f"| {mean * ms:.1f} |")
    ratio50 = percentile(slack, 50) / percentile(bare, 50)
    ratio99 = percentile(slack, 99) / percentile(bare, 99)
    print(f"| overhead ratio (Slack / bare) | {ratio50:.2f}x | {ratio99:.2f}x | |")
    print()
    print(f"- answered exactly once (1 placeholder, 1 update): {once}/{args.events}")
    print(f"- complete log sets ({', '.join(t.value for t in REQUIRED)}; no error): {complete}/{args.events}")
    print(f"- throughput: {args.events / wall:.1f} events/s over {wall:.1f} s")
    for problem in problems:
        print(f"  - {problem}")
    return 0 if once == complete == args.events else 1


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
