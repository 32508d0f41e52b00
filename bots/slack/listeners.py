"""Slack's listeners: mentions, DMs and thread follow-ups, feedback clicks and ``/ragbot-export``.

Each listener turns a Slack event into calls to ``bots.chat`` (the decisions every
platform shares) and shows the outcome the Slack way: react with :eyes:, post a
placeholder in the thread, replace it with the cited answer.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

import aiohttp
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from bots.chat import asking, export, feedback
from bots.chat.export import ExportFormat, ExportRequest, ExportUsageError
from bots.chat.inflight import InFlight
from bots.chat.services import Services
from bots.slack import format as fmt

log = logging.getLogger(__name__)

PLATFORM = "slack"
EXPORT_COMMAND = "/ragbot-export"
#: Slack takes files up to 1 GB; an export that large belongs on the server (``ragbot logs export``).
UPLOAD_LIMIT = 1 << 30
#: Message subtypes that are still a person writing; edits, joins, bot posts etc. are not.
_HUMAN_SUBTYPES = frozenset({None, "thread_broadcast", "file_share"})
#: Web API failures that must not stop an answer (a reaction, an ephemeral note).
_CALL_ERRORS = (SlackApiError, SlackClientError, aiohttp.ClientError, OSError)


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


def parse_export_args(text: str, parse_when: Callable[[str], datetime]) -> ExportRequest:
    """Parse ``/ragbot-export`` arguments: an optional format and an optional start, in any order.

    Args:
        text: what followed the command, e.g. ``"csv 7d"`` or ``"2025-01-31"``.
        parse_when: reads a start (``services.exports.parse_when``).

    Returns:
        The request; format defaults to jsonl, the start to None (everything).

    Raises:
        ExportUsageError: naming the argument that is neither a format nor a start, or repeats one.
    """
    export_format: ExportFormat | None = None
    since: datetime | None = None
    for token in text.split():
        lowered = token.lower()
        if lowered in export.FORMATS:
            if export_format is not None:
                raise ExportUsageError(f"{token!r} repeats the format")
            export_format = "csv" if lowered == "csv" else "jsonl"
        elif since is None:
            try:
                since = parse_when(token)
            except Exception as exc:  # whatever the parser raises, the admin gets the usage
                raise ExportUsageError(f"{token!r} is not a format (jsonl or csv) or a start: "
                                       f"{str(exc).rstrip('.')}") from None
        else:
            raise ExportUsageError(f"{token!r} is a second start")
    return ExportRequest(fmt=export_format or "jsonl", since=since)


async def call_quietly(method: Any, **kwargs: Any) -> Any:
    """Call a Web API method whose failure must not stop the answer; None when it failed."""
    try:
        return await method(**kwargs)
    except _CALL_ERRORS as exc:
        log.warning("Slack call %s failed: %s", method.__name__, exc)
        return None


class SlackBot:
    """ragbot's Slack listeners over one Services bundle.

    Args:
        services: the answer service and stores.
    """

    def __init__(self, *, services: Services) -> None:
        self.services = services
        self.in_flight = InFlight()

    async def drain(self, timeout: float = 30.0) -> None:
        """Wait (up to ``timeout`` seconds) for listeners still working on an event."""
        await self.in_flight.drain(timeout)

    # ------------------------------------------------------------------ events

    async def on_app_mention(
        self, body: dict[str, Any], event: dict[str, Any], context: AsyncBoltContext, client: AsyncWebClient
    ) -> None:
        """Answer ``@ragbot question`` in the message's thread."""
        with self.in_flight.track():
            channel = str(event.get("channel", ""))
            # DMs also arrive as message.im; answer those once, in on_message.
            if channel.startswith("D") or _from_bot(event, context):
                return
            if not await asking.first_delivery(self.services, PLATFORM, body.get("event_id")):
                return
            thread_ts = str(event.get("thread_ts") or event.get("ts"))
            await self._question(client, event=event, team=_team(body, event, context), channel=channel,
                                 thread_ts=thread_ts, bot_user_id=context.bot_user_id)

    async def on_message(
        self, body: dict[str, Any], event: dict[str, Any], context: AsyncBoltContext, client: AsyncWebClient
    ) -> None:
        """Answer DMs, and follow-ups in threads the bot has answered in."""
        with self.in_flight.track():
            if event.get("subtype") not in _HUMAN_SUBTYPES or _from_bot(event, context):
                return
            channel = str(event.get("channel", ""))
            team = _team(body, event, context)
            thread_ts = event.get("thread_ts")
            if event.get("channel_type") != "im" and not await self._is_follow_up(
                event, team=team, channel=channel, bot_user_id=context.bot_user_id
            ):
                return
            if not await asking.first_delivery(self.services, PLATFORM, body.get("event_id")):
                return
            await self._question(client, event=event, team=team, channel=channel, thread_ts=thread_ts,
                                 bot_user_id=context.bot_user_id)

    async def _is_follow_up(
        self, event: dict[str, Any], *, team: str, channel: str, bot_user_id: str | None
    ) -> bool:
        """A reply without a mention in a thread the bot has already answered in."""
        thread_ts = event.get("thread_ts")
        if self.services.settings.slack_followups != "thread":
            return False
        if not thread_ts or thread_ts == event.get("ts"):
            return False  # a top-level message, not a reply
        if bot_user_id and f"<@{bot_user_id}" in str(event.get("text", "")):
            return False  # the app_mention event answers this one
        try:
            turns = await self.services.conversations.recent_turns(
                slack_thread_id(team, channel, thread_ts), limit=1)
        except Exception as exc:  # unreadable history: a reply without a mention is left alone
            log.error("could not read thread %s to spot a follow-up: %s", thread_ts, exc)
            return False
        return bool(turns)

    # ------------------------------------------------------------------ answering

    async def _question(
        self, client: AsyncWebClient, *, event: dict[str, Any], team: str, channel: str,
        thread_ts: str | None, bot_user_id: str | None,
    ) -> None:
        started = time.perf_counter()
        user = str(event.get("user") or "")
        question = fmt.question_from_text(str(event.get("text") or ""), bot_user_id=bot_user_id)
        refusal = asking.precheck(self.services, question, user=user)
        if refusal is not None:
            await self._post(client, channel, thread_ts, fmt.refusal_message(refusal))
            return
        message_ts = str(event.get("ts") or "")
        # Start answering first: the reaction and placeholder round trips to Slack then
        # overlap with the pipeline instead of delaying it.
        outcome_task = asyncio.ensure_future(asking.ask(
            self.services, question, platform=PLATFORM, thread_id=slack_thread_id(team, channel, thread_ts),
            user=user))
        try:
            _, placeholder = await asyncio.gather(
                call_quietly(client.reactions_add, channel=channel, timestamp=message_ts, name="eyes"),
                self._post(client, channel, thread_ts, fmt.placeholder_message()),
            )
            outcome = await outcome_task
            delivered = await self._deliver(client, channel, thread_ts, placeholder,
                                            fmt.outcome_message(outcome))
            await asking.record_delivery(self.services, outcome, platform=PLATFORM, delivered=delivered,
                                         started=started, where=channel)
        finally:
            outcome_task.cancel()  # no-op once done; stops the pipeline if we were cancelled
            await call_quietly(client.reactions_remove, channel=channel, timestamp=message_ts, name="eyes")

    async def _post(
        self, client: AsyncWebClient, channel: str, thread_ts: str | None, message: dict[str, Any]
    ) -> str | None:
        kwargs: dict[str, Any] = {"thread_ts": thread_ts} if thread_ts else {}
        result = await call_quietly(client.chat_postMessage, channel=channel, unfurl_links=False,
                                    unfurl_media=False, **kwargs, **message)
        return str(result["ts"]) if result is not None else None

    async def _deliver(
        self, client: AsyncWebClient, channel: str, thread_ts: str | None, placeholder: str | None,
        message: dict[str, Any],
    ) -> bool:
        """Replace the placeholder with ``message``, or post it afresh if that fails."""
        if placeholder is not None:
            # chat.update has no documented unfurl flags; passing them keeps an edit from
            # unfurling where the original post would not have (Slack ignores unknown args).
            updated = await call_quietly(client.chat_update, channel=channel, ts=placeholder,
                                         unfurl_links=False, unfurl_media=False, **message)
            if updated is not None:
                return True
        return await self._post(client, channel, thread_ts, message) is not None

    # ------------------------------------------------------------------ feedback

    async def on_feedback(
        self, ack: Any, body: dict[str, Any], action: dict[str, Any], client: AsyncWebClient
    ) -> None:
        """Store a :+1: / :-1: click (a second click replaces the vote) and answer the voter privately."""
        await ack()
        with self.in_flight.track():
            vote = fmt.vote_for_action(str(action.get("action_id", "")))
            response_id = str(action.get("value") or "")
            user = _id(body.get("user"))
            if vote is None or not response_id or not user:
                log.warning("ignoring a feedback click without vote, response or user: %s", action)
                return
            container = body.get("container") or {}
            channel = _id(body.get("channel")) or str(container.get("channel_id") or "")
            thread_ts = (body.get("message") or {}).get("thread_ts") or container.get("thread_ts")
            team = _id(body.get("team"))
            outcome = await feedback.record_vote(
                self.services, platform=PLATFORM, response_id=response_id, user=user, vote=vote,
                thread_id=slack_thread_id(team, channel, thread_ts) if channel else None)
            if channel:
                kwargs: dict[str, Any] = {"thread_ts": thread_ts} if thread_ts else {}
                await call_quietly(client.chat_postEphemeral, channel=channel, user=user,
                                   text=fmt.escape(feedback.reply_text(outcome)), **kwargs)

    # ------------------------------------------------------------------ admin export

    async def on_export(self, ack: Any, command: dict[str, Any], client: AsyncWebClient) -> None:
        """``/ragbot-export [jsonl|csv] [since]``: DM the log and feedback exports to an admin."""
        with self.in_flight.track():
            user = str(command.get("user_id") or "")
            if user not in self.services.settings.slack_admin_user_ids:
                await ack(text=fmt.escape(export.refused_text("`SLACK_ADMIN_USER_IDS`")))
                await export.refuse(self.services, platform=PLATFORM, user=user,
                                    rule="not in SLACK_ADMIN_USER_IDS")
                return
            try:
                request = parse_export_args(str(command.get("text") or ""), self.services.exports.parse_when)
            except ExportUsageError as exc:
                # Slack needs its ack within 3 s: the admin gets the usage, not "operation_timeout".
                await ack(text=fmt.escape(export.usage_text(f"`{EXPORT_COMMAND} [jsonl|csv] [since]`", exc)))
                return
            await ack(text=f"Preparing the {request.fmt} export; I'll send it to you in a direct message.")
            outcome = await export.send(
                self.services, request, platform=PLATFORM, user=user, max_bytes=UPLOAD_LIMIT,
                deliver=lambda asked, bundle: _upload(client, user, asked, bundle))
            channel = str(command.get("channel_id") or "")
            if not isinstance(outcome, export.Exported) and channel:
                await call_quietly(client.chat_postEphemeral, channel=channel, user=user,
                                   text=fmt.escape(export.problem_text(outcome)))


