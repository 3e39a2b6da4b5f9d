"""Who may use the verification API and page: start-up tokens and stored tokens.

Tokens come from two places: the ones given when the server starts (a ``--token-file``
or the ``DOCKET_VERIFY_TOKEN`` environment variable, never a flag, which every user of the
machine could read in the process list; kept in memory as hashes) and the ones made with
``docket verify token add`` (only their SHA-256 is stored, in ``adherence_tokens``). Names given with ``--admin`` are admins:
they may answer flags on anyone's results. Revoking a token ends its browser sessions.
"""

from __future__ import annotations

import hmac
import os
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from docket.adherence.models import ApiToken
from docket.errors import ConfigError, InputError
from docket.store.base import Store
from docket.web import sessions
from docket.web.tokens import Principal, check_user_name, new_token, sha256

APP = "verify"
TOKEN_PREFIX = "dkv_"
TOKEN_ENV = "DOCKET_VERIFY_TOKEN"
"""The environment variable holding start-up tokens (``NAME=TOKEN``, several separated
by blanks or commas)."""
MIN_TOKEN_CHARS = 16


def startup_tokens(path: str | Path | None = None, env: str | None = None) -> dict[str, str]:
    """Start-up tokens mapped to their user's name, from a file and the environment.

    Args:
        path: a file with one ``NAME=TOKEN`` (or a bare ``TOKEN``, user ``default``) per
            line; blank lines and lines starting with ``#`` are skipped.
        env: the value of :data:`TOKEN_ENV` (default: read from the environment).

    Raises:
        ConfigError: a token shorter than 16 characters (names the file and line).
        InputError: the file is missing or not UTF-8 text.
    """
    tokens: dict[str, str] = {}
    value = os.environ.get(TOKEN_ENV, "") if env is None else env
    for entry in value.replace(",", " ").split():
        _add_token(tokens, entry, TOKEN_ENV)
    if path is not None:
        from docket.reading import numbered_lines

        for number, line in numbered_lines(path):
            if not line.strip().startswith("#"):
                _add_token(tokens, line.strip(), f"{path}, line {number}")
    return tokens


def _add_token(tokens: dict[str, str], entry: str, where: str) -> None:
    name, sep, secret = entry.partition("=")
    name, secret = (name.strip(), secret.strip()) if sep else ("default", entry)
    if len(secret) < MIN_TOKEN_CHARS:
        raise ConfigError(
            f"{where}: a token must be at least {MIN_TOKEN_CHARS} characters",
            hint="write NAME=TOKEN or TOKEN; `docket verify token add NAME` makes one",
        )
    tokens[secret] = name or "default"


class VerifyTokens:
    """The kit's token backend for the verify app.

    Args:
        tokens: start-up tokens mapped to the name of their user.
        admins: names with the admin role.
    """

    def __init__(self, tokens: dict[str, str] | None = None, admins: set[str] | None = None):
        self._startup = [(sha256(token), name) for token, name in (tokens or {}).items()]
        self.admins = frozenset(admins or ())

    def owner(self, session: Session | None, token_sha256: str) -> Principal | None:
        """The user of a valid start-up or stored (unrevoked) token, or None."""
        name = None
        for stored, who in self._startup:
            if hmac.compare_digest(stored, token_sha256):
                name = who
        if name is None and session is not None:
            query = select(ApiToken).where(
                ApiToken.token_sha256 == token_sha256, ApiToken.revoked.is_(False)
            )
            row = session.scalars(query).first()
            name = row.name if row is not None else None
        return None if name is None else Principal(name, name in self.admins)


def add_token(store: Store, name: str) -> str:
    """Create an API token for ``name``; the plain token is returned once and never stored.

    Raises:
        InputError: the name is empty or not 1-120 letters, digits or ``_.@-``.
    """
    if not name.strip():
        raise InputError("a token needs a name (who uses it)", field="name")
    check_user_name(name.strip())
    token = new_token(TOKEN_PREFIX)
    with store.session() as session:
        session.add(ApiToken(name=name.strip(), token_sha256=sha256(token)))
    return token


def revoke_tokens(store: Store, name: str) -> int:
    """Revoke every token of ``name`` and end their sessions; return how many were revoked."""
    with store.session() as session:
        query = select(ApiToken).where(ApiToken.name == name, ApiToken.revoked.is_(False))
        rows = list(session.scalars(query))
        for row in rows:
            row.revoked = True
            sessions.end_token_sessions(session, row.token_sha256)
    return len(rows)
