"""A run's side of the call journal: each answered call of an unfinished pair is kept.

The run gives each pair a :class:`PairCalls` (the pair's :class:`~docket.llm.cache.Recall`,
put in :data:`docket.llm.cache.pair_calls` while the pair is judged), so every call the
pair's models answer is noted there. :class:`CallJournal` writes the calls of pairs still
in flight in the :class:`~docket.runner.batches.Writer`'s transactions (every half second,
and when the run stops: a cap, Ctrl-C, a model failure) and drops them in the
transaction that saves their pair. A resume reads them back for the pairs it claims, so a
call paid for is not paid again, on any worker and whatever the response cache setting.
A pair finished between two writes costs no journal write at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy.orm import Session

from docket.llm.types import Completion, RequestKey
from docket.store.journal import Call, add_calls, calls_of, drop_calls

Key = tuple[str, str]
Kept = dict[Key, dict[str, Completion]]
"""Answered calls kept for pairs to replay: by pair, then by request key."""


@dataclass
class PairCalls:
    """One pair's answered calls: those kept before (replayed) and those not yet written."""

    kept: dict[str, Completion] = field(default_factory=dict)
    new: list[tuple[str | RequestKey, str, Completion]] = field(default_factory=list)
    judged: bool = False
    """The pair's judgment is made (its save is queued): its calls need no keeping."""

    def get(self, key: str | RequestKey) -> Completion | None:
        """The kept answer to the request of ``key`` (from an earlier run), or None."""
        # Most pairs keep nothing: their calls' keys are never hashed for a lookup.
        return self.kept.get(str(key)) if self.kept else None

    def put(self, key: str | RequestKey, model: str, completion: Completion) -> None:
        """Note an answered call, to be written if the pair is still unfinished."""
        self.new.append((key, model, completion))


@dataclass
class CallJournal:
    """The call journal of one job in one run."""

    job: str
    open: dict[Key, PairCalls] = field(default_factory=dict)
    kept: Kept = field(default_factory=dict)
    stored: set[Key] = field(default_factory=set)
    settled: list[Key] = field(default_factory=list)

    def read(self, session: Session, keys: list[Key]) -> None:
        """Load the kept calls of ``keys`` (just claimed) for their pairs to replay."""
        for key, calls in calls_of(session, self.job, keys).items():
            kept = {k: Completion.from_json(data) for k, data in calls.items()}
            self.kept[key] = {**self.kept.get(key, {}), **kept}
            self.stored.add(key)

    def begin(self, key: Key) -> PairCalls:
        """The journal of the pair ``key``, which starts now."""
        calls = PairCalls(self.kept.pop(key, {}))
        self.open[key] = calls
        return calls

    def settle(self, key: Key) -> None:
        """The pair ``key`` is saved (or failed) in the next write: its calls go."""
        self.open.pop(key, None)
        if key in self.stored:
            self.settled.append(key)

    @property
    def pending(self) -> bool:
        """Whether a write has something to do."""
        return bool(self.settled) or any(
            calls.new and not calls.judged for calls in self.open.values()
        )

    def write(self, session: Session) -> None:
        """Keep the new calls of the pairs in flight; drop those of the settled pairs."""
        rows: list[Call] = []
        for key, calls in self.open.items():
            if calls.judged:
                continue  # saved in this write or the next: a few milliseconds from now
            rows += [(key, str(k), model, done.to_json()) for k, model, done in calls.new]
            if calls.new:
                self.stored.add(key)
            calls.new = []
        add_calls(session, self.job, rows)
        drop_calls(session, self.job, self.settled)
        self.stored.difference_update(self.settled)
        self.settled = []
