"""Slack adapter: answers @mentions in threads, DMs and thread follow-ups from the docs.

The adapter depends on ``bots.chat.services.Services`` only. Bolt acknowledges each
event before our listener runs (``process_before_response=False``), so Slack
gets its answer within 3 s however long the pipeline takes; the listener then
reacts with :eyes:, posts a placeholder in the thread, asks the AnswerService and
replaces the placeholder with the cited answer. Retried deliveries are recognised
by their ``event_id`` through ``services.events`` and answered once.

Run it alone with ``python -m bots.slack.app`` (Socket Mode when ``SLACK_APP_TOKEN``
is set, otherwise HTTP on ``PORT`` at ``/slack/events``); ``docs/slack.md`` walks
through the set-up.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Iterator
from datetime import datetime
from typing import Any

import aiohttp
from aiohttp import web
from pydantic import SecretStr
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.async_app import AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from bots.chat.services import Services, log_sent
from bots.slack import format as fmt
from core.errors import ConfigurationError, QueryValidationError, RateLimitExceeded
from core.models import MAX_TEXT_LENGTH, AgentLogEntry, AgentResponse, EventType, Feedback, ResponseStatus
from core.settings import Settings
from storage.export import ExportFormat, export_bundle, parse_when

log = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"
HEALTH_PATH = "/healthz"
EXPORT_COMMAND = "/ragbot-export"
DEFAULT_API_URL = "https://slack.com/api/"
#: Message subtypes that are still a person writing; edits, joins, bot posts etc. are not.
_HUMAN_SUBTYPES = frozenset({None, "thread_broadcast", "file_share"})


def _secret(value: SecretStr | None) -> str | None:
    return value.get_secret_value() if value is not None and value.get_secret_value() else None


def slack_api_base(settings: Settings) -> str:
    """The Web API base URL: ``SLACK_API_URL`` (for tests and proxies) or slack.com's.

    Args:
        settings: ragbot's settings.

    Returns:
        A base URL ending with ``/``, as AsyncWebClient expects.
    """
    url = settings.slack_api_url or DEFAULT_API_URL
    return url if url.endswith("/") else url + "/"


def slack_thread_id(team: str, channel: str, thread_ts: str | None) -> str:
    """The conversation key of a Slack thread; a DM's main timeline counts as one thread.

    Args:
        team: workspace id.
        channel: channel or DM id.
        thread_ts: timestamp of the thread's first message, None for a DM's main timeline.

    Returns:
        ``slack:{team}:{channel}:{thread_ts}`` (``...:dm`` without a thread).
    """
    return f"slack:{team}:{channel}:{thread_ts or 'dm'}"


def parse_export_args(text: str, *, now: datetime | None = None) -> tuple[ExportFormat, datetime | None]:
    """Parse ``/ragbot-export`` arguments: an optional format and an optional start.

    The start is read by ``storage.export.parse_when``, as ``ragbot logs export --since``
    and Discord's ``/export-logs`` read it.

    Args:
        text: what followed the command, e.g. ``"csv 7d"`` or ``"2025-01-31"``.
        now: the current time (for relative starts), default now in UTC.

    Returns:
        ``(format, since)``; format defaults to jsonl, since to None (everything).

    Raises:
        ValueError: naming the argument that is neither a format nor a start.
    """
    export_format: ExportFormat | None = None
    since: datetime | None = None
    for token in text.split():
        lowered = token.lower()
        if lowered in ("jsonl", "csv") and export_format is None:
            export_format = "csv" if lowered == "csv" else "jsonl"
            continue
        if since is None and lowered not in ("jsonl", "csv"):
            try:
                since = parse_when(token, now=now)
            except ValueError as exc:
                raise ValueError(f"{token!r} is not a format (jsonl or csv) or a start date: {exc}") from None
            continue
        raise ValueError(f"{token!r} is not a format (jsonl or csv) or a start date, or repeats one")
    return export_format or "jsonl", since


class SlackBot:
    """ragbot's Slack listeners over one Services bundle.

    Args:
        services: the answer service and stores.
    """

    def __init__(self, *, services: Services) -> None:
        self.services = services
        # Bolt runs each listener as a task it keeps no reference to; holding them here
        # keeps them alive and lets shutdown (and tests) wait for answers in progress.
        self._tasks: set[asyncio.Task[Any]] = set()

    @contextlib.contextmanager
    def _in_flight(self) -> Iterator[None]:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            yield
        finally:
            if task is not None:
                self._tasks.discard(task)

    async def drain(self, timeout: float = 30.0) -> None:
        """Wait (up to ``timeout`` seconds) for listeners still working on an event."""
        current = asyncio.current_task()
        pending = {t for t in self._tasks if t is not current and not t.done()}
        if pending:
            await asyncio.wait(pending, timeout=timeout)

    # ------------------------------------------------------------------ events

    async def on_app_mention(
        self, body: dict[str, Any], event: dict[str, Any], context: AsyncBoltContext, client: AsyncWebClient
    ) -> None:
        """Answer ``@ragbot question`` in the message's thread."""
        with self._in_flight():
            channel = str(event.get("channel", ""))
            # DMs also arrive as message.im; answer those once, in on_message.
            if channel.startswith("D") or self._from_bot(event, context):
                return
            if not await self._first_delivery(body):
                return
            thread_ts = str(event.get("thread_ts") or event.get("ts"))
            await self._question(
                client, event=event, team=self._team(body, event, context), channel=channel,
                reply_ts=thread_ts, thread_ts=thread_ts, bot_user_id=context.bot_user_id,
            )

    async def on_message(
        self, body: dict[str, Any], event: dict[str, Any], context: AsyncBoltContext, client: AsyncWebClient
    ) -> None:
        """Answer DMs, and follow-ups in threads the bot has answered in."""
        with self._in_flight():
            if event.get("subtype") not in _HUMAN_SUBTYPES or self._from_bot(event, context):
                return
            channel = str(event.get("channel", ""))
            team = self._team(body, event, context)
            thread_ts = event.get("thread_ts")
            if event.get("channel_type") != "im":
                if (
                    self.services.settings.slack_followups != "thread"
                    or not thread_ts
                    or thread_ts == event.get("ts")
                ):
                    return
                bot_user_id = context.bot_user_id
                if bot_user_id and f"<@{bot_user_id}" in str(event.get("text", "")):
                    return  # the app_mention event answers this one
                turns = await self.services.conversations.recent_turns(
                    slack_thread_id(team, channel, thread_ts), limit=1
                )
                if not turns:
                    return
            if not await self._first_delivery(body):
                return
            await self._question(
                client, event=event, team=team, channel=channel,
                reply_ts=thread_ts, thread_ts=thread_ts, bot_user_id=context.bot_user_id,
            )

    # ------------------------------------------------------------------ feedback

    async def on_feedback(
        self, ack: Any, body: dict[str, Any], action: dict[str, Any], client: AsyncWebClient
    ) -> None:
        """Store a :+1: / :-1: click (a second click replaces the vote) and thank the user."""
        await ack()
        with self._in_flight():
            vote = fmt.vote_for_action(str(action.get("action_id", "")))
            response_id = str(action.get("value") or "")
            user = str((body.get("user") or {}).get("id") or "")
            if vote is None or not response_id or not user:
                log.warning("ignoring a feedback click without vote, response or user: %s", action)
                return
            container = body.get("container") or {}
            channel = str((body.get("channel") or {}).get("id") or container.get("channel_id") or "")
            thread_ts = (body.get("message") or {}).get("thread_ts") or container.get("thread_ts")
            team = str((body.get("team") or {}).get("id") or "")
            thread_id = slack_thread_id(team, channel, thread_ts) if channel else None
            try:
                await self.services.feedback.record_feedback(
                    Feedback(response_id=response_id, user_id=user, vote=vote, platform="slack")
                )
                await self.services.activity.log(AgentLogEntry(
                    event_type=EventType.FEEDBACK_RECEIVED, thread_id=thread_id,
                    response_summary=f"slack: user {user} voted {vote:+d} on response {response_id}",
                ))
                text = fmt.feedback_thanks(vote)
            except Exception as exc:  # a broken store must not leave the click unanswered
                reference = await self._log_error(
                    thread_id=thread_id, question=None,
                    details=f"slack: storing feedback on {response_id} failed: {type(exc).__name__}: {exc}",
                )
                text = f"Sorry, I couldn't record your vote (reference `{reference}`)."
            if channel:
                kwargs: dict[str, Any] = {"thread_ts": thread_ts} if thread_ts else {}
                await self._call(client.chat_postEphemeral, channel=channel, user=user, text=text, **kwargs)

    # ------------------------------------------------------------------ admin export

    async def on_export(self, ack: Any, command: dict[str, Any], client: AsyncWebClient) -> None:
        """``/ragbot-export [jsonl|csv] [since]``: DM the log and feedback exports to an admin."""
        with self._in_flight():
            user = str(command.get("user_id") or "")
            text = str(command.get("text") or "").strip()
            if user not in self.services.settings.slack_admin_user_ids:
                await ack(text="Sorry, only ragbot admins can export the logs "
                               "(their Slack user ids are listed in SLACK_ADMIN_USER_IDS).")
                await self.services.activity.log(AgentLogEntry(
                    event_type=EventType.ADMIN_EXPORT,
                    error_details=f"refused: slack user {user!r} is not in SLACK_ADMIN_USER_IDS "
                                  f"(asked for {EXPORT_COMMAND} {text})".rstrip(),
                ))
                return
            try:
                export_format, since = parse_export_args(text)
            except Exception as exc:  # whatever the parser raises, the admin gets the usage
                # Slack needs its ack within 3 s; an escaping exception would leave the admin with
                # "operation_timeout" instead of a reason.
                await ack(text=f"Usage: `{EXPORT_COMMAND} [jsonl|csv] [since]`, since being a date "
                               f"like 2025-01-31 or a span like 7d. {fmt.escape(str(exc)).rstrip('.')}.")
                return
            await ack(text=f"Preparing the {export_format} export; I'll send it to you in a direct message.")
            await self._export(client, user=user, channel=str(command.get("channel_id") or ""),
                               export_format=export_format, since=since)

    async def _export(
        self, client: AsyncWebClient, *, user: str, channel: str, export_format: ExportFormat,
        since: datetime | None,
    ) -> None:
        started = time.perf_counter()
        try:
            # files_upload_v2 reads every file into memory anyway, so building them in memory costs nothing.
            bundle = await export_bundle(self.services.activity, self.services.feedback,
                                         fmt=export_format, since=since)
            entries, votes = bundle.log_rows, bundle.feedback_rows
            opened = await client.conversations_open(users=user)
            dm = str(opened["channel"]["id"])
            window = f"since {since.isoformat()}" if since else "all time"
            await client.files_upload_v2(
                channel=dm,
                initial_comment=f"ragbot export ({window}): {entries} log entries and {votes} votes.",
                file_uploads=[
                    {"content": bundle.log_text, "filename": bundle.log_filename,
                     "title": f"ragbot log ({window})"},
                    {"content": bundle.feedback_text, "filename": bundle.feedback_filename,
                     "title": f"ragbot feedback ({window})"},
                ],
            )
        except Exception as exc:
            reference = await self._log_error(
                thread_id=None, question=None,
                details=f"slack: admin export for {user} failed: {type(exc).__name__}: {exc}",
            )
            if channel:
                await self._call(client.chat_postEphemeral, channel=channel, user=user,
                                 text=f"Sorry, the export failed (reference `{reference}`).")
            return
        await self.services.activity.log(AgentLogEntry(
            event_type=EventType.ADMIN_EXPORT,
            response_summary=f"slack: user {user} exported {entries} log entries and {votes} votes "
                             f"as {export_format} ({window})",
            execution_time=time.perf_counter() - started,
        ))

    # ------------------------------------------------------------------ answering

    async def _question(
        self, client: AsyncWebClient, *, event: dict[str, Any], team: str, channel: str,
        reply_ts: str | None, thread_ts: str | None, bot_user_id: str | None,
    ) -> None:
        started = time.perf_counter()
        user = str(event.get("user") or "")
        question = fmt.question_from_text(str(event.get("text") or ""), bot_user_id=bot_user_id)
        thread_id = slack_thread_id(team, channel, thread_ts)
        if not question:
            await self._post(client, channel, reply_ts, fmt.help_message())
            return
        try:
            self.services.rate_limiter.check(user)
        except RateLimitExceeded as exc:
            await self._post(client, channel, reply_ts, fmt.rate_limited_message(exc.retry_after))
            return

        message_ts = str(event.get("ts") or "")
        # Start answering first: the reaction and placeholder round trips to Slack then
        # overlap with the pipeline instead of delaying it.
        asking = asyncio.ensure_future(self._ask(question, thread_id=thread_id, user=user))
        try:
            _, placeholder = await asyncio.gather(
                self._call(client.reactions_add, channel=channel, timestamp=message_ts, name="eyes"),
                self._post(client, channel, reply_ts, fmt.placeholder_message()),
            )
            response = await asking
            if isinstance(response, dict):
                message = response
            elif response.status is ResponseStatus.RETRIEVAL_FAILED:
                reference = response.reference_id or await self._log_error(
                    thread_id=thread_id, question=question, query_id=response.query_id,
                    details="slack: retrieval_failed without a reference id",
                )
                message = fmt.failure_message("I couldn't search the docs just now", reference)
            else:
                message = fmt.answer_message(response)
            delivered = await self._deliver(client, channel, reply_ts, placeholder, message)
            if isinstance(response, AgentResponse):
                if delivered:
                    await log_sent(self.services.activity, response, platform="slack",
                                   execution_time=time.perf_counter() - started)
                else:
                    await self._log_error(
                        thread_id=thread_id, question=question, query_id=response.query_id,
                        details=f"slack: could not deliver response {response.response_id} to {channel}",
                    )
        finally:
            asking.cancel()  # no-op once done; stops the pipeline if we were cancelled
            await self._call(client.reactions_remove, channel=channel, timestamp=message_ts, name="eyes")

    async def _ask(self, question: str, *, thread_id: str, user: str) -> AgentResponse | dict[str, Any]:
        """Ask the AnswerService; turn what it raises into the message to show instead."""
        try:
            return await self.services.answers.answer(question, thread_id=thread_id, user_id=user or None)
        except QueryValidationError as exc:
            return fmt.invalid_question_message(str(exc))
        except Exception as exc:  # never leave a question unanswered: say so, with a reference
            log.exception("answering %r failed", question[:200])
            reference = await self._log_error(
                thread_id=thread_id, question=question,
                details=f"slack: answering failed: {type(exc).__name__}: {exc}",
            )
            return fmt.failure_message("something went wrong on my side", reference)

    # ------------------------------------------------------------------ helpers

    @staticmethod
    def _team(body: dict[str, Any], event: dict[str, Any], context: AsyncBoltContext) -> str:
        return str(body.get("team_id") or event.get("team") or context.team_id or "")

    @staticmethod
    def _from_bot(event: dict[str, Any], context: AsyncBoltContext) -> bool:
        user = event.get("user")
        return bool(
            event.get("bot_id")
            or event.get("subtype") == "bot_message"
            or not user
            or (context.bot_user_id and user == context.bot_user_id)
        )

    async def _first_delivery(self, body: dict[str, Any]) -> bool:
        event_id = body.get("event_id")
        if not event_id:
            return True  # nothing to deduplicate on; answering twice beats never answering
        return await self.services.events.first_delivery("slack", str(event_id))

    async def _log_error(
        self, *, thread_id: str | None, question: str | None, details: str, query_id: str | None = None
    ) -> str:
        entry = AgentLogEntry(
            event_type=EventType.ERROR, thread_id=thread_id, query_id=query_id,
            query_text=question[:MAX_TEXT_LENGTH] if question else None,
            error_details=details[:MAX_TEXT_LENGTH],
        )
        try:
            await self.services.activity.log(entry)
        except Exception:
            log.exception("could not write error entry %s: %s", entry.entry_id, details)
        return entry.entry_id

    async def _call(self, method: Any, **kwargs: Any) -> Any:
        """Call a Web API method whose failure must not stop the answer (reactions, ephemerals)."""
        try:
            return await method(**kwargs)
        except (SlackApiError, SlackClientError, aiohttp.ClientError, OSError) as exc:
            log.warning("Slack call %s failed: %s", getattr(method, "__name__", method), exc)
            return None

    async def _post(
        self, client: AsyncWebClient, channel: str, thread_ts: str | None, message: dict[str, Any]
    ) -> str | None:
        kwargs: dict[str, Any] = {"thread_ts": thread_ts} if thread_ts else {}
        result = await self._call(
            client.chat_postMessage, channel=channel, unfurl_links=False, unfurl_media=False,
            **kwargs, **message,
        )
        return str(result["ts"]) if result is not None else None

    async def _deliver(
        self, client: AsyncWebClient, channel: str, thread_ts: str | None, placeholder: str | None,
        message: dict[str, Any],
    ) -> bool:
        """Replace the placeholder with ``message``, or post it afresh if that fails."""
        if placeholder is not None:
            # chat.update has no documented unfurl flags; passing them keeps an edit from
            # unfurling where the original post would not have (Slack ignores unknown args).
            updated = await self._call(
                client.chat_update, channel=channel, ts=placeholder,
                unfurl_links=False, unfurl_media=False, **message,
            )
            if updated is not None:
                return True
        return await self._post(client, channel, thread_ts, message) is not None


