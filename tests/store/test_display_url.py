"""A store URL is printed with every password masked, in every form (issue 19)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from docket.cli.main import app
from docket.store.base import display_url


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql+psycopg://ann:s3cret@db:5432/docket", "postgresql+psycopg://ann:***@db:5432/docket"),
        ("postgresql+psycopg://ann@db/docket?password=s3cret", "postgresql+psycopg://ann@db/docket?password=***"),
        ("postgresql+psycopg://db/docket?sslmode=require&PASSWORD=s3cret&x=1", "postgresql+psycopg://db/docket?PASSWORD=***&sslmode=require&x=1"),
        ("postgresql+psycopg://db/docket?pwd=s3cret", "postgresql+psycopg://db/docket?pwd=***"),
        ("host=db dbname=docket password=s3cret user=ann", "host=db dbname=docket password=*** user=ann"),
        ("host=db password = 's3 cret' user=ann", "host=db password = *** user=ann"),
        ("docket.db", "docket.db"),
        ("sqlite:///tmp/d.db", "sqlite:///tmp/d.db"),
    ],
)  # fmt: skip
def test_every_form_of_password_is_masked(url: str, shown: str) -> None:
    assert display_url(url) == shown
    assert "s3" not in display_url(url).replace("sqlite", "")


def test_an_unparsable_url_keeps_no_password() -> None:
    assert "s3cret" not in display_url("postgresql+psycopg://ann:s3cret@db:port/x")


def test_the_cli_error_for_a_bad_store_masks_the_password() -> None:
    url = "postgresql+psycopg://ann@127.0.0.1:9/docket?password=s3cret&connect_timeout=1"
    result = CliRunner().invoke(app, ["export", "--db", url, "--job", "j", "-o", "/dev/null"])
    assert result.exit_code != 0
    text = result.output + str(result.exception)
    assert "s3cret" not in text and "password=***" in text
