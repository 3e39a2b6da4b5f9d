"""``verify serve`` takes start-up tokens from a file or the environment, never a flag.

A ``--token`` value is visible to every user of the machine in the process list.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from docket.adherence.web.api import create_app
from docket.adherence.web.tokens import TOKEN_ENV, startup_tokens
from docket.cli.main import app
from docket.errors import ConfigError, InputError
from tests.web.test_odd_values import _verifier

ANN = "ann-token-0123456789abcdef"
BOB = "bob-token-0123456789abcdef"


def test_tokens_come_from_a_file_and_the_environment(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "tokens.txt"
    path.write_text(f"# who may use the API\nann={ANN}\n\n{BOB}\n")
    monkeypatch.setenv(TOKEN_ENV, "carl=carl-token-0123456789, dee=dee-token-0123456789ab")
    tokens = startup_tokens(path)
    assert tokens == {
        ANN: "ann",
        BOB: "default",
        "carl-token-0123456789": "carl",
        "dee-token-0123456789ab": "dee",
    }
    monkeypatch.delenv(TOKEN_ENV)
    assert startup_tokens() == {}


def test_a_short_token_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "tokens.txt"
    path.write_text(f"ann={ANN}\nbob=short\n")
    with pytest.raises(ConfigError, match=r"tokens.txt, line 2: a token must be at least 16"):
        startup_tokens(path)
    with pytest.raises(ConfigError, match=f"{TOKEN_ENV}: a token must be"):
        startup_tokens(env="short")
    with pytest.raises(InputError, match="file not found"):
        startup_tokens(tmp_path / "none.txt")


def test_a_token_from_the_file_opens_the_api(tmp_path: Path) -> None:
    path = tmp_path / "tokens.txt"
    path.write_text(f"ann={ANN}\n")
    with TestClient(create_app(_verifier(), tokens=startup_tokens(path))) as client:
        assert client.get("/v1/rules", headers={"Authorization": f"Bearer {ANN}"}).is_success
        assert (
            client.get("/v1/rules", headers={"Authorization": f"Bearer {BOB}"}).status_code == 401
        )


def test_serve_has_no_token_flag() -> None:
    runner = CliRunner()
    shown = runner.invoke(app, ["verify", "serve", "--help"], env={"COLUMNS": "200"})
    assert "--token-file" in shown.output and TOKEN_ENV in shown.output
    assert "--token " not in shown.output
    refused = runner.invoke(app, ["verify", "serve", "-r", "x.yaml", "--token", f"ann={ANN}"])
    assert refused.exit_code == 2 and "No such option" in refused.output
