"""The facets of a task the queue filters on: qid, docid and the kind of disagreement.

Disagreement kinds, from the stored payload:

- relevance: ``unparsed`` (some turn could not be parsed), ``split`` (the agents'
  last-round labels differ), ``agreed`` (they agree; escalated for another reason),
  ``none`` (no transcript, e.g. a single judge);
- adherence: the check's status (``fail``, ``needs_review``...).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from docket.review.models import ReviewTask, TaskFacets

KINDS = ("unparsed", "split", "agreed", "none", "fail", "needs_review")
BACKFILL_BATCH = 2000


def disagreement(kind: str, payload: dict[str, Any]) -> str:
    """The disagreement kind of a payload (see the module docstring)."""
    if kind != "relevance":
        return str(payload.get("result", {}).get("status", "none"))[:40]
    transcript = payload.get("transcript") or []
    if not transcript:
        return "none"
    if any(not turn.get("parsed", True) for turn in transcript):
        return "unparsed"
    last = max(turn["round"] for turn in transcript)
    labels = {turn.get("label") for turn in transcript if turn["round"] == last}
    return "split" if len(labels) > 1 else "agreed"


def facets_of(task_id: int, kind: str, payload: dict[str, Any]) -> TaskFacets:
    """The facets row of a task."""
    if kind == "relevance":
        qid, docid = payload.get("qid", ""), payload.get("docid", "")
        title, subtitle = payload.get("query", ""), docid
    else:
        rule = payload.get("rule", {})
        qid, docid = payload.get("record", {}).get("id", ""), rule.get("id", "")
        title, subtitle = rule.get("text", ""), docid
    return TaskFacets(
        task_id=task_id,
        qid=str(qid)[:200],
        docid=str(docid)[:400],
        disagreement=disagreement(kind, payload),
        title=str(title)[:160],
        subtitle=str(subtitle)[:400],
    )


def backfill(session: Session) -> int:
    """Add the facets of tasks that have none (older stores); return how many."""
    added = 0
    while True:
        missing = (
            select(ReviewTask.id, ReviewTask.kind, ReviewTask.payload)
            .outerjoin(TaskFacets, TaskFacets.task_id == ReviewTask.id)
            .where(TaskFacets.task_id.is_(None))
            .limit(BACKFILL_BATCH)
        )
        rows = session.execute(missing).all()
        session.add_all(facets_of(tid, kind, payload) for tid, kind, payload in rows)
        session.flush()
        added += len(rows)
        if len(rows) < BACKFILL_BATCH:
            return added
