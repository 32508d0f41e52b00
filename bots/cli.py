"""The ``ragbot`` command: ingest, ask, chat, serve, logs export, eval, discord sync.

Exit codes: 0 success, 2 bad input (one-line message), 1 unexpected failure
(short message and the path of the log file holding the traceback).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from core.errors import InputError, RagbotError, StoreBusyError, StoreUnavailableError
from core.jsonl import BadLine, iter_models
from core.models import AgentResponse, AskRequest, EventType, ResponseStatus, validate_collection_name
from core.settings import Settings, load_settings

if TYPE_CHECKING:
    from bots.runtime import Runtime

log = logging.getLogger("ragbot")
Command = Callable[[argparse.Namespace, Settings], Awaitable[int]]


def _collection(value: str) -> str:
    try:
        return validate_collection_name(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _event_type(value: str) -> EventType:
    try:
        return EventType(value)
    except ValueError:
        allowed = ", ".join(e.value for e in EventType)
        raise argparse.ArgumentTypeError(f"unknown event type {value!r}; use one of {allowed}") from None


class _Parser(argparse.ArgumentParser):
    """argparse with exit code 2 and a one-line message (its default is usage + message)."""

    def error(self, message: str) -> Any:
        self.exit(2, f"ragbot: error: {message}\n")


def _add_ingest(sub: Any) -> None:
    """``ragbot ingest`` and its safety options."""
    p = sub.add_parser("ingest", help="add or refresh a folder, file or sitemap URL in the knowledge base")
    p.add_argument("source", help="folder, file, or https://site/sitemap.xml")
    p.add_argument("--collection", type=_collection, help="collection name (default: RAGBOT_COLLECTION)")
    p.add_argument("--base-url", help="public URL of the docs, e.g. https://example.com/docs")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--replace", action="store_true",
                   help="let this folder replace the one the collection mirrors (its documents go)")
    p.add_argument("--prune", action="store_true",
                   help="allow removing more than half of the collection, or all of it")
    p.add_argument("--dry-run", action="store_true",
                   help="write nothing; list what would be added, updated and removed")
    p.add_argument("--strict", action="store_true",
                   help="refuse to ingest while a page looks like instructions to an AI assistant")
    p.add_argument("--follow-symlinks", action="store_true",
                   help="read symbolic links whose target stays inside the docs folder")
    p.set_defaults(func=cmd_ingest)


def build_parser() -> argparse.ArgumentParser:
    """The whole command line."""
    parser = _Parser(prog="ragbot", description="Answer questions from your docs, grounded and cited.")
    parser.add_argument("--version", action="version", version=f"ragbot {_version()}")
    # Not required: a bare `ragbot` lists the commands (main prints the help).
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    _add_ingest(sub)

    p = sub.add_parser("ask", help="answer one question (or a JSONL batch)")
    p.add_argument("question", nargs="?", help="the question")
    p.add_argument("--thread", help="conversation id, to ask follow-up questions")
    p.add_argument("--json", action="store_true", help="print the AgentResponse as JSON")
    p.add_argument("--batch", type=Path, help='JSONL file: {"question": ..., "thread_id": ...} per line')
    p.add_argument("--context", dest="user_context", help="extra context you provide yourself")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="print each answer's query id on stderr (for `ragbot logs show`)")
    p.set_defaults(func=cmd_ask)

    p = sub.add_parser("chat", help="talk to the bot in the terminal")
    p.add_argument("--thread", help="resume a conversation id")
    p.set_defaults(func=cmd_chat)

    p = sub.add_parser("serve", help="run every adapter whose credentials are set, in one process",
                       description=SERVE_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.set_defaults(func=cmd_serve)

    logs = sub.add_parser("logs", help="the activity log").add_subparsers(
        dest="logs_command", required=True, parser_class=_Parser)
    p = logs.add_parser("export", help="stream AgentLogEntry rows as JSONL or CSV")
    p.add_argument("--format", choices=["jsonl", "csv"], default="jsonl")
    p.add_argument("--since", help="2026-11-01, ISO datetime, or an age like 24h / 7d")
    p.add_argument("--until", help="same forms as --since (exclusive)")
    p.add_argument("--event-type", type=_event_type)
    p.add_argument("--thread", help="only this conversation id")
    p.add_argument("--query-id", help="only this question's entries")
    p.add_argument("-o", "--output", type=Path, help="file to write (default: standard output)")
    p.set_defaults(func=cmd_logs_export)

    discord_cmd = sub.add_parser("discord", help="Discord utilities").add_subparsers(
        dest="discord_command", required=True, parser_class=_Parser)
    p = discord_cmd.add_parser("sync", help="register the slash commands with Discord now")
    p.set_defaults(func=cmd_discord_sync)

    with contextlib.suppress(ImportError):
        from bots.cli_eval import register

        register(sub)
    from bots.cli_spec import register as register_spec

    register_spec(sub)
    from bots.cli_admin import register as register_admin

    register_admin(sub, logs)
    return parser


SERVE_HELP = """Run every adapter whose credentials are set, in one process, plus the CLI hand-off socket.

