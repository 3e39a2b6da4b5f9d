"""Reviewers and their login tokens; sessions, CSRF and limits are the web kit's.

A reviewer has one token at a time (``review_reviewers.token_hash``, SHA-256 only).
:class:`ReviewerTokens` tells the kit who owns a token: replacing a reviewer's token or
disabling the reviewer ends their browser sessions at the next request.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from docket.errors import ReviewError
from docket.review.models import Reviewer
from docket.review.queue import resolve_reviewer
from docket.web import sessions
from docket.web.tokens import USER_NAME, Principal, check_user_name, new_token, sha256

APP = "review"
TOKEN_PREFIX = "dkr_"
NAME = USER_NAME


class ReviewerTokens:
    """The kit's token backend for the review app: active reviewers by token hash."""

    def owner(self, session: Session | None, token_sha256: str) -> Principal | None:
        """The active reviewer owning a token hash, or None."""
        if session is None:
            return None
        query = select(Reviewer).where(Reviewer.token_hash == token_sha256)
        reviewer = session.scalars(query).first()
        if reviewer is None or not reviewer.active:
            return None
        return Principal(reviewer.name, reviewer.is_admin, reviewer.id)


def add_reviewer(
    session: Session, name: str, *, admin: bool = False, blind: bool = False
) -> tuple[Reviewer, str]:
    """Create a reviewer and return it with its login token (shown only now).

    Raises:
        InputError: the name is not 1-120 letters, digits or ``_.@-``.
        ReviewError: a reviewer with that name exists.
    """
    check_user_name(name)
    if session.scalars(select(Reviewer).where(Reviewer.name == name)).first() is not None:
        raise ReviewError(
            f"reviewer '{name}' already exists",
            hint=f"for a new token run: docket review reset-token {name}",
        )
    token = new_token(TOKEN_PREFIX)
    reviewer = Reviewer(name=name, token_hash=sha256(token), is_admin=admin, blind=blind)
    session.add(reviewer)
    session.flush()
    return reviewer, token


def reset_token(session: Session, name: str) -> str:
    """Give a reviewer a new token; the old one and all their sessions stop working."""
    reviewer = resolve_reviewer(session, name)
    token = new_token(TOKEN_PREFIX)
    reviewer.token_hash = sha256(token)
    sessions.end_sessions(session, APP, subject=reviewer.name)
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
        sessions.end_sessions(session, APP, subject=reviewer.name)
    session.flush()
    return reviewer
