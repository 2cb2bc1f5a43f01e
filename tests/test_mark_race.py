"""`/supersede` racing a `replace` upload: two admins, two worker processes (issue 49).

Admin A asks to mark ``warranty.md`` superseded while admin B uploads ``warranty-2026.md`` with the
same document id (front matter ``id: warranty``) and ``replace``. Before the fix the mark named
only the doc id, so in 3 of 6 races A was told "warranty.md is marked superseded" while the mark
had landed on B's new upload. The mark now names the version A looked up (doc id and content
hash), is refused with a clear message when that version is gone, and the reply names the file
the worker actually marked.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from syllabot.bots.frontend import UsageError, mark_document
from syllabot.shared.config import Settings
from syllabot.shared.queue import QueueClient
from syllabot.shared.schema import SourceInfo
from tests.queue_helpers import wait_for_workers, worker_processes

OLD = b"---\nid: warranty\n---\n# Warranty\n\nBikes carry a one-year warranty on the frame.\n"
NEW = b"---\nid: warranty\n---\n# Warranty 2026\n\nFrom 2026 bikes carry a two-year warranty on the frame.\n"
OTHER = b"# Returns\n\nReturn a bike within 30 days with its receipt.\n"


class LookupThenUpload(QueueClient):
    """Admin A's client: between A's lookup of the documents and A's mark, admin B's upload lands
    (the interleaving that lost the race), made deterministic with a real second client."""

    def __init__(self, settings: Settings, other: QueueClient) -> None:
        super().__init__(settings)
        self.other = other

    async def sources(self, collection: str, timeout: float | None = None) -> list[SourceInfo]:
        seen = await super().sources(collection, timeout)
        await self.other.ingest_many(collection, [("warranty-2026.md", NEW)], "admin-b", replace=True)
        return seen


async def _fresh(client: QueueClient) -> None:
    """warranty.md (id: warranty) and returns.md indexed, nothing marked."""
    await client.ingest_many("shop", [("warranty.md", OLD), ("returns.md", OTHER)], "admin-a", replace=True)
    await client.mark("shop", "warranty", "current", "setup")


async def _state(client: QueueClient) -> dict[str, SourceInfo]:
    return {s.file: s for s in await client.sources("shop")}


async def test_a_mark_whose_version_was_replaced_meanwhile_is_refused_and_names_both(
    settings: Settings, tmp_path: Path
) -> None:
    with worker_processes(settings, tmp_path, ["w1", "w2"]):
        await wait_for_workers(settings, 2)
        async with QueueClient(settings) as b, LookupThenUpload(settings, b) as a:
            await _fresh(b)
            reply = await mark_document(a, "shop", "warranty.md", "superseded", "admin-a")
            state = await _state(b)
    assert "warranty.md" not in state and state["warranty-2026.md"].status != "superseded"
    assert not reply.ok
    assert reply.title == "Nothing marked: warranty.md was replaced"
    (line,) = reply.lines
    assert "nothing was changed" in line and "warranty-2026.md" in line and "admin-b" in line


async def test_six_races_of_supersede_and_replace_never_misreport_what_was_marked(
    settings: Settings, tmp_path: Path
) -> None:
    outcomes: list[str] = []
    with worker_processes(settings, tmp_path, ["w1", "w2"]):
        await wait_for_workers(settings, 2)
        async with QueueClient(settings) as a, QueueClient(settings) as b:
            for _ in range(6):
                await _fresh(b)

                async def supersede() -> object:
                    try:
                        return await mark_document(a, "shop", "warranty.md", "superseded", "admin-a")
                    except UsageError as exc:  # looked up after B's upload: no warranty.md any more
                        return exc

                reply, _ = await asyncio.gather(
                    supersede(),
                    b.ingest_many("shop", [("warranty-2026.md", NEW)], "admin-b", replace=True),
                )
                state = await _state(b)
                new = state["warranty-2026.md"]
                if isinstance(reply, UsageError):
                    outcomes.append("not found")
                    assert "no document 'warranty.md'" in str(reply)
                    assert new.status != "superseded"
                elif reply.ok:  # type: ignore[attr-defined]
                    outcomes.append("marked")
                    # the mark landed on warranty.md, which B's upload then replaced (unmarked)
                    assert reply.title.startswith("warranty.md")  # type: ignore[attr-defined]
                    assert new.status != "superseded", "the mark landed on B's upload"
                else:
                    outcomes.append("refused")
                    assert "warranty-2026.md" in reply.lines[0]  # type: ignore[attr-defined]
                    assert new.status != "superseded"
    print("supersede vs replace outcomes:", outcomes)
    assert len(outcomes) == 6, outcomes
