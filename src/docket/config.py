"""Typed settings: one field = one CLI flag = one config key.

Precedence: CLI flag > environment variable ``DOCKET_<FIELD>`` > ``docket.toml``
(table ``[docket]``) in the working directory > default.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from platformdirs import user_cache_dir
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from docket.errors import ConfigError
from docket.reading import first_problem

CONFIG_FILE = "docket.toml"


def default_cache_path() -> str:
    """The response cache in the user cache directory (never inside a project by accident)."""
    return str(Path(user_cache_dir("docket")) / "responses.sqlite")


class Settings(BaseModel):
    """Settings shared by the commands."""

    model_config = ConfigDict(extra="forbid")

    db: str = Field("docket.db", description="store path or SQLAlchemy URL")
    model: str = Field("local", description="model name, e.g. local or openai:gpt-4o-mini")
    cache: str = Field(
        default_factory=default_cache_path, description="response cache file, or 'off'"
    )
    # Unset, ``docket judge`` judges as many pairs at once as the model has calls in
    # flight (see cli.common.pairs_at_once); other commands use the default below.
    concurrency: int = Field(4, ge=1, le=4096, description="pairs judged at once")
    max_in_flight: int | None = Field(
        None,
        ge=1,
        le=4096,
        description="LLM calls in flight per model (default: 64 served, 1 local)",
    )
    timeout: float = Field(
        120.0, gt=0, le=3600, description="seconds an LLM request may take before a retry"
    )
    max_retries: int = Field(
        4, ge=0, le=20, description="retries per LLM call on transient failures"
    )
    executor: Literal["local", "ray"] = Field(
        "local", description="where calls run: this process, or Ray workers"
    )
    ray_address: str | None = Field(
        None, description="Ray cluster to join (auto or HOST:PORT); unset: start a local one"
    )
    ray_workers: int = Field(2, ge=1, le=1024, description="Ray actors, each with its own model")


def _env_values() -> dict[str, str]:
    prefix = "DOCKET_"
    names = set(Settings.model_fields)
    return {
        key[len(prefix) :].lower(): value
        for key, value in os.environ.items()
        if key.startswith(prefix) and key[len(prefix) :].lower() in names
    }


def docket_table(path: Path) -> dict[str, Any]:
    """The ``[docket]`` table of a TOML file; {} when the file does not exist.

    Raises:
        ConfigError: the file is not valid TOML (names the file and the problem).
    """
    if not path.exists():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {exc}", hint="fix the TOML syntax") from exc
    return dict(data.get("docket", {}))


def _file_values(path: Path) -> dict[str, Any]:
    values = docket_table(path)
    values.pop("prices", None)  # [docket.prices] is read by docket.jobs.bill.prices
    return values


def load_settings(config_path: Path | None = None, **overrides: Any) -> Settings:
    """Merge file, environment and explicit overrides (None means 'not given')."""
    values = _file_values(config_path or Path(CONFIG_FILE))
    values.update(_env_values())
    values.update({k: v for k, v in overrides.items() if v is not None})
    try:
        return Settings(**values)
    except ValidationError as exc:
        field, message, _ = first_problem(exc)
        raise ConfigError(f"setting '{field}': {message}", hint="see docket --help") from exc
