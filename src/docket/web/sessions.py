"""Browser sessions of both apps: start, look up, end, purge; revocation ends them.

The cookie holds a random session id; the table keeps its SHA-256, the app, the
subject and the SHA-256 of the login token that opened it. Every lookup asks the
app's :class:`~docket.web.tokens.TokenBackend` whether that token is still valid, so
revoking a token (or replacing a reviewer's) ends its live sessions at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete
from sqlalchemy.orm import Session

from docket.store.base import utcnow
from docket.store.web_tables import WebSessionRow
from docket.web.tokens import Principal, TokenBackend, new_secret, sha256


@dataclass(frozen=True)
class LiveSession:
    """A valid session: who it belongs to and its CSRF token."""

    principal: Principal
    csrf: str


def _aware(moment: datetime) -> datetime:
    # SQLite returns naive datetimes; docket stores UTC everywhere.
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def start_session(
    session: Session, app: str, principal: Principal, token_sha256: str, hours: float
) -> tuple[str, str]:
    """Open a session (purging expired ones first); return (cookie value, CSRF token)."""
    purge_expired(session)
    cookie, csrf = new_secret(), new_secret()
    now = utcnow()
    session.add(
        WebSessionRow(
            id_sha256=sha256(cookie),
            app=app,
            subject=principal.name,
            token_sha256=token_sha256,
            csrf_token=csrf,
            created_at=now,
            expires_at=now + timedelta(hours=hours),
        )
    )
    session.flush()
    return cookie, csrf


def find_session(
    session: Session, app: str, cookie: str, backend: TokenBackend
) -> LiveSession | None:
    """The live session behind a cookie value, or None (unknown, expired, revoked)."""
    row = session.get(WebSessionRow, sha256(cookie))
    if row is None or row.app != app or _aware(row.expires_at) <= utcnow():
        return None
    principal = backend.owner(session, row.token_sha256)
    if principal is None or principal.name != row.subject:
        return None
    return LiveSession(principal, row.csrf_token)


def end_session(session: Session, cookie: str) -> None:
    """Log out: forget the session behind a cookie value."""
    session.execute(delete(WebSessionRow).where(WebSessionRow.id_sha256 == sha256(cookie)))


def end_sessions(session: Session, app: str, *, subject: str | None = None) -> int:
    """Forget every session of an app (or of one subject); return how many."""
    query = delete(WebSessionRow).where(WebSessionRow.app == app)
    if subject is not None:
        query = query.where(WebSessionRow.subject == subject)
    return session.execute(query).rowcount or 0


def end_token_sessions(session: Session, token_sha256: str) -> int:
    """Forget the sessions opened with one token; return how many."""
    query = delete(WebSessionRow).where(WebSessionRow.token_sha256 == token_sha256)
    return session.execute(query).rowcount or 0


def purge_expired(session: Session) -> int:
    """Delete expired sessions of every app; return how many."""
    query = delete(WebSessionRow).where(WebSessionRow.expires_at <= utcnow())
    return session.execute(query).rowcount or 0
