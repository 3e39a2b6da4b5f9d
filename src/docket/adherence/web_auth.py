"""Who may use the verification API and page: bearer tokens and browser sessions.

Tokens come from two places: the ones given when the server starts (``--token``, kept in
memory) and the ones created with ``docket verify token add`` (only their SHA-256 is
stored). All comparisons use :func:`hmac.compare_digest`. The annotator page logs in
with a token and then uses a session cookie (HttpOnly, SameSite=Strict) plus a CSRF token
that every POST must send in the ``X-CSRF-Token`` header.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, select

from docket.adherence.models import AnnotatorSession, ApiToken
from docket.errors import InputError
from docket.store.base import Store, utcnow

SESSION_COOKIE = "docket_verify_session"
SESSION_LIFETIME = timedelta(hours=12)


def sha256(secret: str) -> str:
    """Hex SHA-256 of a token or session id."""
    return hashlib.sha256(secret.encode()).hexdigest()


def add_token(store: Store, name: str) -> str:
    """Create an API token for ``name``; the plain token is returned once and never stored."""
    if not name.strip():
        raise InputError("a token needs a name (who uses it)", field="name")
    token = "dkv_" + secrets.token_urlsafe(32)
    with store.session() as session:
        session.add(ApiToken(name=name.strip(), token_sha256=sha256(token)))
    return token


def revoke_tokens(store: Store, name: str) -> int:
    """Revoke every token of ``name``; returns how many were revoked."""
    with store.session() as session:
        rows = session.scalars(
            select(ApiToken).where(ApiToken.name == name, ApiToken.revoked.is_(False))
        )
        count = 0
        for row in rows:
            row.revoked, count = True, count + 1
    return count


@dataclass(frozen=True)
class Caller:
    """The authenticated user of one request."""

    name: str
    csrf: str | None = None  # set for cookie sessions


def _aware(moment: datetime) -> datetime:
    # SQLite returns naive datetimes; docket stores UTC everywhere.
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


class Authenticator:
    """Checks bearer tokens and session cookies against start-up tokens and the store.

    Args:
        store: the store with ``adherence_tokens`` and sessions (None: start-up tokens only,
            and no browser sessions).
        tokens: start-up tokens mapped to the name of their user.
    """

    def __init__(self, store: Store | None, tokens: dict[str, str] | None = None) -> None:
        self.store = store
        self._tokens = [(sha256(token), name) for token, name in (tokens or {}).items()]

    def token_owner(self, token: str) -> str | None:
        """The user a token belongs to, or None."""
        if not token:
            return None
        digest = sha256(token)
        owner = None
        for stored, name in self._tokens:
            if hmac.compare_digest(stored, digest):
                owner = name
        if owner is None and self.store is not None:
            with self.store.session() as session:
                row = session.scalars(
                    select(ApiToken).where(ApiToken.token_sha256 == digest)
                ).first()
                if (
                    row is not None
                    and not row.revoked
                    and hmac.compare_digest(row.token_sha256, digest)
                ):
                    owner = row.name
        return owner

    def start_session(self, name: str) -> tuple[str, str]:
        """Open a browser session for ``name``; return (cookie value, CSRF token)."""
        if self.store is None:
            raise InputError("the annotator page needs a store", hint="start the server with --db")
        cookie, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        now = utcnow()
        with self.store.session() as session:
            session.add(
                AnnotatorSession(
                    id_sha256=sha256(cookie),
                    annotator=name,
                    csrf_token=csrf,
                    created_at=now,
                    expires_at=now + SESSION_LIFETIME,
                )
            )
        return cookie, csrf

    def session_caller(self, cookie: str | None) -> Caller | None:
        """The caller behind a session cookie, or None when unknown or expired."""
        if not cookie or self.store is None:
            return None
        with self.store.session() as session:
            row = session.get(AnnotatorSession, sha256(cookie))
            if row is None or _aware(row.expires_at) <= utcnow():
                return None
            return Caller(row.annotator, row.csrf_token)

    def end_session(self, cookie: str | None) -> None:
        """Log out: forget the session behind a cookie value."""
        if cookie and self.store is not None:
            with self.store.session() as session:
                session.execute(
                    delete(AnnotatorSession).where(AnnotatorSession.id_sha256 == sha256(cookie))
                )


def csrf_ok(caller: Caller, submitted: str | None) -> bool:
    """True when ``submitted`` is the session's CSRF token."""
    if caller.csrf is None or not submitted:
        return False
    return hmac.compare_digest(submitted.encode(), caller.csrf.encode())
