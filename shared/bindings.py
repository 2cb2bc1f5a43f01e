"""Which collection a chat place is bound to: a channel binding overrides its server's (guild's).

Kept in Redis so every bot replica agrees. Scopes are free-form strings chosen by the front-end,
e.g. ``guild:123`` / ``channel:456`` on Discord, ``team:T1`` / ``channel:C1`` on Slack.
"""

from __future__ import annotations

import re

import redis.asyncio as aioredis

from syllabot.shared.keys import Keys
from syllabot.shared.redis_conn import NO_WAIT, Durability, as_text

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class InvalidCollectionName(ValueError):
    """A collection name must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit."""


#: The collection the bundled sample corpus is indexed into, and the only one it ever enters.
SAMPLE_COLLECTION = "sample"


def validate_collection_name(name: str) -> str:
    name = name.strip()
    if not _NAME.match(name):
        raise InvalidCollectionName(
            f"'{name}' is not a valid collection name: use 1-64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit (for example 'cs-2026' or 'os_21cs44')."
        )
    return name


class Bindings:
    def __init__(
        self,
        redis: aioredis.Redis,
        keys: Keys,
        platform: str,
        default: str = "default",
        durability: Durability = NO_WAIT,
    ) -> None:
        self.redis = redis
        self.keys = keys
        self.platform = platform
        self.default = default
        self.durability = durability

    async def bind(self, scope: str, collection: str) -> str:
        collection = validate_collection_name(collection)
        await self.redis.set(self.keys.binding(self.platform, scope), collection)
        await self.durability.confirm_async(self.redis, "The channel's collection")
        return collection

    async def unbind(self, scope: str) -> None:
        await self.redis.delete(self.keys.binding(self.platform, scope))
        await self.durability.confirm_async(self.redis, "Unsetting the channel's collection")

    async def resolve(self, *scopes: str) -> str:
        """The first bound collection among ``scopes`` (most specific first), else the default."""
        if not scopes:
            return self.default
        values = await self.redis.mget([self.keys.binding(self.platform, s) for s in scopes])
        for value in values:
            if value:
                return value.decode() if isinstance(value, bytes) else str(value)
        return self.default


class Privacy:
    """Whether ``/ask`` answers privately in a chat place: a channel's setting overrides its
    workspace's (server's); None when neither is set (the platform's default applies).

    Kept beside :class:`Bindings` and set the same way (an admin command, per scope), in Redis so
    every bot replica agrees.
    """

    def __init__(
        self, redis: aioredis.Redis, keys: Keys, platform: str, durability: Durability = NO_WAIT
    ) -> None:
        self.redis = redis
        self.keys = keys
        self.platform = platform
        self.durability = durability

    async def set(self, scope: str, private: bool) -> None:
        await self.redis.set(self.keys.privacy(self.platform, scope), "private" if private else "public")
        await self.durability.confirm_async(self.redis, "The privacy setting")

    async def resolve(self, *scopes: str) -> bool | None:
        """The first setting among ``scopes`` (most specific first): True private, False public."""
        if not scopes:
            return None
        values = await self.redis.mget([self.keys.privacy(self.platform, s) for s in scopes])
        for value in values:
            if value:
                return as_text(value) == "private"
        return None
