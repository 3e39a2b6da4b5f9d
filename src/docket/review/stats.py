"""Review statistics: progress, time per decision, agreement, and accuracy vs gold.

Agreement uses the latest decision of each reviewer on each task. Undefined values
(too few tasks, no variation) are None, never NaN, so the result is valid JSON.
Task counts come from one GROUP BY; only tasks with decisions are read in full (their
payloads hold the agents' labels and the gold label), so the cost follows the number
of decisions, not of tasks.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter, defaultdict
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from docket.agreement import balanced_accuracy, fleiss_kappa, krippendorff_alpha_counts
from docket.review.models import TASK_CLOSED, TASK_DONE, TASK_OPEN, Decision, Reviewer, ReviewTask


def _num(value: float | None, digits: int = 4) -> float | None:
    if value is None or math.isnan(value):
        return None
    return round(float(value), digits)


def _task_counts(counts: Counter[str]) -> dict[str, int]:
    return {
        "total": sum(counts.values()),
        TASK_OPEN: counts[TASK_OPEN],
        TASK_DONE: counts[TASK_DONE],
        TASK_CLOSED: counts[TASK_CLOSED],
    }


def _where(query, job: str | None, kind: str | None):  # type: ignore[no-untyped-def]
    if job:
        query = query.where(ReviewTask.job == job)
    return query.where(ReviewTask.kind == kind) if kind else query


def job_counts(
    session: Session, job: str | None = None, kind: str | None = None
) -> dict[str, Counter[str]]:
    """Tasks per status for each job, counted in SQL."""
    query = select(ReviewTask.job, ReviewTask.status, func.count()).group_by(
        ReviewTask.job, ReviewTask.status
    )
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for name, status, n in session.execute(_where(query, job, kind)):
        counts[name][status] = n
    return counts


def by_job(counts: dict[str, Counter[str]]) -> list[dict[str, Any]]:
    """The per-job rows of :func:`review_stats` (also the admin page's job list)."""
    return [{"job": j, **_task_counts(c)} for j, c in sorted(counts.items())]


def _decided(
    session: Session, job: str | None, kind: str | None
) -> tuple[list[Decision], dict[int, dict[int, Decision]], list[ReviewTask]]:
    """All decisions in id order, the latest per (task, reviewer), and the decided tasks."""
    query = select(Decision).join(ReviewTask, ReviewTask.id == Decision.task_id)
    rows = list(session.scalars(_where(query, job, kind).order_by(Decision.id)))
    latest: dict[int, dict[int, Decision]] = {}
    for decision in rows:
        latest.setdefault(decision.task_id, {})[decision.reviewer_id] = decision
    ids, tasks = sorted(latest), []
    for start in range(0, len(ids), 500):  # stay under SQL parameter limits
        chunk = select(ReviewTask).where(ReviewTask.id.in_(ids[start : start + 500]))
        tasks.extend(session.scalars(chunk.order_by(ReviewTask.id)))
    return rows, latest, tasks


def _agreement(units: list[list[int]]) -> dict[str, Any]:
    """Fleiss' kappa and Krippendorff's alpha over units with two or more labels."""
    usable = [u for u in units if len(u) >= 2]
    counts = [[u.count(0), u.count(1)] for u in usable]
    return {
        "n_tasks": len(usable),
        "n_labels": sum(len(u) for u in usable),
        "fleiss_kappa": _num(fleiss_kappa(counts)) if usable else None,
        "krippendorff_alpha": _num(krippendorff_alpha_counts(counts)) if usable else None,
    }


def _accuracy(pairs: list[tuple[int, int]]) -> dict[str, Any]:
    """Accuracy and balanced accuracy (:func:`docket.agreement.balanced_accuracy`) of
    (decided, gold) pairs."""
    if not pairs:
        return {"n": 0, "accuracy": None, "balanced_accuracy": None}
    decided, gold = [d for d, _ in pairs], [g for _, g in pairs]
    return {
        "n": len(pairs),
        "accuracy": _num(sum(d == g for d, g in pairs) / len(pairs)),
        "balanced_accuracy": _num(balanced_accuracy(gold, decided)),
    }


def _last_round(payload: dict) -> dict[str, int | None]:
    transcript = payload.get("transcript") or []
    if not transcript:
        return {}
    last = max(turn["round"] for turn in transcript)
    return {t["agent"]: t.get("label") for t in transcript if t["round"] == last}


def _with_agents(tasks: list[ReviewTask], latest: dict[int, dict[int, Decision]]) -> list[dict]:
    """How often reviewers' labels match each agent's last-round label."""
    hits: dict[str, list[bool]] = defaultdict(list)
    for task in tasks:
        agents = _last_round(task.payload) if task.kind == "relevance" else {}
        for decision in latest.get(task.id, {}).values():
            for agent, label in agents.items():
                if label is not None:
                    hits[agent].append(decision.label == label)
    return [
        {"agent": a, "n": len(v), "agreement": _num(sum(v) / len(v))}
        for a, v in sorted(hits.items())
    ]


def _times(decisions: list[Decision]) -> dict[str, Any]:
    seconds = [d.seconds for d in decisions if d.seconds is not None]
    return {
        "n": len(seconds),
        "mean_seconds": _num(statistics.fmean(seconds), 2) if seconds else None,
        "median_seconds": _num(statistics.median(seconds), 2) if seconds else None,
    }


def _per_reviewer(decisions: list[Decision], names: dict[int, str]) -> list[dict[str, Any]]:
    grouped: dict[int, list[Decision]] = defaultdict(list)
    for decision in decisions:
        grouped[decision.reviewer_id].append(decision)
    return [
        {"reviewer": names.get(rid, "?"), "decisions": len(ds), **_times(ds)}
        for rid, ds in sorted(grouped.items(), key=lambda kv: names.get(kv[0], ""))
    ]


def review_stats(session: Session, job: str | None = None, kind: str | None = None) -> dict:
    """Statistics over the review tasks of one job (or all), as JSON data.

    Returns:
        ``tasks`` (total/open/done/closed), ``by_job``, ``decisions`` (rows and
        corrections), ``time`` (seconds per decision), ``per_reviewer``, ``agreement``
        between reviewers (all, ``with_debate`` and ``blind``), ``agents``
        (agreement with each agent's last-round label), and ``gold`` (accuracy and
        balanced accuracy of reviewers with and without the debate, where the
        payload holds a gold label).
    """
    rows, latest, tasks = _decided(session, job, kind)
    ids = [t.id for t in tasks]
    names = dict(session.execute(select(Reviewer.id, Reviewer.name)).all())
    finals = [d for t in tasks for d in latest.get(t.id, {}).values()]
    counts = job_counts(session, job, kind)
    return {
        "filters": {"job": job or "", "kind": kind or ""},
        "tasks": _task_counts(sum(counts.values(), Counter())),
        "by_job": by_job(counts),
        "decisions": {"total": len(rows), "corrections": len(rows) - len(finals)},
        "time": _times(rows),
        "per_reviewer": _per_reviewer(rows, names),
        "agreement": {
            "all": _agreement([[d.label for d in latest.get(i, {}).values()] for i in ids]),
            "with_debate": _agreement(_labels(ids, latest, blind=False)),
            "blind": _agreement(_labels(ids, latest, blind=True)),
        },
        "agents": _with_agents(tasks, latest),
        "gold": _gold(tasks, latest),
    }


def _labels(ids: list[int], latest: dict[int, dict[int, Decision]], *, blind: bool) -> list:
    return [[d.label for d in latest.get(i, {}).values() if d.blind == blind] for i in ids]


def _gold(tasks: list[ReviewTask], latest: dict[int, dict[int, Decision]]) -> dict[str, Any]:
    pairs: dict[bool, list[tuple[int, int]]] = {False: [], True: []}
    for task in tasks:
        gold = task.payload.get("gold")
        if gold not in (0, 1):
            continue
        for decision in latest.get(task.id, {}).values():
            pairs[decision.blind].append((decision.label, gold))
    return {
        "with_debate": _accuracy(pairs[False]),
        "blind": _accuracy(pairs[True]),
        "all": _accuracy(pairs[False] + pairs[True]),
    }
