"""Flag rates of saved verification runs, per rule and per annotator, and fixes in updates.

Every saved run counts (API, annotator page, batch, Label Studio annotations). A result is
*checked* unless it is ``not_yet`` (a rule later turns can still satisfy is no verdict);
a *flag* is a ``fail`` or ``needs_review``. An *item* is one rule on one record and turn:
it was *fixed in an update* when it was flagged in an earlier run and passes in the
latest run that checked it (an annotator who edited their annotation after the feedback).
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel
from sqlalchemy import select

from docket.adherence.models import VerificationResult, VerificationRun
from docket.adherence.verify.verdict import FLAG_STATUSES
from docket.store.base import Store

NO_ANNOTATOR = "(none)"
"""The annotator shown for runs saved without one (batch runs)."""


class FlagRow(BaseModel):
    """Flag counts for one rule (``tier`` set) or one annotator (``tier`` empty).

    Attributes:
        key: the rule id or the annotator's name.
        tier: the rule's tier ("" for an annotator).
        checked: results that are a verdict (every status but ``not_yet``).
        flags: results that are ``fail`` or ``needs_review``.
        flagged_items: distinct (record, turn, rule) items flagged at least once.
        fixed: flagged items whose latest check passes.
    """

    key: str
    tier: str = ""
    checked: int = 0
    flags: int = 0
    flagged_items: int = 0
    fixed: int = 0

    @property
    def flag_rate(self) -> float | None:
        """Flags per checked result; None when nothing was checked."""
        return self.flags / self.checked if self.checked else None


@dataclass
class _Item:
    annotator: str
    tier: str
    flagged: bool = False
    latest: str = ""


def _rows(store: Store) -> list[tuple[str, int | None, str | None, str, str, str]]:
    query = (
        select(
            VerificationRun.record_id,
            VerificationRun.turn,
            VerificationRun.annotator,
            VerificationResult.rule_id,
            VerificationResult.tier,
            VerificationResult.status,
        )
        .join(VerificationRun, VerificationResult.run_id == VerificationRun.id)
        .where(VerificationResult.status != "not_yet")
        .order_by(VerificationRun.created_at, VerificationRun.id)
    )
    with store.session() as session:
        return [tuple(row) for row in session.execute(query).all()]  # type: ignore[misc]


def flag_stats(store: Store) -> tuple[list[FlagRow], list[FlagRow]]:
    """Flag counts and fixes per rule and per annotator: ``(by_rule, by_annotator)``."""
    by_rule: dict[str, FlagRow] = {}
    by_annotator: dict[str, FlagRow] = {}
    items: dict[tuple[str, int | None, str], _Item] = {}
    for record_id, turn, annotator, rule_id, tier, status in _rows(store):
        who = annotator or NO_ANNOTATOR
        flag = status in FLAG_STATUSES
        for row in (
            by_rule.setdefault(rule_id, FlagRow(key=rule_id, tier=tier)),
            by_annotator.setdefault(who, FlagRow(key=who)),
        ):
            row.checked += 1
            row.flags += flag
        item = items.setdefault((record_id, turn, rule_id), _Item(who, tier))
        item.flagged, item.latest = item.flagged or flag, status
    for (_record, _turn, rule_id), item in items.items():
        if not item.flagged:
            continue
        fixed = item.latest == "pass"
        for row in (by_rule[rule_id], by_annotator[item.annotator]):
            row.flagged_items += 1
            row.fixed += fixed
    rules = sorted(by_rule.values(), key=lambda r: (r.tier, r.key))
    return rules, sorted(by_annotator.values(), key=lambda r: r.key)
