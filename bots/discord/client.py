"""The Discord adapter: ``/ask`` answers from the docs, feedback buttons, ``/export-logs`` for admins.

The adapter depends on ``bots.chat`` and ``Services`` only. The commands are in
``commands.py``, the buttons in ``feedback.py``, the embeds in ``format.py``; this module
holds the client and its entry points. The client does not register its slash commands
when it starts (discord.py advises syncing only when they change): ``ragbot discord sync``
does that.

Run it alone with ``python -m bots.discord.client`` (needs ``DISCORD_TOKEN``).
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable
from typing import Any

import discord
from discord import app_commands

from bots.chat.inflight import InFlight
from bots.chat.services import Services
from bots.discord.commands import add_commands, on_tree_error
from bots.discord.feedback import FeedbackButton
from bots.discord.interaction import NO_MENTIONS
from core.errors import ConfigurationError
from core.settings import Settings

log = logging.getLogger(__name__)


class RagbotDiscord(discord.Client):
    """The ragbot Discord client: ``/ask``, ``/export-logs`` and the feedback buttons.

    Args:
        services: the answer service and stores.
        intents: gateway intents; the default asks only for ``guilds`` (no privileged intent).
        report: hears "connected" / "reconnecting" (``ragbot serve``'s health board).
    """

    def __init__(self, *, services: Services, intents: discord.Intents | None = None,
                 report: Callable[[str, str], None] | None = None) -> None:
        if intents is None:
            # Interactions arrive without any intent; guilds keeps channels and roles cached.
            intents = discord.Intents.none()
            intents.guilds = True
        super().__init__(intents=intents, allowed_mentions=NO_MENTIONS)
        self.services = services
        self.report = report
        self.in_flight = InFlight()
        self.tree = app_commands.CommandTree(self)
        add_commands(self.tree)
        self.tree.error(on_tree_error)

    async def setup_hook(self) -> None:
        """Register the persistent feedback buttons (the commands are synced by ``ragbot discord sync``)."""
        self.add_dynamic_items(FeedbackButton)

    async def on_ready(self) -> None:
        """The gateway session is up: tell the health board."""
        if self.report is not None:
            self.report("connected", f"as {self.user}")

    async def on_resumed(self) -> None:
        """A dropped gateway session was resumed."""
        if self.report is not None:
            self.report("connected", f"as {self.user} (resumed)")

    async def on_disconnect(self) -> None:
        """The gateway connection dropped; discord.py reconnects by itself."""
        if self.report is not None and not self.is_closed():
            self.report("reconnecting", "gateway connection lost")

    async def close(self) -> None:
        """Let answers in flight finish while the connection still works, then disconnect."""
        await self.in_flight.drain()
        await super().close()


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


def _token(settings: Settings) -> str:
    if settings.discord_token is None or not settings.discord_token.get_secret_value().strip():
        raise ConfigurationError(
            "DISCORD_TOKEN is not set: create a bot token as described in docs/discord.md"
        )
    return settings.discord_token.get_secret_value()


async def run_discord(services: Services, *, report: Callable[[str, str], None] | None = None) -> None:
    """Run the bot until cancelled or disconnected for good; always closes the connection.

    ``ragbot serve`` runs this as a task and cancels the task to stop it; answers in flight
    are finished and delivered before the connection closes.

    Args:
        services: the answer service and stores (not closed here: the caller owns them).
        report: hears the adapter's state (``ragbot serve``'s health board).

    Raises:
        ConfigurationError: DISCORD_TOKEN is missing, or Discord refused it.
    """
    token = _token(services.settings)
    if report is not None:
        report("connecting", "gateway")
    async with RagbotDiscord(services=services, report=report) as client:
        try:
            await client.start(token)
        except discord.LoginFailure as exc:
            raise ConfigurationError(f"Discord refused DISCORD_TOKEN ({exc}): reset the bot's token in "
                                     "the Developer Portal and set it again (docs/discord.md)") from None


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
