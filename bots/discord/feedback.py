"""The 👍 / 👎 buttons under a Discord answer; they keep working after a restart."""

from __future__ import annotations

import logging
import re
from typing import Any, Literal, cast

import discord

from bots.chat import feedback
from bots.discord import format as fmt
from bots.discord.interaction import NO_MENTIONS, PLATFORM, conversation_of_click, served

log = logging.getLogger(__name__)

FEEDBACK_TEMPLATE = r"ragbot:fb:(?P<vote>up|down):(?P<rid>[0-9a-f]+)"
_FEEDBACK_RE = re.compile(FEEDBACK_TEMPLATE)
#: Discord's custom_id limit is 100 characters; "ragbot:fb:down:" takes 15.
_MAX_RESPONSE_ID = 85


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
        """Rebuild the button from a clicked custom_id (``match`` holds ``vote`` and ``rid``)."""
        return cls(vote=cast(Literal["up", "down"], match["vote"]), response_id=match["rid"])

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        """Store the vote and answer the voter privately: thanks, or a reference when storing failed."""
        client = served(interaction)
        with client.in_flight.track():
            outcome = await feedback.record_vote(
                client.services, platform=PLATFORM, response_id=self.response_id,
                user=str(interaction.user.id), vote=1 if self.vote == "up" else -1,
                thread_id=conversation_of_click(interaction),
            )
            await interaction.response.send_message(
                fmt.defuse(feedback.reply_text(outcome)), ephemeral=True, allowed_mentions=NO_MENTIONS)


def feedback_view(response_id: str) -> discord.ui.View | None:
    """The 👍/👎 buttons for one answer, without timeout; None when the id cannot ride in a custom_id."""
    if len(response_id) > _MAX_RESPONSE_ID or not _FEEDBACK_RE.fullmatch(f"ragbot:fb:up:{response_id}"):
        log.warning("response id %r does not fit a feedback custom_id; answer sent without buttons",
                    response_id)
        return None
    view = discord.ui.View(timeout=None)
    view.add_item(FeedbackButton(vote="up", response_id=response_id))
    view.add_item(FeedbackButton(vote="down", response_id=response_id))
    return view
