"""The Discord adapter: ``/ask`` answers from the docs, feedback buttons, ``/export-logs`` for admins.

The adapter depends on ``Services`` only. Conversations are keyed by Discord thread:

* ``/ask`` inside a thread continues that thread: ``thread_id = "discord:{guild}:{thread}"``.
* ``/ask`` in a text channel first posts a placeholder, starts a public thread on it
  (a thread started from a message has the message's id), answers under
  ``"discord:{guild}:{message}"`` and edits the placeholder into the answer, so later
  ``/ask`` in the new thread finds the first turn. Without permission to start
  threads the answer stays in the channel under the same key, and a thread someone
  starts on it by hand later continues the conversation all the same.
* In a DM the DM is the conversation: ``"discord:dm:{channel}"``.
* ``private:true`` answers ephemerally under ``"discord:{guild}:{channel}:private:{user}"`` so a
  private question never leaks into the history a public thread answers from.

Run it alone with ``python -m bots.discord.client`` (needs ``DISCORD_TOKEN``).
"""

from __future__ import annotations

import asyncio
import io
import logging
import math
import re
import sys
import time
from datetime import datetime
from typing import Any, Literal, cast

import discord
from discord import app_commands

from bots.chat.services import Services, log_sent
from bots.discord import format as fmt
from core.errors import ConfigurationError, QueryValidationError, RateLimitExceeded
from core.models import AgentLogEntry, AgentResponse, EventType, Feedback, ResponseStatus
from core.settings import Settings
from storage.export import export_bundle, parse_when

log = logging.getLogger(__name__)

PLATFORM = "discord"
NO_MENTIONS = discord.AllowedMentions.none()
FEEDBACK_TEMPLATE = r"ragbot:fb:(?P<vote>up|down):(?P<rid>[0-9a-f]+)"
_FEEDBACK_RE = re.compile(FEEDBACK_TEMPLATE)
#: Discord's custom_id limit is 100 characters; "ragbot:fb:down:" takes 15.
_MAX_RESPONSE_ID = 85


# --------------------------------------------------------------------------- feedback buttons


class FeedbackButton(discord.ui.DynamicItem[discord.ui.Button[Any]], template=FEEDBACK_TEMPLATE):
    """A 👍 or 👎 button whose custom_id carries the response id, so it works after a restart."""

    def __init__(self, *, vote: Literal["up", "down"], response_id: str) -> None:
        self.vote: Literal["up", "down"] = vote
        self.response_id = response_id
        super().__init__(
            discord.ui.Button(
                style=discord.ButtonStyle.secondary,
                emoji="👍" if vote == "up" else "👎",
                custom_id=f"ragbot:fb:{vote}:{response_id}",
            )
        )

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction[Any], item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> FeedbackButton:
        """Rebuild the button from a clicked custom_id.

        Args:
            interaction: the click.
            item: the component as Discord sent it back.
            match: the template match holding ``vote`` and ``rid``.

        Returns:
            The button, ready for its callback.
        """
        return cls(vote=cast(Literal["up", "down"], match["vote"]), response_id=match["rid"])

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        """Store the vote, log it and thank the user privately.

        Args:
            interaction: the click.
        """
        services = _services(interaction)
        vote: Literal[1, -1] = 1 if self.vote == "up" else -1
        await services.feedback.record_feedback(
            Feedback(response_id=self.response_id, user_id=str(interaction.user.id), vote=vote,
                     platform=PLATFORM)
        )
        await services.activity.log(
            AgentLogEntry(
                event_type=EventType.FEEDBACK_RECEIVED,
                thread_id=_conversation_of_click(interaction),
                response_summary=f"{PLATFORM}: {vote:+d} on response {self.response_id}",
            )
        )
        await interaction.response.send_message(
            "Thanks for the feedback!", ephemeral=True, allowed_mentions=NO_MENTIONS
        )


def feedback_view(response_id: str) -> discord.ui.View | None:
    """The 👍/👎 buttons for one answer; None when the id cannot ride in a custom_id.

    Args:
        response_id: ``AgentResponse.response_id`` (uuid hex).

    Returns:
        A view without timeout, or None.
    """
    if len(response_id) > _MAX_RESPONSE_ID or not _FEEDBACK_RE.fullmatch(f"ragbot:fb:up:{response_id}"):
        log.warning("response id %r does not fit a feedback custom_id; answer sent without buttons",
                    response_id)
        return None
    view = discord.ui.View(timeout=None)
    view.add_item(FeedbackButton(vote="up", response_id=response_id))
    view.add_item(FeedbackButton(vote="down", response_id=response_id))
    return view