environment:
  SLACK_BOT_TOKEN        Slack bot token (xoxb-...); enables the Slack adapter
  SLACK_APP_TOKEN        app-level token (xapp-...): Socket Mode, no public URL needed
  SLACK_SIGNING_SECRET   verifies Slack's requests in HTTP mode (no SLACK_APP_TOKEN)
  DISCORD_TOKEN          Discord bot token; enables the Discord adapter
  PORT                   /healthz in every mode, and /slack/events in Slack HTTP mode (default 3000)
  RAGBOT_SLACK_HOST      interface to listen on (default 0.0.0.0)
  RAGBOT_LOG_RETENTION_DAYS  delete history older than this, daily (default 0: keep)
The console says which adapters connected and which failed and why. See docs/deploy.md."""


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ragbot")
    except PackageNotFoundError:
        return "unknown (not installed)"


# ---------------------------------------------------------------------- helpers


def _print_response(response: AgentResponse, *, as_json: bool, out: TextIO) -> None:
    from bots.terminal import format_answer

    if as_json:
        out.write(response.model_dump_json() + "\n")
    else:
        out.write(format_answer(response) + "\n")


async def _handed(settings: Settings, request: dict[str, Any]) -> dict[str, Any] | None:
    """Send the request to a running ``ragbot serve``; None when none is running."""
    from bots.control import call

    reply = await call(settings.control_socket, request)
    if reply is not None and not reply.get("ok"):
        code = int(reply.get("exit_code", 1))
        # The server's InputErrors (a bad question, a missing path) stay InputErrors here.
        error = InputError(str(reply.get("error"))) if code == 2 else RagbotError(str(reply.get("error")))
        error.exit_code = code
        raise error
    return reply


@contextlib.asynccontextmanager
async def _runtime(settings: Settings) -> AsyncIterator[Runtime]:
    from bots.runtime import build_runtime

    runtime = await build_runtime(settings)
    try:
        yield runtime
    finally:
        await runtime.aclose()


#: Answers one question: (question, thread_id, user_context, **options) -> response; the options
#: are RagPipeline.answer's ``top_k``, ``threshold`` and ``collection``.
Ask = Callable[..., Awaitable[AgentResponse]]


@contextlib.asynccontextmanager
async def _answerer(settings: Settings) -> AsyncIterator[Ask]:
    """Answer through a running ``ragbot serve`` when there is one, else through a local core.

    Raises:
        InputError: nothing has been ingested yet (only checked locally; a server says so itself).
    """
    if await _handed(settings, {"op": "ping"}) is not None:

        async def remote(question: str, thread_id: str | None, user_context: str | None,
                         **options: Any) -> AgentResponse:
            reply = await _handed(settings, {"op": "ask", "question": question, "thread_id": thread_id,
                                             "user_context": user_context, **options})
            if reply is None:
                raise RagbotError("the running `ragbot serve` stopped while answering; run the command again")
            return AgentResponse.model_validate(reply["response"])

        yield remote
        return
    from bots.chat.asking import log_sent

    async with _runtime(settings) as runtime:
        if await _when_free(settings, runtime) is None:
            raise InputError(f"nothing has been ingested into collection {settings.collection!r} yet: "
                             "run `ragbot ingest PATH` first")

        async def local(question: str, thread_id: str | None, user_context: str | None,
                        **options: Any) -> AgentResponse:
            response = await runtime.pipeline.answer(question, thread_id=thread_id, user_context=user_context,
                                                     **options)
            await log_sent(runtime.services.activity, response, platform="cli")
            return response

        yield local


def _busy(exc: BaseException) -> bool:
    """The knowledge base is locked by another ragbot process (``StoreBusyError``, or a WouldBlock)."""
    return isinstance(exc, StoreBusyError) or (
        isinstance(exc, StoreUnavailableError) and "WouldBlock" in f"{exc} {exc.__cause__!r}")


async def _when_free(settings: Settings, runtime: Runtime) -> Any:
    """The collection's info once no other ragbot process holds the knowledge base.

    Another ``ragbot ask --batch`` or ``ingest`` holds it while it runs: wait (saying so, once)
    up to ``RAGBOT_STORE_WAIT`` seconds, then answer, instead of failing at once.

    Raises:
        StoreUnavailableError: still held after the wait, or unusable for another reason.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + settings.store_wait
    said = False
    while True:
        try:
            return await runtime.store.collection_info(settings.collection)
        except StoreUnavailableError as exc:
            if not _busy(exc):
                raise
            if loop.time() >= deadline:
                raise StoreUnavailableError(
                    f"the knowledge base in {settings.data_dir} was still in use by another ragbot process "
                    f"after {settings.store_wait:g} s (RAGBOT_STORE_WAIT); run the command again when it "
                    "has finished, or run `ragbot serve`, which every command then hands work to") from exc
            if not said:
                print(f"ragbot: another ragbot process (an ingest or a batch) is using the knowledge base; "
                      f"waiting up to {settings.store_wait:g} s for it ...", file=sys.stderr, flush=True)
                said = True
            await asyncio.sleep(0.5)


