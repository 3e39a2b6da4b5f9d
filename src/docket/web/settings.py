"""The numbers of the web kit's security policy, one frozen value per app.

Every field is a ``docket review serve`` / ``docket verify serve`` flag (see
docs/web.md). Defaults suit one server on a trusted network behind HTTPS.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from docket.errors import ConfigError


@dataclass(frozen=True)
class WebSettings:
    """Limits, lifetimes and cookie policy of one web app.

    Attributes:
        session_hours: how long a browser session lasts after login.
        max_body_bytes: largest request body read (413 beyond, before parsing or auth).
        max_json_depth: deepest nesting of arrays/objects in a JSON body (400 beyond).
        login_attempts_per_client: logins one client address may try per window.
        login_attempts_per_prefix: logins with tokens sharing their first
            characters may be tried per window (slows a spread-out guesser).
        login_window_s: the window of both login rate limits, in seconds.
        lockout_failures: consecutive failed logins (per client or prefix) that lock out.
        lockout_s: how long a lockout lasts, in seconds.
        secure_cookies: mark cookies Secure even when the request came over plain HTTP
            (needed behind a TLS-terminating proxy); HTTPS requests always get Secure.
        allowed_hosts: Host header values accepted (DNS rebinding guard); None: any.
    """

    session_hours: float = 12.0
    max_body_bytes: int = 1_048_576
    max_json_depth: int = 32
    login_attempts_per_client: int = 20
    login_attempts_per_prefix: int = 10
    login_window_s: float = 60.0
    lockout_failures: int = 5
    lockout_s: float = 300.0
    secure_cookies: bool = False
    allowed_hosts: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        for name in (
            "session_hours",
            "max_body_bytes",
            "max_json_depth",
            "login_attempts_per_client",
            "login_attempts_per_prefix",
            "login_window_s",
            "lockout_failures",
            "lockout_s",
        ):
            if getattr(self, name) <= 0:
                raise ConfigError(f"the web setting '{name}' must be positive")

    def with_(self, **changes: Any) -> WebSettings:
        """A copy with some fields changed (None values are ignored)."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")


def allowed_hosts_for(host: str, extra: list[str] | None) -> tuple[str, ...] | None:
    """The Host values a server bound to ``host`` accepts (None: all interfaces, any)."""
    if host in ("0.0.0.0", "::"):
        return None
    return (*LOCAL_HOSTS, host, *(extra or []))