def _conversation_of_click(interaction: discord.Interaction[Any]) -> str | None:
    # After a restart the only link back to the conversation is where the button sits;
    # this mirrors conversation_key() and the message-id key of channel answers.
    guild = str(interaction.guild_id) if interaction.guild_id else "dm"
    message = interaction.message
    if message is not None and message.flags.ephemeral:
        return f"discord:{guild}:{interaction.channel_id}:private:{interaction.user.id}"
    if interaction.guild_id is None or isinstance(interaction.channel, discord.Thread):
        return f"discord:{guild}:{interaction.channel_id}"
    return f"discord:{guild}:{message.id}" if message is not None else None


# --------------------------------------------------------------------------- the client


class RagbotDiscord(discord.Client):
    """The ragbot Discord client: registers ``/ask``, ``/export-logs`` and the feedback buttons.

    Args:
        services: the answer service and stores.
        intents: gateway intents; the default asks only for ``guilds`` (no privileged intent).
    """

    def __init__(self, *, services: Services, intents: discord.Intents | None = None) -> None:
        if intents is None:
            # Interactions arrive without any intent; guilds keeps channels and roles cached.
            intents = discord.Intents.none()
            intents.guilds = True
        super().__init__(intents=intents, allowed_mentions=NO_MENTIONS)
        self.services = services
        self.tree = app_commands.CommandTree(self)
        add_commands(self.tree)
        self.tree.error(_on_tree_error)

    async def setup_hook(self) -> None:
        """Register the persistent feedback buttons and sync the slash commands."""
        self.add_dynamic_items(FeedbackButton)
        await sync_tree(self.tree, self.services.settings.discord_guild_ids)


async def sync_tree(tree: app_commands.CommandTree[Any], guild_ids: list[str]) -> None:
    """Push the commands to Discord: to each listed guild (instant), else globally (up to an hour).

    Args:
        tree: the command tree.
        guild_ids: ``DISCORD_GUILD_IDS``; empty means a global sync.
    """
    if not guild_ids:
        synced = await tree.sync()
        log.info("synced %d global commands", len(synced))
        return
    for gid in guild_ids:
        guild = discord.Object(id=int(gid))
        tree.copy_global_to(guild=guild)
        synced = await tree.sync(guild=guild)
        log.info("synced %d commands to guild %s", len(synced), gid)


def add_commands(tree: app_commands.CommandTree[Any]) -> None:
    """Add ``/ask`` and ``/export-logs`` to ``tree`` (fresh command objects per tree).

    Args:
        tree: the tree of a RagbotDiscord client, or of the bare client ``sync_commands`` uses.
    """

    @app_commands.command(name="ask", description="Ask a question about the docs")
    @app_commands.describe(question="Your question", private="Only you see the answer (default: no)")
    async def ask(interaction: discord.Interaction[Any], question: str, private: bool = False) -> None:
        await handle_ask(interaction, question=question, private=private)

    @app_commands.command(name="export-logs", description="Admins: download the activity log and feedback")
    @app_commands.default_permissions(administrator=True)
    @app_commands.rename(fmt_="format")
    @app_commands.describe(fmt_="File format (default jsonl)",
                           since="Only entries after this: 2025-01-31, 2025-01-31T12:00Z, 24h, 7d or 2w")
    async def export_logs(
        interaction: discord.Interaction[Any],
        fmt_: Literal["jsonl", "csv"] = "jsonl",
        since: str | None = None,
    ) -> None:
        await handle_export(interaction, file_format=fmt_, since=since)

    tree.add_command(ask)
    tree.add_command(export_logs)


def _services(interaction: discord.Interaction[Any]) -> Services:
    return cast(RagbotDiscord, interaction.client).services


async def _say_privately(interaction: discord.Interaction[Any], text: str) -> None:
    if interaction.response.is_done():
        await interaction.followup.send(text, ephemeral=True, allowed_mentions=NO_MENTIONS)
    else:
        await interaction.response.send_message(text, ephemeral=True, allowed_mentions=NO_MENTIONS)


async def _log_error(
    services: Services, details: str, *, thread_id: str | None = None, query_id: str | None = None,
    question: str | None = None,
) -> str:
    entry = AgentLogEntry(
        event_type=EventType.ERROR, thread_id=thread_id, query_id=query_id,
        query_text=question[: 2000] if question else None, error_details=details[:5000],
    )
    try:
        await services.activity.log(entry)
    except Exception:
        # The user still gets the id; the log line below carries the details instead.
        log.exception("could not write error entry %s", entry.entry_id)
    log.error("discord error %s: %s", entry.entry_id, details)
    return entry.entry_id


