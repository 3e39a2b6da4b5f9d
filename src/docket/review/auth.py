"""Reviewers, login tokens and browser sessions.

Tokens and session ids are random 256-bit secrets; only their SHA-256 is stored, so a
copy of the database does not let anyone log in. (A slow password hash is not needed:
the secrets are not guessable, unlike passwords.)
"""

from __future__ import annotations

import hashlib
import re
import secrets
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from docket.errors import InputError, ReviewError
from docket.review.models import Reviewer, WebSession
from docket.review.queue import resolve_reviewer
from docket.store.base import utcnow

TOKEN_PREFIX = "dkr_"
SESSION_LIFETIME = timedelta(hours=12)
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,119}$")


def hash_secret(secret: str) -> str:
    """Hex SHA-256 of a token or session id."""
    return hashlib.sha256(secret.encode()).hexdigest()


def new_token() -> str:
    """A fresh login token (shown once, stored only as a hash)."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def add_reviewer(
    session: Session, name: str, *, admin: bool = False, blind: bool = False
) -> tuple[Reviewer, str]:
    """Create a reviewer and return it with its login token (shown only now).

    Raises:
        InputError: the name is not 1-120 letters, digits or ``_.@-``.
        ReviewError: a reviewer with that name exists.
    """
    if not NAME.match(name):
        raise InputError(
            "use 1-120 letters, digits, '_', '.', '@' or '-'", field="name", hint=repr(name)
        )
    if session.scalars(select(Reviewer).where(Reviewer.name == name)).first() is not None:
        raise ReviewError(
            f"reviewer '{name}' already exists",
            hint=f"for a new token run: docket review reset-token {name}",
        )
    token = new_token()
    reviewer = Reviewer(name=name, token_hash=hash_secret(token), is_admin=admin, blind=blind)
    session.add(reviewer)
    session.flush()
    return reviewer, token


def reset_token(session: Session, name: str) -> str:
    """Give a reviewer a new token; the old one and all their sessions stop working."""
    reviewer = resolve_reviewer(session, name)
    token = new_token()
    reviewer.token_hash = hash_secret(token)
    session.execute(delete(WebSession).where(WebSession.reviewer_id == reviewer.id))
    session.flush()
    return token


def update_reviewer(
    session: Session,
    name: str,
    *,
    admin: bool | None = None,
    blind: bool | None = None,
    active: bool | None = None,
) -> Reviewer:
    """Change a reviewer's role, blind mode or activity (None leaves a setting as is)."""
    reviewer = session.scalars(select(Reviewer).where(Reviewer.name == name)).first()
    if reviewer is None:
        raise ReviewError(f"no reviewer named '{name}'", hint="see: docket review reviewers")
    for field, value in (("is_admin", admin), ("blind", blind), ("active", active)):
        if value is not None:
            setattr(reviewer, field, value)
    if active is False:
        session.execute(delete(WebSession).where(WebSession.reviewer_id == reviewer.id))
    session.flush()
    return reviewer


def reviewer_for_token(session: Session, token: str) -> Reviewer | None:
    """The active reviewer owning a login token, or None."""
    if not token.startswith(TOKEN_PREFIX):
        return None
    query = select(Reviewer).where(Reviewer.token_hash == hash_secret(token))
    reviewer = session.scalars(query).first()
    return reviewer if reviewer is not None and reviewer.active else None


def start_session(session: Session, reviewer: Reviewer) -> tuple[str, str]:
    """Open a browser session; return (cookie value, CSRF token)."""
    cookie, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
    now = utcnow()
    session.add(
        WebSession(
            id_hash=hash_secret(cookie),
            reviewer_id=reviewer.id,
            csrf_token=csrf,
            created_at=now,
            expires_at=now + SESSION_LIFETIME,
        )
    )
    session.flush()
    return cookie, csrf


def _aware(moment: datetime) -> datetime:
    # SQLite returns naive datetimes; docket stores UTC everywhere.
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def session_for_cookie(session: Session, cookie: str) -> tuple[Reviewer, WebSession] | None:
    """The reviewer and session behind a cookie value, or None if unknown or expired."""
    web = session.get(WebSession, hash_secret(cookie))
    if web is None or _aware(web.expires_at) <= utcnow():
        return None
    reviewer = session.get(Reviewer, web.reviewer_id)
    if reviewer is None or not reviewer.active:
        return None
    return reviewer, web


def end_session(session: Session, cookie: str) -> None:
    """Log out: forget the session behind a cookie value."""
    session.execute(delete(WebSession).where(WebSession.id_hash == hash_secret(cookie)))
