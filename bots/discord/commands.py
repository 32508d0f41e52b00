"""Discord's slash commands: ``/ask`` and ``/export-logs`` (admins only, checked by an app_commands check).

Each command turns its interaction into calls to ``bots.chat`` and shows the outcome the
Discord way: ``/ask`` defers, posts a placeholder, starts a public thread on it in a text
channel and edits the placeholder into the answer, so later ``/ask`` in the new thread finds
the first turn. Without permission to start threads the answer stays in the channel under
the same key, and a thread someone starts on it by hand later continues the conversation.
"""

from __future__ import annotations

import io
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import discord
from discord import app_commands

from bots.chat import asking, export
from bots.chat.asking import Answered, Invalid, Outcome
from bots.chat.errors import describe, failure_text, log_error
from bots.chat.export import ExportBundle, ExportRequest, ExportUsageError
from bots.chat.notices import notice_for
from bots.discord import format as fmt
from bots.discord.feedback import feedback_view
from bots.discord.interaction import NO_MENTIONS, PLATFORM, conversation_key, say_privately, served
from core.settings import Settings

log = logging.getLogger(__name__)

T = TypeVar("T")
EXPORT_USAGE = "`/export-logs [format: jsonl|csv] [since: 2025-01-31 | 24h | 7d]`"
ADMIN_RULE = "not in DISCORD_ADMIN_USER_IDS and no role in DISCORD_ADMIN_ROLE_IDS"


class NotRagbotAdmin(app_commands.CheckFailure):
    """The user is not in DISCORD_ADMIN_USER_IDS and has no role in DISCORD_ADMIN_ROLE_IDS."""


def is_admin(user: discord.User | discord.Member, settings: Settings) -> bool:
    """Whether ``user`` is in ``DISCORD_ADMIN_USER_IDS`` or has a role in ``DISCORD_ADMIN_ROLE_IDS``.

    Discord's default permission only hides the command; server admins can grant it to
    anyone, so the bot checks its own lists too. With both lists empty nobody is admin.
    Roles come from ``Member.roles`` (the guild's roles are cached: the client asks for the
    ``guilds`` intent); in a DM the user is no Member and only the user list counts.
    """
    if str(user.id) in settings.discord_admin_user_ids:
        return True
    if not isinstance(user, discord.Member):
        return False
    allowed = set(settings.discord_admin_role_ids)
    return any(str(role.id) in allowed for role in user.roles)


def ragbot_admins_only() -> Callable[[T], T]:
    """An ``app_commands`` check letting only ragbot admins run the command (see ``is_admin``)."""

    def predicate(interaction: discord.Interaction[Any]) -> bool:
        if is_admin(interaction.user, served(interaction).services.settings):
            return True
        raise NotRagbotAdmin("only ragbot admins may export the logs")

    return app_commands.check(predicate)


def add_commands(tree: app_commands.CommandTree[Any]) -> None:
    """Add ``/ask`` and ``/export-logs`` to ``tree`` (fresh command objects per tree)."""

    @app_commands.command(name="ask", description="Ask a question about the docs")
    @app_commands.describe(question="Your question", private="Only you see the answer (default: no)")
    async def ask(interaction: discord.Interaction[Any], question: str, private: bool = False) -> None:
        await handle_ask(interaction, question=question, private=private)

    @app_commands.command(name="export-logs", description="Admins: download the activity log and feedback")
    @app_commands.default_permissions(administrator=True)
    @ragbot_admins_only()
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


async def on_tree_error(interaction: discord.Interaction[Any], error: app_commands.AppCommandError) -> None:
    """Refuse (and log) a non-admin's export; log anything else and reply with its reference."""
    client = served(interaction)
    with client.in_flight.track():
        if isinstance(error, NotRagbotAdmin):
            await say_privately(interaction, export.refused_text(
                "`DISCORD_ADMIN_USER_IDS`, or your role to `DISCORD_ADMIN_ROLE_IDS`"))
            await export.refuse(client.services, platform=PLATFORM, user=str(interaction.user.id),
                                rule=ADMIN_RULE)
            return
        cause = error.original if isinstance(error, app_commands.CommandInvokeError) else error
        reference = await log_error(client.services.activity, f"command failed: {describe(cause)}",
                                    platform=PLATFORM)
        try:
            await say_privately(interaction, fmt.defuse(
                failure_text("I couldn't answer that: something went wrong on my side", reference)))
        except discord.HTTPException:
            log.exception("could not tell the user about error %s", reference)


# --------------------------------------------------------------------------- /ask


@dataclass(frozen=True, slots=True)
class _Place:
    """Where an answer goes: its conversation, the placeholder to edit, the thread for more pages."""

    thread_id: str
    private: bool
    placeholder: discord.WebhookMessage | None = None
    thread: discord.Thread | None = None


