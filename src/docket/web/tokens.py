"""Login tokens: random secrets shown once, stored and compared only as SHA-256.

A slow password hash is not needed: 256-bit random tokens cannot be guessed, unlike
passwords. Each app says who owns a token through a :class:`TokenBackend`.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from typing import Protocol

from sqlalchemy.orm import Session

from docket.errors import InputError

USER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,119}$")
"""A reviewer's or API user's name: 1-120 letters, digits, ``_ . @ -``."""


def check_user_name(name: str) -> str:
    """Return ``name`` if it matches :data:`USER_NAME`.

    Raises:
        InputError: it does not (the name is shown in the hint).
    """
    if not USER_NAME.match(name):
        raise InputError(
            "use 1-120 letters, digits, '_', '.', '@' or '-'", field="name", hint=repr(name)
        )
    return name


def sha256(secret: str) -> str:
    """Hex SHA-256 of a token, session id or nonce."""
    return hashlib.sha256(secret.encode()).hexdigest()


def new_token(prefix: str) -> str:
    """A fresh login token such as ``dkr_…`` (shown once, stored only as a hash)."""
    return prefix + secrets.token_urlsafe(32)


def new_secret() -> str:
    """A fresh random session id, CSRF token or nonce."""
    return secrets.token_urlsafe(32)


@dataclass(frozen=True)
class Principal:
    """Who a token belongs to: a name, an optional numeric id, and the admin role."""

    name: str
    is_admin: bool = False
    id: int | None = None


class TokenBackend(Protocol):
    """An app's answer to "whose token has this hash, and is it still valid?"."""

    def owner(self, session: Session | None, token_sha256: str) -> Principal | None:
        """The principal of a valid (not revoked, active) token, or None.

        Args:
            session: an open store session (None when the app runs without a store).
            token_sha256: :func:`sha256` of the token.
        """
        ...
