"""Syllabot: cited answers from a class's own course materials, in Discord, Slack and the terminal.

The installed namespace (the repository's top-level folders, mapped by ``pyproject.toml``):

- ``syllabot.shared``: settings, schema, Redis keys and the queue client; imports nothing else here.
- ``syllabot.worker``: ingest, index, search, answer; imports only ``syllabot.shared``.
- ``syllabot.bots``: Discord and Slack front-ends and the front-end core; imports only ``syllabot.shared``.
- ``syllabot.cli``: the ``syllabot`` command, the composition root that may import both sides.
- ``syllabot.corpus``: the sample corpus (package data).
"""

from syllabot.shared.deferred_imports import defer_unused

defer_unused()