async def _upload(
    client: AsyncWebClient, user: str, request: ExportRequest, bundle: export.ExportBundle
) -> None:
    """DM ``user`` the two export files (raises when Slack refuses them)."""
    opened = await client.conversations_open(users=user)
    window = request.window
    # files_upload_v2 reads every file into memory anyway, so building them in memory costs nothing.
    await client.files_upload_v2(
        channel=str(opened["channel"]["id"]),
        initial_comment=export.summary_text(request, bundle),
        file_uploads=[
            {"content": bundle.log_text, "filename": bundle.log_filename, "title": f"ragbot log ({window})"},
            {"content": bundle.feedback_text, "filename": bundle.feedback_filename,
             "title": f"ragbot feedback ({window})"},
        ],
    )


def _id(value: Any) -> str:
    """The id of a field Slack sends as an object with an ``id`` or as the id itself."""
    if isinstance(value, dict):
        return str(value.get("id") or "")
    return str(value or "")


def _team(body: dict[str, Any], event: dict[str, Any], context: AsyncBoltContext) -> str:
    return str(body.get("team_id") or event.get("team") or context.team_id or "")


def _from_bot(event: dict[str, Any], context: AsyncBoltContext) -> bool:
    user = event.get("user")
    return bool(
        event.get("bot_id")
        or event.get("subtype") == "bot_message"
        or not user
        or (context.bot_user_id and user == context.bot_user_id)
    )
