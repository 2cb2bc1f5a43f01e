"""Who asked, as a keyed hash: no platform user id leaves a bot's process except to its platform.

The bots pass ``discord:u<hash>`` / ``slack:u<hash>`` wherever a per-user key is needed -- the
rate limit, votes, an upload's ``uploaded_by``, the ``AskRequest`` a worker receives -- so no log
line, metric, Redis key or stored record carries a raw id. The hash is an HMAC: without its key
nobody can recompute it from a list of a server's member ids, so a log line or a vote can never be
joined back to a person (kept questions carry no user at all).

The key is ``SYLLABOT_PSEUDONYM_KEY`` when set; otherwise it is derived from the bot's own secret
(the Discord token, the Slack signing secret or bot token), which every replica of one bot shares,
so rate limits and votes agree across replicas and restarts without a new setting. Rotating the key
only starts everyone's rate-limit window and vote history afresh.
"""

from __future__ import annotations

import hashlib
import hmac
import os

from syllabot.shared.config import Settings

#: Hex characters of the HMAC kept: 80 bits, collision-free for any class, short in a log.
PSEUDONYM_HEX = 20

_DERIVATION = b"syllabot pseudonym key v1"


def pseudonym_key(settings: Settings, platform: str) -> bytes:
    """The key the bot of ``platform`` hashes user ids with (see the module docstring)."""
    if settings.pseudonym_key:
        return settings.pseudonym_key.encode()
    secret = (
        settings.discord_token
        if platform == "discord"
        else settings.slack_signing_secret or settings.slack_bot_token
    )
    if not secret:  # a bot without its secret does not start; tests and tools get a process key
        return os.urandom(32)
    return hmac.new(secret.encode(), _DERIVATION, hashlib.sha256).digest()


def pseudonym(key: bytes, platform: str, user_id: str | int) -> str:
    """``platform:u<hash>`` for one platform user id."""
    digest = hmac.new(key, f"{platform}:{user_id}".encode(), hashlib.sha256).hexdigest()[:PSEUDONYM_HEX]
    return f"{platform}:u{digest}"
