"""Export review tasks as Label Studio task JSON, debate history included.

Export: one Label Studio task per review task. ``data`` holds the query, the chunk as
numbered sentences, the debate as text, and under ``data.docket`` everything needed
to rebuild the task (payload, decision history). Each reviewer's latest decision is an
annotation; each agent's last-round label is a prediction (``model_version`` =
``agent-A``...). Import reads such a file back (or tasks annotated in Label Studio
with :data:`LABEL_CONFIG`): tasks are enqueued (idempotent) and annotations become
decisions by reviewers named after the Label Studio user (see
:mod:`docket.review.labelstudio_import`).
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from docket.review.item import LABELS
from docket.review.models import Decision, Reviewer, ReviewTask
from docket.review.queue import latest_decisions, select_tasks

LABEL_CONFIG = """<View>
  <Header value="$query"/>
  <Text name="text" value="$text"/>
  <Choices name="relevance" toName="text" choice="single" required="true">
    <Choice value="relevant"/>
    <Choice value="irrelevant"/>
  </Choices>
  <Choices name="grade" toName="text" choice="single">
    <Choice value="0"/><Choice value="1"/><Choice value="2"/><Choice value="3"/>
  </Choices>
  <TextArea name="note" toName="text"/>
  <Header value="Debate"/>
  <Text name="debate" value="$debate"/>
</View>
"""


def _choice(name: str, value: str) -> dict[str, Any]:
    return {"from_name": name, "to_name": "text", "type": "choices", "value": {"choices": [value]}}


def _result(kind: str, label: int, grade: int | None, note: str) -> list[dict[str, Any]]:
    result = [_choice("relevance", LABELS[kind][label])]
    if grade is not None:
        result.append(_choice("grade", str(grade)))
    if note:
        result.append(
            {"from_name": "note", "to_name": "text", "type": "textarea", "value": {"text": [note]}}
        )
    return result


def _debate_text(transcript: list[dict[str, Any]]) -> str:
    lines = []
    for turn in transcript:
        label = LABELS["relevance"].get(turn.get("label"), "no label")
        evidence = ", ".join(turn.get("evidence", [])) or "none"
        lines.append(
            f"Round {turn['round']}, agent {turn['agent']} (arguing {turn['stance']}): "
            f"{label}; evidence {evidence}\n{turn.get('reasoning', '')}"
        )
    return "\n\n".join(lines)


def _data(task: ReviewTask, history: list[dict[str, Any]]) -> dict[str, Any]:
    payload = task.payload
    docket = {
        "job": task.job,
        "kind": task.kind,
        "item_key": task.item_key,
        "required_reviews": task.required_reviews,
        "blind": task.blind,
        "status": task.status,
        "payload": payload,
        "decisions": history,
    }
    if task.kind == "relevance":
        sentences = payload["sentences"]
        text = "\n".join(f"S{i + 1}. {s}" for i, s in enumerate(sentences))
        query, debate = payload["query"], _debate_text(payload.get("transcript", []))
    else:
        text = json.dumps(payload.get("record", {}), ensure_ascii=False, indent=1)
        query, debate = payload["rule"]["text"], payload["result"].get("explanation", "")
    return {"query": query, "text": text, "debate": debate, "docket": docket}


def _predictions(task: ReviewTask) -> list[dict[str, Any]]:
    transcript = task.payload.get("transcript", []) if task.kind == "relevance" else []
    if not transcript:
        return []
    last = max(turn["round"] for turn in transcript)
    return [
        {
            "model_version": f"agent-{t['agent']}",
            "result": [_choice("relevance", LABELS["relevance"][t["label"]])],
        }
        for t in transcript
        if t["round"] == last and t.get("label") in (0, 1)
    ]


def export_labelstudio(
    session: Session, job: str | None = None, kind: str | None = None, *, annotators: bool = True
) -> list[dict[str, Any]]:
    """Review tasks as a list of Label Studio tasks (see the module docstring).

    Args:
        session: an open store session.
        job: only this job's tasks (default all).
        kind: only this kind of task (default all).
        annotators: name each annotation's reviewer as ``completed_by: {"email": name}``.
            Label Studio accepts that only for member emails (or with
            ``ALLOW_IMPORT_TASKS_WITH_UNKNOWN_EMAILS``); turn it off otherwise.
    """
    tasks = select_tasks(session, job, kind)
    names = dict(session.execute(select(Reviewer.id, Reviewer.name)).all())
    latest = latest_decisions(session, [t.id for t in tasks])
    rows: dict[int, list[Decision]] = {}
    for decision in session.scalars(select(Decision).order_by(Decision.id)):
        rows.setdefault(decision.task_id, []).append(decision)
    exported = []
    for task in tasks:
        history = [_history(d, names) for d in rows.get(task.id, [])]
        annotations = [
            {
                "result": _result(task.kind, d.label, d.grade, d.note),
                "was_cancelled": False,
                "created_at": d.created_at.isoformat(),
                "lead_time": d.seconds,
                **({"completed_by": {"email": names[d.reviewer_id]}} if annotators else {}),
            }
            for d in latest.get(task.id, {}).values()
        ]
        exported.append(
            {
                "id": task.id,
                "data": _data(task, history),
                "annotations": annotations,
                "predictions": _predictions(task),
            }
        )
    return exported


def _history(decision: Decision, names: dict[int, str]) -> dict[str, Any]:
    return {
        "reviewer": names[decision.reviewer_id],
        "label": decision.label,
        "grade": decision.grade,
        "note": decision.note,
        "blind": decision.blind,
        "seconds": decision.seconds,
        "source": decision.source,
        "created_at": decision.created_at.isoformat(),
    }
