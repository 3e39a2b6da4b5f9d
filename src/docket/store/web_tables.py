"""Tables of the web kit (:mod:`docket.web`): browser sessions of both web apps.

A session remembers the SHA-256 of the login token that opened it, so revoking or
replacing that token ends the session at its next request (see ``docket.web.sessions``).
Only hashes of secrets are stored: a copy of the database lets nobody log in.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, String
from sqlalchemy.orm import Mapped, mapped_column

from docket.store.schema import Base, utcnow


class WebSessionRow(Base):
    """One browser login to one app (``review`` or ``verify``)."""

    __tablename__ = "web_sessions"
    id_sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    app: Mapped[str] = mapped_column(String(20), index=True)
    subject: Mapped[str] = mapped_column(String(200))
    token_sha256: Mapped[str] = mapped_column(String(64), index=True)
    csrf_token: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