# ---------------------------------------------------------------------- commands


async def cmd_ingest(args: argparse.Namespace, settings: Settings) -> int:
    """``ragbot ingest SOURCE``."""
    from core.ingest.options import IngestOptions

    collection = args.collection or settings.collection
    source = args.source
    if not source.startswith(("http://", "https://")):
        path = Path(source)
        if not path.exists() and not path.is_symlink():
            raise InputError(f"nothing to ingest at {source!r}: no such file or folder")
        # A file's own name is kept: resolving it would follow a link to wherever it points.
        source = str(path.resolve() if path.is_dir() else path.parent.resolve() / path.name)
    options = IngestOptions(follow_symlinks=args.follow_symlinks, prune=args.prune, dry_run=args.dry_run,
                            strict=args.strict)
    request = {"op": "ingest", "source": source, "collection": collection, "base_url": args.base_url,
               "replace": args.replace, "options": options.as_request()}
    reply = await _handed(settings, request)
    if reply is not None:
        from core.models import IngestSummary

        summary = IngestSummary.model_validate(reply["summary"])
        print(f"ingested by the running server: {summary.line()}")
    else:
        from bots.runtime import ingest

        async with _runtime(settings) as runtime:
            summary = await ingest(runtime, source, collection=collection, base_url=args.base_url,
                                   replace=args.replace, progress=False if args.no_progress else None,
                                   options=options)
        print(summary.line())
    for change in summary.changes:
        print(f"  {change}")
    for failed in summary.files_failed:
        print(f"  skipped: {failed}", file=sys.stderr)
    for left_out in summary.files_skipped:
        print(f"  left out: {left_out}", file=sys.stderr)
    for invalid in summary.chunks_invalid:
        print(f"  skipped chunk: {invalid}", file=sys.stderr)
    for page in summary.instructions:
        print(f"  looks like instructions to an assistant: {page}", file=sys.stderr)
    for notice in summary.notices:
        print(f"  note: {notice}", file=sys.stderr)
    # Every file unreadable is bad input a cron job must notice; a few are reported and tolerated.
    return 2 if summary.files and len(summary.files_failed) == summary.files else 0


def _batch_lines(path: Path) -> Iterator[tuple[int, AskRequest | BadLine]]:
    """The batch's lines; a missing file raises InputError here, a bad line is yielded as BadLine.

    A line is an AskRequest: the question (``question``, ``query_text`` or ``text``), ``thread_id``,
    ``user_context``, and ``limit``/``top_k``, ``min_score``/``threshold``, ``collection``; an
    unknown key or a bad value makes the line a BadLine naming it.
    """
    return iter_models(path, AskRequest, example='{"question": "...", "thread_id": ...}')


async def cmd_ask(args: argparse.Namespace, settings: Settings) -> int:
    """``ragbot ask "question"`` or ``ragbot ask --batch FILE.jsonl --json``.

    Exit code: 2 when a question was invalid, 1 when a search failed, else 0. In a batch,
    each bad line is reported as ``{"line": n, "error": ...}`` and the others are answered.
    """
    if args.batch is None and args.question is None:
        raise InputError("give a question, e.g. ragbot ask \"how do I install it?\", or --batch FILE")
    if args.batch is not None and args.question is not None:
        raise InputError("give either a question or --batch, not both")
    from bots.terminal import new_thread_id
    items: Iterable[tuple[int, AskRequest | BadLine]] = (
        _batch_lines(args.batch) if args.batch is not None
        # Checked by the pipeline when asked, with the question's own messages.
        else [(0, AskRequest.model_construct(query_text=args.question, thread_id=args.thread,
                                             user_context=args.user_context, top_k=None, threshold=None,
                                             collection_name=None))])
    as_json = args.json or args.batch is not None
    worst = 0
    async with _answerer(settings) as ask:
        for number, item in items:
            try:
                if isinstance(item, BadLine):
                    raise InputError(item.problem)
                # Spec 002 makes thread_id a string: a question without one starts its own thread.
                response = await ask(item.query_text, item.thread_id or new_thread_id(), item.user_context,
                                     top_k=item.top_k, threshold=item.threshold,
                                     collection=item.collection_name)
            except Exception as exc:
                if args.batch is None:
                    raise
                # One bad line never stops the batch: it is reported where it is, the rest answered.
                worst = max(worst, exc.exit_code if isinstance(exc, RagbotError) else 1)
                print(json.dumps({"line": number, "error": _line_error(exc)}), flush=True)
                continue
            _print_response(response, as_json=as_json, out=sys.stdout)
            if args.verbose:
                print(f"query id {response.query_id} (ragbot logs show {response.query_id})", file=sys.stderr)
            if response.status is ResponseStatus.RETRIEVAL_FAILED:
                worst = max(worst, 1)
    return worst


