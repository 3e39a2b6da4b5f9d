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
from docket.reading import first_problem, one_line

CONFIG_FILE = "docket.toml"
_TOML_HINT = "docket.toml holds a [docket] table of settings, see docket --help"


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
        ConfigError: the file is not UTF-8, not valid TOML, nests too deeply, holds a
            number Python refuses (over 4300 digits), or its ``docket`` is no table; the
            message names the file and the problem.
    """
    if not path.exists():
        return {}
    if path.is_dir():
        raise ConfigError(f"{path}: is a folder, not a settings file", hint=_TOML_HINT)
    try:
        data = tomllib.loads(path.read_bytes().decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path}: not UTF-8 text (bad byte at offset {exc.start})", hint="save it as UTF-8"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {one_line(str(exc))}", hint="fix the TOML syntax") from None
    except RecursionError:
        raise ConfigError(f"{path}: values nested too deeply", hint=_TOML_HINT) from None
    except ValueError as exc:  # an integer of more than 4300 digits
        raise ConfigError(f"{path}: {one_line(str(exc))}", hint=_TOML_HINT) from None
    table = data.get("docket", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: 'docket' must be a table ([docket])", hint=_TOML_HINT)
    return dict(table)


def _file_values(path: Path) -> dict[str, Any]:
    values = docket_table(path)
    values.pop("prices", None)  # [docket.prices] is read by docket.jobs.bill.prices
    return values


def load_settings(config_path: Path | None = None, **overrides: Any) -> Settings:
    """Merge file, environment and explicit overrides (None means 'not given').

    Raises:
        ConfigError: a bad file (see :func:`docket_table`) or a bad value; a bad value
            read from the file names the file.
    """
    path = config_path or Path(CONFIG_FILE)
    values = _file_values(path)
    from_file = set(values)
    given = {**_env_values(), **{k: v for k, v in overrides.items() if v is not None}}
    values.update(given)
    try:
        return Settings(**values)
    except ValidationError as exc:
        field, message, _ = first_problem(exc)
        key = (field or "").split(".")[0]
        where = f"{path}: " if key in from_file and key not in given else ""
        raise ConfigError(
            f"{where}setting '{field}': {message}", hint="see docket --help"
        ) from None
