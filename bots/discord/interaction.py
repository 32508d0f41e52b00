"""What every Discord handler needs: the client's services, private replies, conversation keys.

Conversations are keyed by Discord thread:

* ``/ask`` inside a thread continues that thread: ``thread_id = "discord:{guild}:{thread}"``.
* ``/ask`` in a text channel answers under ``"discord:{guild}:{message}"``, the id of the
  answer message, which is also the id of the thread started on it.
* In a DM the DM is the conversation: ``"discord:dm:{channel}"``.
* ``private:true`` answers ephemerally under ``"discord:{guild}:{channel}:private:{user}"`` so a
  private question never leaks into the history a public thread answers from.
"""

from __future__ import annotations

from typing import Any, Protocol, cast

import discord

from bots.chat.inflight import InFlight
from bots.chat.services import Services

PLATFORM = "discord"
NO_MENTIONS = discord.AllowedMentions.none()


class Served(Protocol):
    """The client as handlers see it (``RagbotDiscord``)."""

    services: Services
    in_flight: InFlight


def served(interaction: discord.Interaction[Any]) -> Served:
    """The ragbot client behind ``interaction``."""
    return cast(Served, interaction.client)


async def say_privately(interaction: discord.Interaction[Any], text: str) -> None:
    """Reply only the user sees: the interaction's response, or a follow-up once it was used."""
    if interaction.response.is_done():
        await interaction.followup.send(text, ephemeral=True, allowed_mentions=NO_MENTIONS)
    else:
        await interaction.response.send_message(text, ephemeral=True, allowed_mentions=NO_MENTIONS)


def conversation_key(interaction: discord.Interaction[Any], *, private: bool) -> str | None:
    """The thread_id for questions asked where ``interaction`` happened, when known up front.

    Returns:
        The key, or None for a public question in a channel: its key is the id of the
        answer message, known only once that message exists.
    """
    guild = str(interaction.guild_id) if interaction.guild_id else "dm"
    if private:
        return f"discord:{guild}:{interaction.channel_id}:private:{interaction.user.id}"
    if interaction.guild_id is None or isinstance(interaction.channel, discord.Thread):
        return f"discord:{guild}:{interaction.channel_id}"
    return None


def conversation_of_click(interaction: discord.Interaction[Any]) -> str | None:
    """The thread_id of the answer whose button was clicked, from where the button sits."""
    # After a restart the only link back to the conversation is the message itself.
    message = interaction.message
    private = message is not None and message.flags.ephemeral
    key = conversation_key(interaction, private=private)
    if key is None and message is not None:
        return f"discord:{interaction.guild_id}:{message.id}"
    return key
