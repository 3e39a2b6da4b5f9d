"""The web kit's settings as ``serve`` flags, shared by ``docket review`` and ``docket verify``.

Each flag is one field of :class:`docket.web.WebSettings`; an unset flag keeps the app's
default.
"""

from __future__ import annotations

from typing import Annotated

import typer

from docket.web import WebSettings, allowed_hosts_for

SessionHours = Annotated[
    float | None, typer.Option("--session-hours", help="browser session lifetime (hours)")
]
MaxBody = Annotated[
    int | None, typer.Option("--max-body-bytes", help="largest request body; 413 beyond")
]
MaxDepth = Annotated[
    int | None, typer.Option("--max-json-depth", help="deepest JSON nesting; 400 beyond")
]
PerClient = Annotated[
    int | None, typer.Option("--login-per-client", help="login attempts per client per window")
]
PerPrefix = Annotated[
    int | None,
    typer.Option("--login-per-prefix", help="login attempts per token prefix per window"),
]
Window = Annotated[
    float | None, typer.Option("--login-window", help="login rate-limit window (seconds)")
]
LockoutFailures = Annotated[
    int | None, typer.Option("--lockout-failures", help="failed logins in a row that lock out")
]
LockoutSeconds = Annotated[
    float | None, typer.Option("--lockout-seconds", help="how long a lockout lasts")
]
SecureCookies = Annotated[
    bool, typer.Option("--secure-cookies", help="Secure cookies even over plain HTTP (proxy)")
]
AllowedHost = Annotated[
    list[str] | None, typer.Option(help="extra Host header values to accept (repeatable)")
]


def web_settings(
    base: WebSettings,
    host: str,
    allowed_host: list[str] | None,
    *,
    session_hours: float | None = None,
    max_body_bytes: int | None = None,
    max_json_depth: int | None = None,
    login_per_client: int | None = None,
    login_per_prefix: int | None = None,
    login_window: float | None = None,
    lockout_failures: int | None = None,
    lockout_seconds: float | None = None,
    secure_cookies: bool = False,
) -> WebSettings:
    """The app's default settings with the given flags applied."""
    return base.with_(
        session_hours=session_hours,
        max_body_bytes=max_body_bytes,
        max_json_depth=max_json_depth,
        login_attempts_per_client=login_per_client,
        login_attempts_per_prefix=login_per_prefix,
        login_window_s=login_window,
        lockout_failures=lockout_failures,
        lockout_s=lockout_seconds,
        secure_cookies=secure_cookies or None,
        allowed_hosts=allowed_hosts_for(host, allowed_host),
    )
