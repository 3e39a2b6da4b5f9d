"""The item page's data: the query, numbered sentences with cited evidence, the debate.

Returned as plain JSON data. Nothing here marks text as safe: the templates escape
every string. In blind mode the debate, the citations and the agents' labels are left
out of the data itself (not merely hidden by CSS), and the gold label never is shown.
"""

from __future__ import annotations

import json
import time
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from docket.review.errors import ForeignTaskError, UnknownTaskError
from docket.review.models import TASK_CLOSED, Decision, Reviewer, ReviewTask
from docket.review.payloads import sentence_index
from docket.review.queue import assigned_ids, decider_ids

LABELS = {
    "relevance": {1: "relevant", 0: "irrelevant"},
    "adherence": {1: "violates the rule", 0: "complies"},
}
KEYS = {"relevance": {1: "r", 0: "i"}, "adherence": {1: "v", 0: "c"}}
STANCES = ("relevant", "irrelevant", "neutral")
_KNOWN = {
    "relevance": {
        *("qid", "query", "docid", "text", "sentences", "method", "transcript", "gold", "p_yes"),
        *("guidance", "instructions"),
    },
    "adherence": {"record", "rule", "result", "gold"},
}


def _decision_data(decision: Decision, names: dict[int, str], kind: str) -> dict[str, Any]:
    return {
        "id": decision.id,
        "reviewer": names.get(decision.reviewer_id, "?"),
        "label": decision.label,
        "label_name": LABELS[kind][decision.label],
        "grade": decision.grade,
        "note": decision.note,
        "blind": decision.blind,
        "seconds": decision.seconds,
        "created_at": decision.created_at.isoformat(),
    }


def _refusal(task: ReviewTask, me: int, assigned: set[int], deciders: set[int]) -> str:
    if task.status == TASK_CLOSED:
        return f"task {task.id} is closed"
    if assigned and me not in assigned:
        return f"task {task.id} is assigned to other reviewers"
    if me not in deciders and len(deciders) >= task.required_reviews:
        return f"task {task.id} already has its {task.required_reviews} required review(s)"
    return ""


def _citations(transcript: list[dict], n: int) -> dict[int, list[dict[str, Any]]]:
    cited: dict[int, list[dict[str, Any]]] = {}
    for turn in transcript:
        for evidence in turn.get("evidence", []):
            index = sentence_index(str(evidence), n)
            mark = {"agent": turn["agent"], "round": turn["round"], "stance": turn["stance"]}
            if index is not None and mark not in cited.setdefault(index, []):
                cited[index].append(mark)
    return cited


def _rounds(transcript: list[dict], n: int) -> list[dict[str, Any]]:
    rounds: dict[int, list[dict[str, Any]]] = {}
    for turn in transcript:
        label = turn.get("label")
        rounds.setdefault(turn["round"], []).append(
            {
                "agent": turn["agent"],
                "stance": turn["stance"],
                "parsed": turn.get("parsed", True),
                "label": label,
                "label_name": LABELS["relevance"].get(label, "no label"),
                "reasoning": turn.get("reasoning", ""),
                "raw": "" if turn.get("parsed", True) else _raw(turn),
                "evidence": cited_ids(turn, n),
            }
        )
    return [{"round": r, "turns": rounds[r]} for r in sorted(rounds)]


def _as_id(value: Any) -> str:
    # The debate engine records invalid ids as numbers (12), payloads may say "S12".
    return f"S{value}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def cited_ids(turn: dict, n: int) -> list[dict[str, Any]]:
    """Every id a turn cited, in order, each marked valid or not (struck through on the page).

    The engine keeps only valid ids in ``evidence`` and the others in
    ``invalid_evidence``; both lists are read, so no citation is lost.
    """
    seen: dict[str, bool] = {}
    for value in [*turn.get("evidence", []), *turn.get("invalid_evidence", [])]:
        evidence_id = _as_id(value)
        seen.setdefault(evidence_id, sentence_index(evidence_id, n) is not None)
    return [{"id": evidence_id, "valid": valid} for evidence_id, valid in seen.items()]