async def handle_ask(interaction: discord.Interaction[Any], *, question: str, private: bool) -> None:
    """Answer one ``/ask``: first delivery, pre-checks, defer, answer, deliver, log."""
    client = served(interaction)
    with client.in_flight.track():
        services = client.services
        started = time.perf_counter()
        user = str(interaction.user.id)
        # A delivery seen before (gateway replay after a resume) was answered the first time.
        if not await asking.first_delivery(services, PLATFORM, str(interaction.id)):
            return
        text = question.strip()
        refusal = asking.precheck(services, text, user=user)
        if refusal is not None:
            await say_privately(interaction, fmt.defuse(fmt.refusal_text(refusal)))
            return
        await interaction.response.defer(ephemeral=private, thinking=True)
        place = await _open_place(interaction, text, private=private)
        outcome = await asking.ask(services, text, platform=PLATFORM, thread_id=place.thread_id, user=user)
        delivered = await _deliver(interaction, outcome, place, question=text)
        await asking.record_delivery(services, outcome, platform=PLATFORM, delivered=delivered,
                                     started=started, where=f"channel {interaction.channel_id}")


async def _open_place(interaction: discord.Interaction[Any], question: str, *, private: bool) -> _Place:
    """The conversation key; for a public question in a channel, the placeholder and its thread."""
    key = conversation_key(interaction, private=private)
    if key is not None:
        return _Place(thread_id=key, private=private)
    placeholder = await interaction.followup.send(fmt.PLACEHOLDER, wait=True, allowed_mentions=NO_MENTIONS)
    thread = await _start_thread(interaction, placeholder, question)
    return _Place(thread_id=f"discord:{interaction.guild_id}:{placeholder.id}", private=private,
                  placeholder=placeholder, thread=thread)


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


async def _deliver(interaction: discord.Interaction[Any], outcome: Outcome, place: _Place, *,
                   question: str) -> bool:
    """Show the outcome; False when Discord refused it."""
    try:
        if isinstance(outcome, Answered):
            await _send_answer(interaction, outcome, place, question=question)
        else:
            # After a public defer Discord shows a follow-up publicly whatever the flag says;
            # a private ask stays private, and a validation problem is the asker's business.
            await _send_text(interaction, place, fmt.defuse(asking.problem_text(outcome)),
                             private=place.private or isinstance(outcome, Invalid))
    except discord.HTTPException as exc:
        log.warning("could not deliver to channel %s: %s", interaction.channel_id, exc)
        return False
    return True


async def _send_text(
    interaction: discord.Interaction[Any], place: _Place, text: str, *, private: bool
) -> None:
    if place.placeholder is not None:
        await place.placeholder.edit(content=text, allowed_mentions=NO_MENTIONS)
    else:
        await interaction.followup.send(text, ephemeral=private, allowed_mentions=NO_MENTIONS)


async def _send_answer(
    interaction: discord.Interaction[Any], outcome: Answered, place: _Place, *, question: str
) -> None:
    response = outcome.response
    first, *rest = fmt.answer_embeds(response, question=question, reference_id=outcome.reference_id)
    view = feedback_view(response.response_id) if notice_for(response).feedback else None
    with_view: dict[str, Any] = {"view": view} if view is not None else {}
    if place.placeholder is not None:
        await place.placeholder.edit(content=None, embed=first, allowed_mentions=NO_MENTIONS, **with_view)
    else:
        await interaction.followup.send(embed=first, ephemeral=place.private, allowed_mentions=NO_MENTIONS,
                                        **with_view)
    for embed in rest:
        # Continuation pages go into the new thread, keeping the channel to one message per answer.
        if place.thread is not None:
            await place.thread.send(embed=embed, allowed_mentions=NO_MENTIONS)
        else:
            await interaction.followup.send(embed=embed, ephemeral=place.private,
                                            allowed_mentions=NO_MENTIONS)


# --------------------------------------------------------------------------- /export-logs


async def handle_export(
    interaction: discord.Interaction[Any], *, file_format: str, since: str | None
) -> None:
    """Send an admin the activity log and feedback as two files, privately (the check refused others)."""
    client = served(interaction)
    with client.in_flight.track():
        services = client.services
        try:
            request = ExportRequest(fmt="csv" if file_format == "csv" else "jsonl",
                                    since=export.parse_since(services.exports, since))
        except ExportUsageError as exc:
            await say_privately(interaction, fmt.defuse(export.usage_text(EXPORT_USAGE, exc)))
            return
        await interaction.response.defer(ephemeral=True, thinking=True)

        async def send_files(asked: ExportRequest, bundle: ExportBundle) -> None:
            files = [
                discord.File(io.BytesIO(bundle.log_text.encode()), filename=bundle.log_filename),
                discord.File(io.BytesIO(bundle.feedback_text.encode()), filename=bundle.feedback_filename),
            ]
            await interaction.followup.send(export.summary_text(asked, bundle), files=files, ephemeral=True,
                                            allowed_mentions=NO_MENTIONS)

        outcome = await export.send(services, request, platform=PLATFORM, user=str(interaction.user.id),
                                    deliver=send_files, max_bytes=interaction.filesize_limit)
        if not isinstance(outcome, export.Exported):
            await interaction.followup.send(fmt.defuse(export.problem_text(outcome)), ephemeral=True,
                                            allowed_mentions=NO_MENTIONS)