async def _on_tree_error(interaction: discord.Interaction[Any], error: app_commands.AppCommandError) -> None:
    cause = error.original if isinstance(error, app_commands.CommandInvokeError) else error
    ref = await _log_error(_services(interaction), f"{PLATFORM}: {type(cause).__name__}: {cause}")
    try:
        await _say_privately(interaction, fmt.failure_text("something went wrong on my side", ref))
    except discord.HTTPException:
        log.exception("could not tell the user about error %s", ref)


# --------------------------------------------------------------------------- /ask


def conversation_key(interaction: discord.Interaction[Any], *, private: bool) -> str | None:
    """The thread_id for questions asked where ``interaction`` happened, when known up front.

    Args:
        interaction: the ``/ask`` interaction.
        private: whether the answer is ephemeral.

    Returns:
        The key, or None for a public question in a channel: its key is the id of the
        answer message, known only once that message exists.
    """
    guild = str(interaction.guild_id) if interaction.guild_id else "dm"
    channel_id = interaction.channel_id
    if private:
        return f"discord:{guild}:{channel_id}:private:{interaction.user.id}"
    if interaction.guild_id is None or isinstance(interaction.channel, discord.Thread):
        return f"discord:{guild}:{channel_id}"
    return None


async def handle_ask(interaction: discord.Interaction[Any], *, question: str, private: bool) -> None:
    """Answer one ``/ask``: validate, rate-limit, defer, answer, deliver, log.

    Args:
        interaction: the slash command interaction.
        question: the ``question`` option.
        private: the ``private`` option.
    """
    services = _services(interaction)
    started = time.perf_counter()
    text = question.strip()
    limit = services.settings.max_query_length
    # A delivery seen before (gateway replay after a resume) was answered the first time.
    if not await services.events.first_delivery(PLATFORM, str(interaction.id)):
        return
    if not text:
        await _say_privately(interaction, "Please type a question after `/ask`, for example "
                                          "`/ask question: How do I install ragbot?`")
        return
    if len(text) > limit:
        await _say_privately(interaction, f"That question is {len(text)} characters long; the limit is "
                                          f"{limit}. Please shorten it and ask again.")
        return
    try:
        services.rate_limiter.check(str(interaction.user.id))
    except RateLimitExceeded as exc:
        await _say_privately(interaction, f"You are asking faster than {exc.limit} questions per "
                                          f"{exc.window_seconds:g} s. Please try again in "
                                          f"{math.ceil(exc.retry_after)} s.")
        return
    await interaction.response.defer(ephemeral=private, thinking=True)

    thread_id = conversation_key(interaction, private=private)
    placeholder: discord.WebhookMessage | None = None
    thread: discord.Thread | None = None
    if thread_id is None:
        placeholder = await interaction.followup.send(
            fmt.PLACEHOLDER, wait=True, allowed_mentions=NO_MENTIONS
        )
        thread = await _start_thread(interaction, placeholder, text)
        thread_id = f"discord:{interaction.guild_id}:{placeholder.id}"

    try:
        response = await services.answers.answer(text, thread_id=thread_id, user_id=str(interaction.user.id))
    except QueryValidationError as exc:
        # Rare: the length was checked before deferring. After a public defer Discord shows
        # this reply publicly whatever the flag says; only private asks stay private.
        reply = fmt.defuse(f"I can't take that question: {exc}")
        await _deliver_text(interaction, placeholder, reply, private=True)
        return
    except Exception as exc:
        ref = await _log_error(services, f"{PLATFORM}: answer failed: {type(exc).__name__}: {exc}",
                               thread_id=thread_id, question=text)
        await _deliver_text(interaction, placeholder, fmt.failure_text("the answer service failed", ref),
                            private=private)
        return

    reference_id = response.reference_id
    if response.status is ResponseStatus.RETRIEVAL_FAILED and not reference_id:
        reference_id = await _log_error(
            services, f"{PLATFORM}: retrieval_failed without reference id: {response.response_text[:500]}",
            thread_id=thread_id, query_id=response.query_id, question=text,
        )
    embeds = fmt.answer_embeds(response, question=text, reference_id=reference_id)
    await _deliver_answer(interaction, response, embeds, placeholder=placeholder, thread=thread,
                          private=private)
    await log_sent(services.activity, response, platform=PLATFORM,
                   execution_time=time.perf_counter() - started)


