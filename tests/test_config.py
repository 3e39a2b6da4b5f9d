"""Settings: flag > environment > docket.toml > default, with one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from docket.config import load_settings
from docket.errors import ConfigError


def test_precedence_flag_env_file_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "docket.toml"
    config.write_text('[docket]\nmodel = "openai:gpt-4o-mini"\nconcurrency = 3\ndb = "file.db"\n')
    monkeypatch.setenv("DOCKET_CONCURRENCY", "7")
    settings = load_settings(config, db="flag.db")
    assert settings.model == "openai:gpt-4o-mini"  # from the file
    assert settings.concurrency == 7  # environment beats the file
    assert settings.db == "flag.db"  # the flag beats everything
    assert settings.max_retries == 4  # default


def test_bad_value_names_the_setting(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="setting 'concurrency'"):
        load_settings(tmp_path / "none.toml", concurrency=0)


def test_unknown_key_in_file_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "docket.toml"
    config.write_text("[docket]\nmodle = 'local'\n")
    with pytest.raises(ConfigError, match="modle"):
        load_settings(config)


def test_broken_toml_names_the_file(tmp_path: Path) -> None:
    config = tmp_path / "docket.toml"
    config.write_text("[docket\n")
    with pytest.raises(ConfigError, match="docket.toml"):
        load_settings(config)