def _raw(turn: dict) -> str:
    """The model's own reply to an unparsed turn, so the reviewer sees what it said."""
    raw = turn.get("raw") or ""
    text = raw[-1] if isinstance(raw, list) and raw else raw
    return str(text)[:4000]


def _last_round_labels(transcript: list[dict]) -> dict[str, int | None]:
    if not transcript:
        return {}
    last = max(turn["round"] for turn in transcript)
    return {t["agent"]: t.get("label") for t in transcript if t["round"] == last}


def _relevance(payload: dict, blind: bool) -> dict[str, Any]:
    sentences = payload["sentences"]
    transcript = [] if blind else payload.get("transcript", [])
    cited = _citations(transcript, len(sentences))
    return {
        "qid": payload["qid"],
        "query": payload["query"],
        "guidance": str(payload.get("guidance") or ""),
        "instructions": str(payload.get("instructions") or ""),
        "docid": payload["docid"],
        "method": payload.get("method", ""),
        "sentences": [
            {
                "id": f"S{i + 1}",
                "text": text,
                "citations": cited.get(i, []),
                "stances": sorted({c["stance"] for c in cited.get(i, [])}),
            }
            for i, text in enumerate(sentences)
        ],
        "rounds": _rounds(transcript, len(sentences)),
        "agents_last_round": _last_round_labels(transcript),
        # One turn is one judgment (LARA, a single judge), not a debate of one agent.
        "single": len(transcript) == 1,
        # The confidence is the judge's opinion: a blind reviewer does not see it either.
        "p_yes": None if blind else payload.get("p_yes"),
    }


def _adherence(payload: dict) -> dict[str, Any]:
    record = payload.get("record", {})
    return {
        "rule": payload["rule"],
        "result": payload["result"],
        "record": [{"key": str(k), "value": _as_text(v)} for k, v in record.items()],
    }


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=1)


def item_view(session: Session, reviewer: Reviewer, task_id: int) -> dict[str, Any]:
    """Everything the item page shows this reviewer about one task.

    Raises:
        UnknownTaskError: no such task.
        ForeignTaskError: the task is assigned to others and the reviewer is no admin.
    """
    task = session.get(ReviewTask, task_id)
    if task is None:
        raise UnknownTaskError(f"there is no review task {task_id}")
    assigned, deciders = assigned_ids(session, task.id), decider_ids(session, task.id)
    mine = reviewer.id in deciders
    if assigned and reviewer.id not in assigned and not mine and not reviewer.is_admin:
        raise ForeignTaskError(f"task {task.id} is assigned to other reviewers")
    blind = bool(task.blind or reviewer.blind)
    refusal = _refusal(task, reviewer.id, assigned, deciders)
    names = dict(session.execute(select(Reviewer.id, Reviewer.name)).all())
    history = session.scalars(
        select(Decision).where(Decision.task_id == task.id).order_by(Decision.id)
    ).all()
    data: dict[str, Any] = {
        "task": {
            "id": task.id,
            "job": task.job,
            "kind": task.kind,
            "item_key": task.item_key,
            "status": task.status,
            "required_reviews": task.required_reviews,
        },
        "blind": blind,
        "can_decide": not refusal,
        "refusal": refusal,
        "labels": [
            {"value": v, "name": LABELS[task.kind][v], "key": KEYS[task.kind][v]} for v in (1, 0)
        ],
        "my_decisions": [
            _decision_data(d, names, task.kind) for d in history if d.reviewer_id == reviewer.id
        ],
        "shown_at": round(time.time(), 3),
        "extra": [
            {"key": k, "value": _as_text(v)}
            for k, v in task.payload.items()
            if k not in _KNOWN[task.kind]
        ],
    }
    # Reviewers never see each other's decisions; an admin sees them once they cannot
    # be influenced any more (decided already, or not a reviewer of this task).
    if reviewer.is_admin and (mine or refusal):
        data["all_decisions"] = [_decision_data(d, names, task.kind) for d in history]
    if task.kind == "relevance":
        data["relevance"] = _relevance(task.payload, blind)
    else:
        data["adherence"] = _adherence(task.payload)
    return data
