"""Redis key names, so the bots, the worker and operators' scripts agree on them.

Every key starts with the settings' ``key_prefix`` (default ``syllabot:``) so several deployments,
or parallel test runs, can share one Redis without touching each other's data.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Keys:
    prefix: str = "syllabot:"

    # --- queue ----------------------------------------------------------------------------
    @property
    def queue(self) -> str:
        """arq queue name."""
        return f"{self.prefix}queue"

    def result_list(self, job_id: str) -> str:
        """List the worker LPUSHes a finished job's result to, awaited by the client with BLPOP."""
        return f"{self.prefix}result:{job_id}"

    def delivered(self, job_id: str) -> str:
        """Set (with the result's expiry) when a job's result is pushed, so a job run again after
        its worker died between pushing and finishing is not delivered twice."""
        return f"{self.prefix}delivered:{job_id}"

    def cancel(self, job_id: str) -> str:
        """Set by a client that stops waiting for a write job it asked for (Ctrl-C of `syllabot
        index`); the worker running the job watches it and cancels the build before it publishes."""
        return f"{self.prefix}cancel:{job_id}"

    def partials(self, job_id: str) -> str:
        """List of a question's partial answer texts (shared/partials.py), newest last: the worker
        RPUSHes while an LLM streams, the asking client pops them alongside ``result_list``."""
        return f"{self.prefix}partial:{job_id}"

    @property
    def workers(self) -> str:
        """Sorted set worker id -> last heartbeat (unix seconds); live workers beat every few seconds."""
        return f"{self.prefix}workers"

    def worker_cache(self, worker_id: str) -> str:
        """JSON of a worker's snapshot cache figures, rewritten with each heartbeat and expiring
        soon after the worker stops (read by ``syllabot doctor``)."""
        return f"{self.prefix}worker:{worker_id}:cache"

    @property
    def expired_asks(self) -> str:
        """Counter: questions workers dropped unanswered because their asker had stopped waiting."""
        return f"{self.prefix}stats:expired_asks"

    @property
    def wake(self) -> str:
        """Pub/sub channel the client publishes to after enqueueing, so idle workers poll at once."""
        return f"{self.prefix}wake"

    # --- collections ----------------------------------------------------------------------
    @property
    def collections(self) -> str:
        """Set of collection names."""
        return f"{self.prefix}collections"

    def documents(self, collection: str) -> str:
        """Hash doc_id -> JSON metadata of the stored source document."""
        return f"{self.prefix}c:{collection}:docs"

    def document_bytes(self, collection: str, doc_id: str) -> str:
        """The raw uploaded bytes of one document, so any worker can rebuild the index."""
        return f"{self.prefix}c:{collection}:doc:{doc_id}"

    def current(self, collection: str) -> str:
        """String: the version id of the collection's current index snapshot."""
        return f"{self.prefix}c:{collection}:current"

    def snapshot(self, collection: str, version: str) -> str:
        """Hash with fields meta, matrix, chunks, keyword: one immutable index snapshot."""
        return f"{self.prefix}c:{collection}:snap:{version}"

    @property
    def write_probe(self) -> str:
        """A key a client writes (expiring at once) to learn whether Redis refuses writes (full)."""
        return f"{self.prefix}probe"

    def collection_glob(self, collection: str) -> str:
        """A SCAN pattern for every key of one collection (names hold no glob characters)."""
        return f"{self.prefix}c:{collection}:*"

    def binding_glob(self) -> str:
        """A SCAN pattern for every platform's collection bindings."""
        return f"{self.prefix}bind:*"

    def build_lock(self, collection: str) -> str:
        return f"{self.prefix}c:{collection}:lock"

    def answer_cache(self, collection: str, version: str, digest: str) -> str:
        """JSON of a computed answer to one normalised question on one index version (with a TTL);
        the version is in the name, so a new index never serves an old answer (worker/answerers/answer_cache.py)."""
        return f"{self.prefix}c:{collection}:ans:{version}:{digest}"

    def questions(self, collection: str) -> str:
        """Stream of the questions asked of a collection (text, status, query vector, closest passage;
        never who asked), kept only when SYLLABOT_KEEP_QUESTIONS_DAYS > 0 and only that long."""
        return f"{self.prefix}c:{collection}:questions"

    def progress(self, collection: str, job_id: str) -> str:
        """Hash with stage/done/total of a running ingest, for 'embedding 120/300 chunks'."""
        return f"{self.prefix}c:{collection}:progress:{job_id}"

    # --- bindings, rate limits, feedback ------------------------------------------------------
    def binding(self, platform: str, scope: str) -> str:
        """String: the collection a Discord guild/channel or Slack channel is bound to."""
        return f"{self.prefix}bind:{platform}:{scope}"

    def privacy(self, platform: str, scope: str) -> str:
        """String "private"/"public": how ``/ask`` answers in a Slack channel or workspace."""
        return f"{self.prefix}privacy:{platform}:{scope}"

    def thread(self, thread_id: str) -> str:
        """List of JSON turns of one conversation (a platform thread), newest last (shared/threads.py)."""
        return f"{self.prefix}thread:{thread_id}"

    def rate(self, platform: str, user: str) -> str:
        return f"{self.prefix}rate:{platform}:{user}"

    def slack_event(self, event_id: str) -> str:
        """An Events API event id already answered (Slack redelivers events it thinks we missed)."""
        return f"{self.prefix}event:{event_id}"

    @property
    def feedback_stream(self) -> str:
        return f"{self.prefix}feedback"

    def feedback_vote(self, answer_id: str) -> str:
        """Hash user -> vote for one answer, so a user's vote is one and changeable."""
        return f"{self.prefix}vote:{answer_id}"

    def report_posted(self, platform: str, channel: str, week: str) -> str:
        """Set once when the weekly gap report of ``week`` (ISO, e.g. 2026-W49) went to ``channel``,
        so several bot replicas or a restart never post it twice."""
        return f"{self.prefix}report:{platform}:{channel}:{week}"

    def answer_record(self, answer_id: str) -> str:
        """JSON of an answer shown to users, kept so a later vote can store what was voted on."""
        return f"{self.prefix}answer:{answer_id}"