async def _start_thread(
    interaction: discord.Interaction[Any], message: discord.WebhookMessage, question: str
) -> discord.Thread | None:
    channel = interaction.channel
    if not isinstance(channel, discord.TextChannel) or not interaction.app_permissions.create_public_threads:
        return None
    try:
        return await channel.create_thread(name=fmt.thread_name(question), message=message)
    except discord.HTTPException as exc:
        # Forbidden or a channel type without threads: the answer simply stays in the channel.
        log.warning("could not start a thread in channel %s: %s", channel.id, exc)
        return None


async def _deliver_text(
    interaction: discord.Interaction[Any], placeholder: discord.WebhookMessage | None, text: str, *,
    private: bool,
) -> None:
    if placeholder is not None:
        await placeholder.edit(content=text, allowed_mentions=NO_MENTIONS)
    else:
        await interaction.followup.send(text, ephemeral=private, allowed_mentions=NO_MENTIONS)


async def _deliver_answer(
    interaction: discord.Interaction[Any], response: AgentResponse, embeds: list[discord.Embed], *,
    placeholder: discord.WebhookMessage | None, thread: discord.Thread | None, private: bool,
) -> None:
    view = feedback_view(response.response_id)
    first, rest = embeds[0], embeds[1:]
    if placeholder is not None:
        if view is not None:
            await placeholder.edit(content=None, embed=first, view=view, allowed_mentions=NO_MENTIONS)
        else:
            await placeholder.edit(content=None, embed=first, allowed_mentions=NO_MENTIONS)
    elif view is not None:
        await interaction.followup.send(embed=first, view=view, ephemeral=private,
                                        allowed_mentions=NO_MENTIONS)
    else:
        await interaction.followup.send(embed=first, ephemeral=private, allowed_mentions=NO_MENTIONS)
    for embed in rest:
        # Continuation pages go into the new thread, keeping the channel to one message per answer.
        if thread is not None:
            await thread.send(embed=embed, allowed_mentions=NO_MENTIONS)
        else:
            await interaction.followup.send(embed=embed, ephemeral=private, allowed_mentions=NO_MENTIONS)


# --------------------------------------------------------------------------- /export-logs


def parse_since(value: str | None, *, now: datetime | None = None) -> datetime | None:
    """Read the ``since`` option the way ``ragbot logs export --since`` does.

    Args:
        value: ``2025-01-31``, an ISO datetime (UTC when no zone), an age (``24h``, ``7d``, ``2w``) or None.
        now: the current time, for tests.

    Returns:
        An aware datetime, or None when no value was given.

    Raises:
        ValueError: the value is neither form.
    """
    if value is None or not value.strip():
        return None
    return parse_when(value, now=now)


def is_admin(interaction: discord.Interaction[Any], settings: Settings) -> bool:
    """Whether the user is in ``DISCORD_ADMIN_USER_IDS`` or has a role in ``DISCORD_ADMIN_ROLE_IDS``.

    Discord's default permission only hides the command; server admins can grant it
    to anyone, so the bot checks its own lists too. With both lists empty nobody is admin.

    Args:
        interaction: the command interaction.
        settings: where the lists live.

    Returns:
        True when allowed.
    """
    if str(interaction.user.id) in settings.discord_admin_user_ids:
        return True
    # _roles holds the ids Discord sent even when the guild's roles are not cached.
    role_ids = {str(r) for r in getattr(interaction.user, "_roles", ())}
    return bool(role_ids & set(settings.discord_admin_role_ids))


