"""The web settings as ``serve`` flags of both apps."""

from __future__ import annotations

from typer.testing import CliRunner

from docket.cli.main import app
from docket.cli.web_flags import web_settings
from docket.web import WebSettings

FLAGS = (
    "--session-hours",
    "--max-body-bytes",
    "--max-json-depth",
    "--login-per-client",
    "--login-per-prefix",
    "--login-window",
    "--lockout-failures",
    "--lockout-seconds",
    "--secure-cookies",
    "--allowed-host",
)


def test_both_serve_commands_take_every_web_flag() -> None:
    runner = CliRunner()
    for group in ("review", "verify"):
        result = runner.invoke(app, [group, "serve", "--help"], env={"COLUMNS": "200"})
        assert result.exit_code == 0, result.output
        for flag in FLAGS:
            assert flag in result.output, (group, flag)


def test_flags_map_onto_settings_and_unset_ones_keep_the_app_default() -> None:
    base = WebSettings(max_body_bytes=123_456)
    settings = web_settings(
        base,
        "127.0.0.1",
        ["review.example"],
        session_hours=2,
        max_json_depth=5,
        login_per_client=3,
        login_per_prefix=4,
        login_window=9,
        lockout_failures=6,
        lockout_seconds=7,
        secure_cookies=True,
    )
    assert (settings.max_body_bytes, settings.session_hours, settings.max_json_depth) == (
        123_456,
        2,
        5,
    )
    assert (settings.login_attempts_per_client, settings.login_attempts_per_prefix) == (3, 4)
    assert (settings.login_window_s, settings.lockout_failures, settings.lockout_s) == (9, 6, 7)
    assert settings.secure_cookies and "review.example" in settings.allowed_hosts
    assert web_settings(base, "0.0.0.0", None).allowed_hosts is None
