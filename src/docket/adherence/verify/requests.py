"""The request bodies of the verification API and the annotator page, with their limits.

A body is parsed only after the caller's credentials are checked (``docket.web``); these
models bound what one request may hold, so a stranger's or a script's body cannot make
one request cost more than a dialogue's worth of work.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from docket.adherence.record import Record, Turn
from docket.adherence.verify.verifier import Submission
from docket.errors import InputError
from docket.reading import Text

MAX_TURNS = 2_000
"""Most turns one request may hold (a dialogue to annotate, not a corpus)."""

TURN_COST = 48
"""Characters one turn costs in the size limit besides its text: its structure (the JSON
keys, and the tags it becomes in every prompt). Without it, 100,000 empty turns would
count as 0 characters."""


class VerifyRequest(BaseModel):
    """A submission: the record so far, and the new turn (appended) or its index.

    With neither ``turn`` nor ``turn_index`` the whole record is checked (every turn).
    Fields such as ``scenario`` travel in ``record.fields``; a field-scoped rule whose
    field is not sent is ``not_yet`` in live checking (see :class:`Verifier`).
    """

    record: Record
    turn: Turn | None = Field(default=None, description="the new turn, appended to the record")
    turn_index: int | None = Field(
        default=None, description="index of an existing turn to re-check as the new one"
    )

    @model_validator(mode="before")
    @classmethod
    def _bounded_turns(cls, data: Any) -> Any:
        """Refuse too many turns before any of them is parsed.

        Raises InputError, not ValueError: a validation error would carry (and the API
        would echo back) the whole oversized input.
        """
        record = data.get("record") if isinstance(data, dict) else None
        turns = record.get("turns") if isinstance(record, dict) else None
        if not isinstance(turns, list):
            return data
        total = len(turns) + (data.get("turn") is not None)
        if total > MAX_TURNS:
            raise InputError(
                f"the submission has {total} turns; at most {MAX_TURNS} are accepted",
                field="record.turns",
            )
        return data

    def submission(self) -> Submission:
        """The :class:`Submission` this request describes (raises InputError for a bad index)."""
        if self.turn is not None:
            return Submission.append(self.record, self.turn)
        return Submission(self.record, self.turn_index)

    def size(self) -> int:
        """The request's size in characters: every text, id, role and field name, plus a
        fixed :data:`TURN_COST` per turn for its structure."""
        turns = [*self.record.turns, *([self.turn] if self.turn else [])]
        fields = sum(len(name) + len(value) for name, value in self.record.fields.items())
        texts = sum(len(t.role) + len(t.text) + TURN_COST for t in turns)
        return len(self.record.id) + fields + texts


class FeedbackRequest(BaseModel):
    """An annotator's response to a flagged result."""

    result_id: Text
    action: Literal["accepted", "dismissed"]
    reason: Text = ""
    fixed_text: Text | None = None