class RagbotSlackApp(AsyncApp):
    """Bolt's AsyncApp carrying ragbot's listeners as ``bot`` (to drain them at shutdown)."""

    def __init__(self, *, bot: SlackBot, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.bot = bot


def check_slack_settings(settings: Settings) -> tuple[str, str | None]:
    """Check that the Slack credentials needed for the chosen mode are set.

    Args:
        settings: ragbot's settings.

    Returns:
        ``(bot_token, signing_secret)``; the secret is None in Socket Mode without one.

    Raises:
        ConfigurationError: SLACK_BOT_TOKEN missing, or SLACK_SIGNING_SECRET missing in HTTP mode.
    """
    token = _secret(settings.slack_bot_token)
    if not token:
        raise ConfigurationError("SLACK_BOT_TOKEN is not set: copy the Bot User OAuth Token (xoxb-...)")
    signing_secret = _secret(settings.slack_signing_secret)
    if not signing_secret and not _secret(settings.slack_app_token):
        raise ConfigurationError(
            "SLACK_SIGNING_SECRET is not set: HTTP mode needs it to verify Slack's requests "
            "(or set SLACK_APP_TOKEN to use Socket Mode)"
        )
    return token, signing_secret


def build_slack_app(*, services: Services) -> AsyncApp:
    """Build the bolt AsyncApp with ragbot's listeners.

    Args:
        services: the answer service and stores; ``services.settings`` gives the tokens.

    Returns:
        A ``RagbotSlackApp`` (an AsyncApp) whose Web API client talks to
        ``SLACK_API_URL`` or slack.com.

    Raises:
        ConfigurationError: SLACK_BOT_TOKEN missing, or SLACK_SIGNING_SECRET missing in HTTP mode.
    """
    settings = services.settings
    token, signing_secret = check_slack_settings(settings)
    bot = SlackBot(services=services)
    # The client carries the token; giving bolt both would only make it log a warning.
    app = RagbotSlackApp(
        bot=bot,
        name="ragbot",
        signing_secret=signing_secret or "",
        client=AsyncWebClient(token=token, base_url=slack_api_base(settings)),
        process_before_response=False,
    )
    app.event("app_mention")(bot.on_app_mention)
    app.event("message")(bot.on_message)
    app.action(fmt.ACTION_UP)(bot.on_feedback)
    app.action(fmt.ACTION_DOWN)(bot.on_feedback)
    app.command(EXPORT_COMMAND)(bot.on_export)
    return app


@contextlib.asynccontextmanager
async def shared_session(bolt_app: AsyncApp) -> AsyncIterator[None]:
    """Give the app's Web API client one connection pool for its lifetime.

    Without it slack_sdk opens a new aiohttp session (and connection) for every
    call; bolt copies ``client.session`` into each request's client, so setting it
    here covers every listener.

    Args:
        bolt_app: the app whose ``client`` should share the session.
    """
    if bolt_app.client.session is not None:
        yield
        return
    session = aiohttp.ClientSession()
    bolt_app.client.session = session
    try:
        yield
    finally:
        bolt_app.client.session = None
        await session.close()


def slack_web_app(bolt_app: AsyncApp) -> web.Application:
    """An aiohttp application serving ``POST /slack/events`` and ``GET /healthz``.

    Args:
        bolt_app: the app from ``build_slack_app``; bolt verifies each request's signature.

    Returns:
        The aiohttp application (``ragbot serve`` can mount it or run it as is).
    """

    async def events(request: web.Request) -> web.Response:
        bolt_response = await bolt_app.async_dispatch(await to_bolt_request(request))
        return await to_aiohttp_response(bolt_response)

    async def healthz(request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    async def drain(_: web.Application) -> None:
        if isinstance(bolt_app, RagbotSlackApp):
            await bolt_app.bot.drain()

    async def session(_: web.Application) -> AsyncIterator[None]:
        async with shared_session(bolt_app):
            yield

    web_app = web.Application()
    web_app.router.add_post(EVENTS_PATH, events)
    web_app.router.add_get(HEALTH_PATH, healthz)
    # Shutdown hooks run before cleanup contexts close, so answers in flight can finish.
    web_app.on_shutdown.append(drain)
    web_app.cleanup_ctx.append(session)
    return web_app


async def run_slack(services: Services, *, host: str = "0.0.0.0") -> None:
    """Serve Slack until cancelled: Socket Mode with SLACK_APP_TOKEN, else HTTP on PORT.

    Args:
        services: the answer service and stores (the caller closes them).
        host: interface for HTTP mode.

    Raises:
        ConfigurationError: from ``build_slack_app``.
    """
    app = build_slack_app(services=services)
    settings = services.settings
    app_token = _secret(settings.slack_app_token)
    if app_token:
        from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

        handler = AsyncSocketModeHandler(app, app_token)
        log.warning("ragbot Slack bot connecting in Socket Mode")
        async with shared_session(app):
            try:
                await handler.start_async()
            finally:
                await handler.close_async()
                if isinstance(app, RagbotSlackApp):
                    await app.bot.drain()
        return
    runner = web.AppRunner(slack_web_app(app), access_log=None)
    await runner.setup()
    await web.TCPSite(runner, host, settings.port).start()
    log.warning("ragbot Slack bot listening on http://%s:%d%s", host, settings.port, EVENTS_PATH)
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


async def _main() -> int:
    from core.settings import load_settings

    try:
        settings = load_settings()
        logging.basicConfig(level=settings.log_level.upper())
        check_slack_settings(settings)  # before opening stores: fail fast on a missing token
        try:
            from bots.runtime import build_services  # the real pipeline; heavy, so only here
        except ImportError as exc:
            raise ConfigurationError(f"ragbot's core is not available ({exc})") from exc
        services = await build_services(settings)
    except ConfigurationError as exc:
        print(f"ragbot: {exc}")
        return exc.exit_code
    try:
        await run_slack(services)
    except ConfigurationError as exc:
        print(f"ragbot: {exc}")
        return exc.exit_code
    finally:
        await services.aclose()
    return 0


def main() -> None:
    """Entry point of ``python -m bots.slack.app``."""
    with contextlib.suppress(KeyboardInterrupt):
        raise SystemExit(asyncio.run(_main()))


if __name__ == "__main__":
    main()
