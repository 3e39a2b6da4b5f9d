"""Refused review actions, each with the HTTP status the web app answers with.

All derive from :class:`docket.errors.ReviewError` (a ``UserError``), so the CLI prints
them as one line and the web app as a clear message with the status below.
"""

from __future__ import annotations

from docket.errors import ReviewError


class UnknownTaskError(ReviewError):
    """No task with that id (HTTP 404)."""

    status_code = 404


class ForeignTaskError(ReviewError):
    """The task is assigned to other reviewers, or the action needs an admin (HTTP 403)."""

    status_code = 403


class TaskClosedError(ReviewError):
    """The task is closed, or already has all its required reviews (HTTP 409)."""

    status_code = 409


class UnknownReviewerError(ReviewError):
    """No active reviewer with that name or token (HTTP 401 on the web)."""

    status_code = 401
