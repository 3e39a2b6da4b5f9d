"""Submissions and the incremental cache of LLM results.

A submission is a record plus the index of the turn just submitted. Rules scoped to single
turns look only at that turn; results are cached by (rule id, rule version, model, prompt
version, hash of what the rule looks at), so unchanged content costs no call.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from docket.adherence.record import Record, Turn
from docket.adherence.rules import Rule
from docket.adherence.verify.verdict import RuleResult, new_result_id
from docket.errors import InputError


@dataclass(frozen=True)
class Submission:
    """A record and the index of the turn just submitted (None: check the whole record)."""

    record: Record
    new_turn: int | None = None

    def __post_init__(self) -> None:
        if self.new_turn is not None and not 0 <= self.new_turn < len(self.record.turns):
            raise InputError(
                f"turn {self.new_turn} is not a turn of record '{self.record.id}'", field="turn"
            )

    @classmethod
    def append(cls, record: Record, turn: Turn) -> Submission:
        """The record so far plus ``turn`` as the new turn."""
        grown = record.model_copy(update={"turns": [*record.turns, turn]})
        return cls(grown, len(grown.turns) - 1)


class ResultCache:
    """A small LRU of decided (pass/fail) LLM results; safe across threads."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[tuple[str, ...], RuleResult] = OrderedDict()
        self._lock = threading.Lock()  # read from the verifier's worker threads

    def get(self, key: tuple[str, ...]) -> RuleResult | None:
        """A copy of the cached result with a fresh id, marked cached; or None."""
        with self._lock:
            found = self._items.get(key)
            if found is None:
                return None
            self._items.move_to_end(key)
        return found.model_copy(update={"id": new_result_id(), "cached": True})

    def put(self, key: tuple[str, ...], result: RuleResult) -> None:
        """Keep ``result`` only when decided (undecided and not-yet results are retried)."""
        if result.status not in ("pass", "fail") or self.size <= 0:
            return
        with self._lock:
            self._items[key] = result
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)


def view_hash(rule: Rule, submission: Submission) -> str:
    """Hash of what ``rule`` looks at in ``submission`` (the incremental cache key)."""
    record, scope = submission.record, rule.scope
    if scope.per_turn and submission.new_turn is not None:
        turn = record.turns[submission.new_turn]
        view: Any = ["turn", submission.new_turn, turn.role, turn.text]
    elif scope.kind == "field":
        view = ["field", scope.field, record.fields.get(scope.field or "")]
    elif scope.kind == "record":
        view = ["record", [t.model_dump() for t in record.turns], record.fields]
    else:
        view = [
            "turns",
            [[t.turn, record.turns[t.turn].role, t.text] for t in scope.targets(record)],
        ]
    return hashlib.sha256(json.dumps(view, ensure_ascii=False).encode()).hexdigest()
