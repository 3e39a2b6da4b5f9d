"""Every exit code of docket's commands, decided here and nowhere else.

:func:`exit_code` maps an error that reaches ``main`` to its code; a judging command ends
with :func:`docket.cli.common.finish_run`, which applies the codes below in one order.
"""

from __future__ import annotations

from docket.errors import DocketError, PilotRejectedError, UserError

OK = 0
USAGE = 2
"""Bad input, bad options, a model the user must fix (one line, no traceback)."""
FAILED = 3
"""Pairs failed: a server refused them (``--allow-failed`` makes it 0)."""
PILOT_REJECTED = 4
"""The pilot missed ``--min-kappa`` or ``--max-escalation``; the main run did not start."""
CAPPED = 5
"""A spend cap stopped the run; a rerun with a higher cap resumes."""
INCOMPLETE = 75
"""Pairs were left to other live workers (EX_TEMPFAIL)."""
INTERRUPTED = 130
"""Ctrl-C (SIGINT), as shells report it."""
TERMINATED = 143
"""SIGTERM (what schedulers and ``kill`` send), as shells report it."""


def exit_code(error: DocketError) -> int | None:
    """The code of an error that ends a command (None: not a user-facing error)."""
    if isinstance(error, PilotRejectedError):
        return PILOT_REJECTED
    if isinstance(error, UserError):
        return USAGE
    return None