async def handle_export(
    interaction: discord.Interaction[Any], *, file_format: str, since: str | None
) -> None:
    """Send the activity log and feedback as two files, ephemerally, to an admin; refuse others.

    Args:
        interaction: the ``/export-logs`` interaction.
        file_format: ``jsonl`` or ``csv``.
        since: the ``since`` option.
    """
    services = _services(interaction)
    user = interaction.user
    if not is_admin(interaction, services.settings):
        await services.activity.log(AgentLogEntry(
            event_type=EventType.ADMIN_EXPORT,
            error_details=f"refused {PLATFORM} export for user {user.id} in guild {interaction.guild_id}: "
                          "not in DISCORD_ADMIN_USER_IDS and no role in DISCORD_ADMIN_ROLE_IDS",
        ))
        await _say_privately(interaction, "Sorry, only ragbot admins can export the logs. An operator "
                                          "can add you to `DISCORD_ADMIN_USER_IDS` or your role to "
                                          "`DISCORD_ADMIN_ROLE_IDS`.")
        return
    try:
        since_at = parse_since(since)
    except Exception as exc:  # whatever the parser raises, the admin gets the usage, not a failed command
        reason = str(exc).rstrip(".") or type(exc).__name__
        await _say_privately(interaction, fmt.defuse(
            f"I couldn't read `since`: {reason}. Use a date like 2025-01-31, a time like "
            "2025-01-31T12:00Z, or an age like 24h, 7d or 2w."))
        return
    export_fmt: Literal["jsonl", "csv"] = "csv" if file_format == "csv" else "jsonl"
    await interaction.response.defer(ephemeral=True, thinking=True)
    bundle = await export_bundle(services.activity, services.feedback, fmt=export_fmt, since=since_at)
    rows, votes = bundle.log_rows, bundle.feedback_rows
    log_bytes, votes_bytes = bundle.log_text.encode(), bundle.feedback_text.encode()
    await services.activity.log(AgentLogEntry(
        event_type=EventType.ADMIN_EXPORT,
        response_summary=f"{PLATFORM}: user {user.id} exported {rows} log entries and {votes} votes "
                         f"as {export_fmt}" + (f" since {since_at.isoformat()}" if since_at else ""),
    ))
    if len(log_bytes) + len(votes_bytes) > interaction.filesize_limit:
        await interaction.followup.send(
            f"The export is {len(log_bytes) + len(votes_bytes)} bytes, over Discord's "
            f"{interaction.filesize_limit}-byte upload limit. Use a later `since`, or run "
            "`ragbot logs export` on the server.", ephemeral=True, allowed_mentions=NO_MENTIONS)
        return
    files = [
        discord.File(io.BytesIO(log_bytes), filename=bundle.log_filename),
        discord.File(io.BytesIO(votes_bytes), filename=bundle.feedback_filename),
    ]
    summary = f"{rows} log entries and {votes} votes"
    if since_at:
        summary += f" since {since_at:%Y-%m-%d %H:%M} UTC"
    await interaction.followup.send(
        summary, files=files, ephemeral=True, allowed_mentions=NO_MENTIONS,
    )


# --------------------------------------------------------------------------- entry points


def _token(settings: Settings) -> str:
    if settings.discord_token is None or not settings.discord_token.get_secret_value().strip():
        raise ConfigurationError(
            "DISCORD_TOKEN is not set: create a bot token as described in docs/discord.md"
        )
    return settings.discord_token.get_secret_value()


async def run_discord(services: Services) -> None:
    """Run the bot until cancelled or disconnected for good; always closes the connection.

    ``ragbot serve`` runs this as a task and cancels the task to stop it.

    Args:
        services: the answer service and stores (not closed here: the caller owns them).

    Raises:
        ConfigurationError: DISCORD_TOKEN is missing.
        discord.LoginFailure: the token was refused.
    """
    token = _token(services.settings)
    async with RagbotDiscord(services=services) as client:
        await client.start(token)


async def sync_commands(settings: Settings) -> None:
    """Log in, push the slash commands (to DISCORD_GUILD_IDS, else globally) and log out.

    Used by ``ragbot discord sync``; needs no answer service and opens no gateway.

    Args:
        settings: for DISCORD_TOKEN and DISCORD_GUILD_IDS.

    Raises:
        ConfigurationError: DISCORD_TOKEN is missing.
        discord.LoginFailure: the token was refused.
    """
    token = _token(settings)
    async with discord.Client(intents=discord.Intents.none(), allowed_mentions=NO_MENTIONS) as client:
        tree: app_commands.CommandTree[Any] = app_commands.CommandTree(client)
        add_commands(tree)
        await client.login(token)
        await sync_tree(tree, settings.discord_guild_ids)


async def _main() -> int:
    # Imported here: the adapter itself never imports the core's store or model code.
    from bots.runtime import build_services
    from core.settings import load_settings

    settings = load_settings()
    _token(settings)  # fail before loading models when the token is missing
    discord.utils.setup_logging(level=logging.getLevelName(settings.log_level.upper()))
    services = await build_services(settings)
    try:
        await run_discord(services)
    finally:
        await services.aclose()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(asyncio.run(_main()))
    except ConfigurationError as exc:
        print(f"ragbot: {exc}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        sys.exit(130)
