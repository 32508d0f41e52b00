"""The deploy files parse, agree with the docs and name only variables ragbot reads (nothing is built)."""

from __future__ import annotations

import re

import yaml
from pydantic import AliasChoices

from core.settings import Settings
from tests.support.paths import ROOT


def _env_names() -> set[str]:
    names = set()
    for name, field in Settings.model_fields.items():
        alias = field.validation_alias
        if isinstance(alias, AliasChoices):
            names |= {str(c) for c in alias.choices}
        else:
            names.add(f"RAGBOT_{name.upper()}")
    return names


def test_dockerfile_is_slim_non_root_with_a_data_volume_and_a_health_check() -> None:
    text = (ROOT / "Dockerfile").read_text()
    assert re.findall(r"^FROM (\S+)", text, re.M) == ["python:3.11-slim", "python:3.11-slim"]
    assert "--mount=type=cache,target=/root/.cache/pip" in text and "pip wheel" in text
    user = re.findall(r"^USER (\S+)", text, re.M)
    assert user == ["ragbot"]
    assert 'VOLUME ["/data"]' in text and "RAGBOT_DATA_DIR=/data" in text
    assert "/healthz" in re.search(r"^HEALTHCHECK .*(?:\n .*)*", text, re.M).group(0)  # type: ignore[union-attr]
    assert text.rstrip().endswith('CMD ["ragbot", "serve"]')
    named = set(re.findall(r"\b((?:RAGBOT|SLACK|DISCORD|QDRANT|COHERE|GEMINI)_[A-Z_]+|PORT)\b", text))
    assert named <= _env_names(), named - _env_names()
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".git", ".venv", "data"} <= set(ignored)


def test_compose_runs_the_bot_beside_a_qdrant_server() -> None:
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    bot, qdrant = compose["services"]["bot"], compose["services"]["qdrant"]
    assert bot["environment"]["QDRANT_URL"] == "http://qdrant:6333"
    assert set(bot["environment"]) <= _env_names()
    assert "qdrant" in bot["depends_on"] and qdrant["image"].startswith("qdrant/qdrant:")
    assert "ragbot-data:/data" in bot["volumes"] and bot["environment"]["RAGBOT_DATA_DIR"] == "/data"
    assert set(compose["volumes"]) == {"ragbot-data", "qdrant-data"}


def test_slack_manifest_is_the_one_the_docs_show() -> None:
    manifest = yaml.safe_load((ROOT / "slack-manifest.yaml").read_text())
    docs = (ROOT / "docs" / "slack.md").read_text()
    block = re.search(r"```yaml\n(display_information:.*?)```", docs, re.S)
    assert block is not None
    documented = yaml.safe_load(block.group(1))
    assert manifest == documented
    assert manifest["settings"]["socket_mode_enabled"] is True
    assert "app_mention" in manifest["settings"]["event_subscriptions"]["bot_events"]
    assert {"app_mentions:read", "chat:write", "commands", "files:write"} <= set(
        manifest["oauth_config"]["scopes"]["bot"])
    assert manifest["features"]["slash_commands"][0]["command"] == "/ragbot-export"


def test_deploy_doc_uses_the_files_and_names_the_variables() -> None:
    text = (ROOT / "docs" / "deploy.md").read_text()
    for needle in ("Dockerfile", "compose.yaml", "slack-manifest.yaml", "/healthz", "ragbot doctor",
                   "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "DISCORD_TOKEN", "QDRANT_URL", "RAGBOT_DATA_DIR",
                   "PORT", "RAGBOT_LOG_RETENTION_DAYS"):
        assert needle in text, needle
    named = set(re.findall(r"\b((?:RAGBOT|SLACK|DISCORD|QDRANT|COHERE|GEMINI)_[A-Z_]+)\b", text))
    assert named <= _env_names(), named - _env_names()
