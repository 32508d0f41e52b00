"""All configuration, read once into one typed ``Settings`` object.

The bot's own settings use the ``RAGBOT_`` prefix; credentials keep the names
their ecosystems use (``SLACK_BOT_TOKEN``, ``DISCORD_TOKEN``, ``COHERE_API_KEY``,
``GEMINI_API_KEY``/``GOOGLE_API_KEY``, ``QDRANT_URL`` ...). A ``.env`` file in the
working directory is read too. ``docs/configuration.md`` is the reference.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from core.errors import ConfigurationError
from core.ingest.chunking import DEFAULT_TITLE_REPEAT
from core.models import (
    DEFAULT_MAX_QUERY_LENGTH,
    DEFAULT_RELEVANCE_THRESHOLD,
    AgentConfig,
    validate_collection_name,
)

CsvList = Annotated[list[str], NoDecode]


def _env(*names: str) -> AliasChoices:
    return AliasChoices(*names)


class Settings(BaseSettings):
    """ragbot's configuration; see docs/configuration.md for every variable."""

    model_config = SettingsConfigDict(
        env_prefix="RAGBOT_",
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        populate_by_name=True,
        # An empty SLACK_BOT_TOKEN= line means "not set", not "a token that is empty".
        env_ignore_empty=True,
    )

    # --- where things live
    data_dir: Path = Path("data")
    collection: str = "ragbot"
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = "WARNING"

    # --- questions and retrieval
    max_query_length: int = Field(default=DEFAULT_MAX_QUERY_LENGTH, ge=1, le=50_000)
    top_k: int = Field(default=5, ge=1, le=20)
    #: How many candidates each retriever (dense, sparse) returns before fusion.
    candidates: int = Field(default=100, ge=1, le=1000)
    relevance_threshold: float = Field(default=DEFAULT_RELEVANCE_THRESHOLD, ge=0.0, le=1.0)
    #: How sure the answerability check must be that the docs answer a question before the
    #: extractive answerer quotes them; with Gemini (told to say when the sources do not
    #: answer) only clearly off-topic questions are dropped (core/retrieval/answerability.py).
    #: 0.43: answered + declined best summed over the five corpora the model was fitted on. With
    #: Gemini, 0.15 passes 0.97 of in-scope first messages over eight sets (BENCHMARKS.md).
    answerable_probability: float = Field(default=0.43, ge=0.0, le=1.0)
    answerable_probability_llm: float = Field(default=0.15, ge=0.0, le=1.0)
    #: A question not answered whose probability still reaches this lists the pages that came
    #: closest (none quoted or cited). At 0.15, on 58 sets: 85 of the 121 answerable first messages
    #: declined list them, 66 with the page meant among them; so do 92 of the 487 off-topic ones
    #: declined (BENCHMARKS.md, twenty-ninth pass).
    closest_pages_probability: float = Field(default=0.15, ge=0.0, le=1.0)
    #: Weight of the dense retriever in the convex fusion (the sparse one gets 1 - this).
    dense_weight: float = Field(default=0.35, ge=0.0, le=1.0)
    #: Times a chunk's title line is repeated in the text it is embedded from (field weighting:
    #: title words count double in BM25); part of the index, so changing it needs a re-ingest.
    title_repeat: int = Field(default=DEFAULT_TITLE_REPEAT, ge=1, le=5)
    #: Conversation turns of the same thread used for follow-ups and LLM memory.
    history_turns: int = Field(default=6, ge=0, le=100)
    #: Pages the extractive answerer quotes at most (a page may give several parts).
    answer_sources: int = Field(default=2, ge=1, le=5)

    # --- adapters shared
    rate_limit_per_minute: int = Field(default=10, ge=0, description="0 disables the limit")
    #: ``ragbot serve`` deletes history older than this many days, once a day; 0 keeps everything.
    log_retention_days: int = Field(default=0, ge=0, le=36_500)
    port: int = Field(default=3000, ge=0, le=65535, validation_alias=_env("PORT", "RAGBOT_PORT"))
    #: Interface the Slack HTTP listener binds: 127.0.0.1 behind a reverse proxy, 0.0.0.0 to face Slack.
    slack_host: str = Field(default="0.0.0.0", min_length=1)
    #: One deadline per question (seconds): past it the extractive answer (or a reason) is sent.
    answer_deadline: float = Field(default=30.0, gt=0, le=600)
    #: How long ``ragbot ask``/``chat`` wait for another ragbot process holding the knowledge base.
    store_wait: float = Field(default=60.0, ge=0, le=3600)

    # --- Slack
    slack_bot_token: SecretStr | None = Field(default=None, validation_alias=_env("SLACK_BOT_TOKEN"))
    slack_app_token: SecretStr | None = Field(default=None, validation_alias=_env("SLACK_APP_TOKEN"))
    slack_signing_secret: SecretStr | None = Field(
        default=None, validation_alias=_env("SLACK_SIGNING_SECRET")
    )
    slack_api_url: str | None = Field(default=None, validation_alias=_env("SLACK_API_URL"))
    slack_admin_user_ids: CsvList = Field(
        default_factory=list, validation_alias=_env("SLACK_ADMIN_USER_IDS")
    )
    #: "thread": answer later messages in threads the bot answered in; "mention": only mentions.
    slack_followups: Literal["thread", "mention"] = "thread"

    # --- Discord
    discord_token: SecretStr | None = Field(default=None, validation_alias=_env("DISCORD_TOKEN"))
    discord_guild_ids: CsvList = Field(
        default_factory=list, validation_alias=_env("DISCORD_GUILD_IDS")
    )
    discord_admin_role_ids: CsvList = Field(
        default_factory=list, validation_alias=_env("DISCORD_ADMIN_ROLE_IDS")
    )
    discord_admin_user_ids: CsvList = Field(
        default_factory=list, validation_alias=_env("DISCORD_ADMIN_USER_IDS")
    )

    # --- Cohere
    cohere_api_key: SecretStr | None = Field(default=None, validation_alias=_env("COHERE_API_KEY"))
    cohere_base_url: str | None = Field(default=None, validation_alias=_env("COHERE_BASE_URL"))
    cohere_embed_model: str = "embed-v4.0"
    cohere_rerank_model: str = "rerank-v3.5"
    #: embed-v4.0 can return 256, 512, 1024 or 1536 dimensions; None uses the model's default.
    cohere_output_dimension: int | None = Field(default=None, ge=1)

    # --- Gemini
    gemini_api_key: SecretStr | None = Field(
        default=None, validation_alias=_env("GEMINI_API_KEY", "GOOGLE_API_KEY")
    )
    gemini_base_url: str | None = Field(default=None, validation_alias=_env("GEMINI_BASE_URL"))
    gemini_model: str = "gemini-2.5-flash"
    max_tokens: int = Field(default=1024, ge=1, le=65_536)
    temperature: float = Field(default=0.2, ge=0.0, le=1.0)
    context_window: int = Field(default=8192, ge=256)
    #: The first turn of a new question always searches before the model answers.
    force_first_search: bool = True
    max_tool_calls: int = Field(default=3, ge=0, le=10)
    provider_timeout: float = Field(default=30.0, gt=0)
    provider_retries: int = Field(default=3, ge=0, le=10)

    # --- Qdrant server (when set, replaces the embedded engine)
    qdrant_url: str | None = Field(default=None, validation_alias=_env("QDRANT_URL"))
    qdrant_api_key: SecretStr | None = Field(default=None, validation_alias=_env("QDRANT_API_KEY"))
    qdrant_shard_number: int | None = Field(default=None, ge=1)
    qdrant_replication_factor: int | None = Field(default=None, ge=1)
    qdrant_write_consistency_factor: int | None = Field(default=None, ge=1)
    qdrant_on_disk: bool = False

    @field_validator(
        "slack_admin_user_ids",
        "discord_guild_ids",
        "discord_admin_role_ids",
        "discord_admin_user_ids",
        mode="before",
    )
    @classmethod
    def _split_csv(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value

    @field_validator("collection")
    @classmethod
    def _collection(cls, value: str) -> str:
        return validate_collection_name(value)

    @model_validator(mode="after")
    def _agent_config_fits(self) -> Settings:
        if self.max_tokens >= self.context_window:
            raise ValueError(
                f"RAGBOT_MAX_TOKENS ({self.max_tokens}) must be smaller than "
                f"RAGBOT_CONTEXT_WINDOW ({self.context_window})"
            )
        return self

    # --- derived paths and objects
    @property
    def store_dir(self) -> Path:
        """Folder of the embedded Qdrant engine."""
        return self.data_dir / "qdrant"

    @property
    def sqlite_path(self) -> Path:
        """The SQLite database: queries, conversation turns, the AgentLogEntry log."""
        return self.data_dir / "ragbot.sqlite3"

    @property
    def control_socket(self) -> Path:
        """Unix socket of a running ``ragbot serve``, for the CLI to hand work to."""
        return self.data_dir / "ragbot.sock"

    def agent_config(self) -> AgentConfig:
        """The generation settings as the spec's AgentConfig."""
        return AgentConfig(
            model_name=self.gemini_model,
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            context_window=self.context_window,
        )


def _variable(field: str) -> str:
    """The environment variable users set for a settings field."""
    info = Settings.model_fields.get(field)
    if info is None:  # pydantic reported the alias itself (PORT, SLACK_BOT_TOKEN ...)
        return field
    alias = info.validation_alias
    if isinstance(alias, AliasChoices):
        return str(alias.choices[0])
    return f"RAGBOT_{field.upper()}"


def load_settings(**overrides: Any) -> Settings:
    """Read the environment (and .env) once.

    Raises:
        ConfigurationError: naming every bad variable.
    """
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        problems = "; ".join(
            f"{_variable(str(err['loc'][0])) if err['loc'] else 'settings'}: "
            f"{str(err['msg']).removeprefix('Value error, ')}"
            for err in exc.errors()
        )
        raise ConfigurationError(f"invalid configuration: {problems}") from exc