def _line_error(exc: Exception) -> str:
    if isinstance(exc, RagbotError):
        return str(exc)
    log.error("batch line failed unexpectedly", exc_info=exc)
    return f"unexpected error: {type(exc).__name__}: {exc}"


async def cmd_chat(args: argparse.Namespace, settings: Settings) -> int:
    """``ragbot chat``: the terminal adapter (hands off to a running server like ``ask``)."""
    from bots.terminal import new_thread_id, run_chat

    async with _answerer(settings) as ask:
        return await run_chat(ask, thread_id=args.thread or new_thread_id())


async def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    """``ragbot serve``: every configured adapter plus the control socket, one event loop."""
    from bots.serve import serve

    return await serve(settings)


async def cmd_logs_export(args: argparse.Namespace, settings: Settings) -> int:
    """``ragbot logs export``: streams rows; never loads the whole table."""
    from bots.runtime import export_activity_log, parse_when
    from core.private import open_private

    try:
        since = parse_when(args.since) if args.since else None
        until = parse_when(args.until) if args.until else None
    except ValueError as exc:
        raise InputError(str(exc)) from None
    if not settings.sqlite_path.exists():
        raise InputError(f"no activity log yet at {settings.sqlite_path}: ask a question first")
    try:
        target = open_private(args.output, "w", encoding="utf-8", newline="") if args.output else None
    except OSError as exc:
        raise InputError(f"cannot write {str(args.output)!r}: {exc.strerror}") from None
    with target or contextlib.nullcontext(sys.stdout) as out:
        count = await export_activity_log(settings, out, fmt=args.format, since=since, until=until,
                                          event_type=args.event_type, thread_id=args.thread,
                                          query_id=args.query_id)
    if args.output:
        print(f"wrote {count} rows to {args.output}", file=sys.stderr)
    return 0


async def cmd_discord_sync(args: argparse.Namespace, settings: Settings) -> int:
    """``ragbot discord sync``: register slash commands now."""
    from bots.discord.client import sync_commands

    if settings.discord_token is None:
        raise InputError("DISCORD_TOKEN is not set")
    await sync_commands(settings)
    return 0


# ---------------------------------------------------------------------- entry point


def _setup_logging(settings: Settings) -> Path:
    from core.private import PrivateLogHandler, private_dir

    private_dir(settings.data_dir)
    log_path = settings.data_dir / "ragbot.log"
    handler = PrivateLogHandler(log_path)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(settings.log_level)
    return log_path


def main(argv: list[str] | None = None) -> int:
    """Console entry point."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    try:
        settings = load_settings()
    except RagbotError as exc:
        if getattr(args, "without_settings", None) is not None:  # `ragbot doctor` reports it as a check
            return int(args.without_settings(exc))
        print(f"ragbot: error: {exc}", file=sys.stderr)
        return exc.exit_code
    try:
        log_path = _setup_logging(settings)
    except OSError as exc:
        print(f"ragbot: error: RAGBOT_DATA_DIR {str(settings.data_dir)!r} is not usable: {exc.strerror}",
              file=sys.stderr)
        return 2
    try:
        return asyncio.run(args.func(args, settings))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `ragbot logs export | head -1`: the reader left; no traceback, no error at exit.
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except RagbotError as exc:
        # One line, whatever failed: a locked or damaged database, a missing store ...
        if exc.exit_code != 2:
            log.error("command failed: %s", exc, exc_info=exc)
            print(f"ragbot: error: {exc} (details in {log_path})", file=sys.stderr)
        else:
            print(f"ragbot: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except Exception as exc:
        log.exception("unexpected failure")
        print(f"ragbot: unexpected error: {type(exc).__name__}: {exc} (details in {log_path})",
              file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
