"""The docket error hierarchy.

Every error docket raises on purpose derives from :class:`DocketError`::

    DocketError
    ├── UserError                 bad input or configuration; the CLI prints one line, exit 2
    │   ├── InputError            a malformed input record (file, line, field)
    │   │   └── RulesFileError    a rules file that cannot be used (also a ConfigError)
    │   ├── ConfigError           an invalid setting or model name
    │   ├── MissingDependencyError an optional extra is not installed (names the install command)
    │   ├── StoreError            the database refused (missing directory, read-only, full
    │   │                         disk, not SQLite, newer schema): the hint names the fix
    │   ├── ReviewError           a refused review action (``docket.review.errors``)
    │   │   ├── UnknownTaskError  no such task (HTTP 404)
    │   │   ├── ForeignTaskError  another reviewer's task, or an admin action (HTTP 403)
    │   │   ├── TaskClosedError   the task is closed or fully reviewed (HTTP 409)
    │   │   └── UnknownReviewerError no active reviewer of that name or token (HTTP 401)
    │   └── ModelUnavailableError retries exhausted or a permanent failure (also a ModelError)
    │       └── UnreadableReplyError every retry got a malformed reply: the call counts as
    │                             unparsed (the pair is escalated), the job goes on
    ├── ModelError                an LLM call failed
    │   ├── TransientModelError   rate limit, 5xx, timeout, connection: retried by ``llm.Model``
    │   │   ├── MalformedReplyError a 200 reply that is no chat completion (HTML page, bad JSON)
    │   │   └── ServerBusyError   HTTP 429/503 or no answer within the client timeout: also
    │   │                         lowers the calls in flight (``llm.limit``)
    │   ├── ModelTimeoutError     a call ran past the caller's per-call deadline (not retried)
    │   ├── RequestRefusedError   the server refused this one request (HTTP 400, 413, 422):
    │   │                         the pair fails, the job goes on
    │   └── ModelUnavailableError (see above: a model error the user must fix, so a UserError)
    ├── CapReachedError           a call would pass a spend cap (--max-cost ...): the run
    │                             stops cleanly, finished pairs saved, exit 5
    ├── PilotRejectedError        the pilot missed --min-kappa or --max-escalation: the main
    │                             run does not start, the pilot's judgments stay, exit 4
    └── ParseError                a model reply could not be parsed (never becomes a label)

Every class is listed under each of its docket bases (``also a ...`` names the other one);
``tests/test_errors_tree.py`` checks this picture against the classes.
User-facing errors carry a ``hint`` telling the user how to fix the problem.
"""

from __future__ import annotations


class DocketError(Exception):
    """Base class for all docket errors."""

    hint: str = ""

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        if hint:
            self.hint = hint

    def one_line(self) -> str:
        """Return the message and the hint as one line for the CLI."""
        return f"{self.message} ({self.hint})" if self.hint else self.message


class UserError(DocketError):
    """The user gave something docket cannot use; fixable without a code change."""


_CONTROL = {code: f"\\x{code:02x}" for code in (*range(0x20), 0x7F) if code != 0x09}
_CONTROL.update({0x0A: "\\n", 0x0D: "\\r"})
SHOWN_CHARS = 300
"""The longest problem or field an InputError shows; a 1 MB value is cut in the middle."""


def shown(text: str, limit: int = SHOWN_CHARS) -> str:
    """``text`` safe for a one-line error: control characters escaped, at most ``limit``
    (300) characters.

    Input errors quote what the file holds (a docid, a score), which may hold line breaks
    or run for a megabyte; the message stays one readable line whatever the input.
    """
    text = str(text).translate(_CONTROL)
    if len(text) <= limit:
        return text
    return f"{text[: limit - 60]} … ({len(text):,} characters) … {text[-30:]}"


class InputError(UserError):
    """A malformed input record, located by file, line and field."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        field: str | None = None,
        hint: str = "",
    ) -> None:
        self.path, self.line, self.field = path, line, field
        where = ":".join(str(p) for p in (path, line) if p is not None)
        prefix = f"{where}: " if where else ""
        field_part = f"field '{shown(field)}': " if field else ""
        super().__init__(f"{prefix}{field_part}{shown(message)}", hint=hint)


CONFIG_CHARS = 1000
"""The longest message a ConfigError shows: it may quote a key or value of a settings file."""


class ConfigError(UserError):
    """An invalid setting, model name or option combination.

    Its message may quote a settings file (a 1 MB key of ``docket.toml``), so it is kept
    to one line of at most :data:`CONFIG_CHARS` characters, as an InputError is.
    """

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(shown(message, CONFIG_CHARS), hint=hint)


class MissingDependencyError(UserError):
    """An optional dependency is missing; the hint names the install command."""

    def __init__(self, package: str, extra: str) -> None:
        super().__init__(
            f"the optional dependency '{package}' is not installed",
            hint=f"install it with: pip install 'docket[{extra}]'",
        )


class ModelError(DocketError):
    """An LLM call failed."""


class TransientModelError(ModelError):
    """A failure worth retrying: rate limit, server error, timeout, lost connection."""


class MalformedReplyError(TransientModelError):
    """A 200 reply that is not a chat completion (invalid JSON, an HTML page, no choices)."""


class ServerBusyError(TransientModelError):
    """The server is overloaded (HTTP 429, 503, a client timeout): retried, and fewer calls go at once."""


class ModelTimeoutError(ModelError):
    """A call exceeded the per-call deadline its caller set (time waiting for a slot excluded)."""


class RequestRefusedError(ModelError):
    """The server refused one request for what it contains (e.g. the context is too long).

    Retrying the same request cannot help, but other requests may succeed: a judging job
    records the pair as failed with this message and goes on.
    """


class ModelUnavailableError(ModelError, UserError):
    """The model could not be reached or kept failing after all retries."""

    attempts: int = 1
    """HTTP requests the call sent before giving up (set by ``llm.Model``)."""


class UnreadableReplyError(ModelUnavailableError):
    """Every attempt of a call got a malformed reply.

    :meth:`docket.llm.Model.generate_parsed` turns it into an unparsed reply, so the item is
    escalated rather than labelled, and a job goes on.
    """


class CapReachedError(DocketError):
    """A call or pair would pass one of the job's spend caps; nothing more is started."""


class PilotRejectedError(DocketError):
    """The pilot missed ``--min-kappa`` or ``--max-escalation``; ``report`` holds it.

    ``report`` is the :class:`~docket.jobs.bill.pilot.PilotReport` that missed the gate
    (typed ``object`` here: the error tree imports nothing of docket).
    """

    def __init__(self, message: str, *, report: object, hint: str = "") -> None:
        super().__init__(message, hint=hint)
        self.report = report


class ParseError(DocketError):
    """A model reply could not be parsed into the expected structure."""

    def __init__(self, message: str, *, raw: str = "") -> None:
        super().__init__(message)
        self.raw = raw


class StoreError(UserError):
    """The database cannot be used as asked; the hint says how to fix it."""


class ReviewError(UserError):
    """A review action was refused (closed or foreign task, unknown reviewer)."""
