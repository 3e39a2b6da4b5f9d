"""Import Label Studio task JSON into the review queue (see :mod:`docket.review.labelstudio`).

The whole file is validated before anything is written; re-importing the same file
adds nothing.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from docket.errors import InputError, ReviewError
from docket.reading import loads_json, read_text
from docket.review.auth import NAME, add_reviewer
from docket.review.item import LABELS
from docket.review.models import Decision, Reviewer, ReviewTask
from docket.review.payloads import PayloadError, check_payload
from docket.review.queue import close_task, enqueue, latest_decisions, record_decision


def _fail(path: str, where: str, message: str) -> InputError:
    return InputError(message, path=path, field=where, hint="see docs/review.md, Label Studio")


def _pick(result: list[Any], name: str) -> list[str]:
    for region in result:
        if isinstance(region, dict) and region.get("from_name") == name:
            value = region.get("value") or {}
            return [str(v) for v in value.get("choices") or value.get("text") or []]
    return []


def _annotation(path: str, where: str, kind: str, raw: Any) -> dict[str, Any] | None:
    """A decision read from one annotation, or None for a cancelled one."""
    if not isinstance(raw, dict) or not isinstance(raw.get("result", []), list):
        raise _fail(path, where, "an annotation must be an object with a result list")
    if raw.get("was_cancelled"):
        return None
    names = {name: value for value, name in LABELS[kind].items()}
    chosen = _pick(raw.get("result", []), "relevance")
    if len(chosen) != 1 or chosen[0] not in names:
        raise _fail(path, f"{where}.result", f"expected one 'relevance' choice of {sorted(names)}")
    grade = _pick(raw["result"], "grade")
    if grade and grade[0] not in ("0", "1", "2", "3"):
        raise _fail(path, f"{where}.result", "the grade must be 0, 1, 2 or 3")
    seconds = raw.get("lead_time")
    return {
        "reviewer": _annotator(path, where, raw.get("completed_by")),
        "label": names[chosen[0]],
        "grade": int(grade[0]) if grade else None,
        "note": "\n".join(_pick(raw["result"], "note")),
        "seconds": float(seconds) if isinstance(seconds, int | float) else None,
    }


def _annotator(path: str, where: str, completed_by: Any) -> str | None:
    if isinstance(completed_by, dict):
        completed_by = completed_by.get("email") or completed_by.get("id")
    if completed_by is None:
        return None
    name = f"ls-user-{completed_by}" if isinstance(completed_by, int) else str(completed_by)
    if not NAME.match(name):
        raise _fail(path, f"{where}.completed_by", f"cannot use {name!r} as a reviewer name")
    return name


def _parse_task(path: str, index: int, raw: Any, job: str | None) -> dict[str, Any]:
    """Validate one Label Studio task into what import needs."""
    where = f"tasks[{index}]"
    data = raw.get("data") if isinstance(raw, dict) else None
    if not isinstance(data, dict):
        raise _fail(path, where, "a task must be an object with a 'data' object")
    docket = data.get("docket") if isinstance(data.get("docket"), dict) else {}
    kind = docket.get("kind", "relevance")
    if docket.get("payload") is not None:
        payload, prefix = docket["payload"], f"{where}.data.docket.payload"
    else:
        payload = {k: data.get(k) for k in ("qid", "query", "docid", "text")}
        prefix = f"{where}.data"
    try:
        payload = check_payload(kind, payload)
    except PayloadError as exc:
        raise _fail(path, f"{prefix}.{exc.field}", exc.message) from exc
    task_job = docket.get("job") or job
    if not task_job:
        raise _fail(path, f"{where}.data.docket.job", "no job; pass --job for plain tasks")
    annotations = [
        _annotation(path, f"{where}.annotations[{i}]", kind, a)
        for i, a in enumerate(raw.get("annotations") or [])
    ]
    return {
        "job": task_job,
        "kind": kind,
        "item_key": docket.get("item_key") or f"{payload.get('qid')}/{payload.get('docid')}",
        "payload": payload,
        "required_reviews": int(docket.get("required_reviews") or 1),
        "blind": bool(docket.get("blind", False)),
        "closed": docket.get("status") == "closed",
        "history": [h for h in docket.get("decisions") or [] if isinstance(h, dict)],
        "annotations": [a for a in annotations if a is not None],
    }


def read_labelstudio(path: str | Path, job: str | None = None) -> list[dict[str, Any]]:
    """Read and validate a Label Studio JSON file (a list of tasks); write nothing.

    Raises:
        InputError: unreadable JSON or a malformed task (named by its index and field).
    """
    raw = loads_json(read_text(path), path)
    if not isinstance(raw, list):
        raise _fail(str(path), "tasks", "expected a JSON list of tasks")
    return [_parse_task(str(path), i, task, job) for i, task in enumerate(raw)]


def _ensure_reviewer(session: Session, name: str) -> Reviewer:
    found = session.scalars(select(Reviewer).where(Reviewer.name == name)).first()
    # Imported annotators get a token nobody knows; `docket review reset-token` lets them in.
    return found if found is not None else add_reviewer(session, name)[0]


def _replay(session: Session, path: str, task: ReviewTask, history: list[dict]) -> int:
    for i, entry in enumerate(history):
        try:
            record_decision(
                session,
                task.id,
                _ensure_reviewer(session, str(entry.get("reviewer"))),
                entry.get("label"),
                entry.get("grade"),
                str(entry.get("note") or ""),
                blind=bool(entry.get("blind")),
                seconds=entry.get("seconds"),
                source=str(entry.get("source") or "labelstudio"),
                created_at=_when(entry.get("created_at")),
            )
        except (InputError, ReviewError) as exc:
            raise _fail(path, f"{task.item_key}: data.docket.decisions[{i}]", exc.message) from exc
    return len(history)


def _when(text: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(text)) if text else None
    except ValueError:
        return None


def import_labelstudio(
    session: Session, path: str | Path, *, job: str | None = None, reviewer: str = "labelstudio"
) -> dict[str, Any]:
    """Import a Label Studio JSON file: enqueue its tasks and record its annotations.

    Tasks new to this store also get their docket decision history replayed. An
    annotation equal to its reviewer's latest decision is skipped, so importing the
    same file twice changes nothing. Annotations without ``completed_by`` are
    recorded for ``reviewer``. A refused decision (task complete or closed) is
    reported, not fatal.

    Returns:
        Counts: ``tasks_new``, ``tasks_existing``, ``history``, ``decisions``,
        ``unchanged``, and ``refused`` (messages).

    Raises:
        InputError: the file is malformed (nothing is written).
    """
    parsed = read_labelstudio(path, job)
    report: dict[str, Any] = dict.fromkeys(
        ("tasks_new", "tasks_existing", "history", "decisions", "unchanged"), 0
    )
    report["refused"] = []
    for item in parsed:
        new = _existing(session, item) is None
        task = enqueue(
            session,
            job=item["job"],
            kind=item["kind"],
            item_key=item["item_key"],
            payload=item["payload"],
            required_reviews=item["required_reviews"],
            blind=item["blind"],
        )
        report["tasks_new" if new else "tasks_existing"] += 1
        if new:
            report["history"] += _replay(session, str(path), task, item["history"])
        for annotation in item["annotations"]:
            _import_annotation(session, task, annotation, reviewer, report)
        if new and item["closed"]:
            close_task(session, task.id)
    return report


def _existing(session: Session, item: dict[str, Any]) -> ReviewTask | None:
    query = select(ReviewTask).where(
        ReviewTask.job == item["job"],
        ReviewTask.kind == item["kind"],
        ReviewTask.item_key == item["item_key"],
    )
    return session.scalars(query).first()


def _import_annotation(
    session: Session, task: ReviewTask, annotation: dict[str, Any], default: str, report: dict
) -> None:
    person = _ensure_reviewer(session, annotation["reviewer"] or default)
    wanted = (annotation["label"], annotation["grade"], annotation["note"])
    if annotation["reviewer"] is None:
        # No annotator named: skip it if it repeats any decision already on the task
        # (our own export coming back), since we cannot tell whose it was.
        history = session.scalars(select(Decision).where(Decision.task_id == task.id))
        same = any((d.label, d.grade, d.note) == wanted for d in history)
    else:
        latest = latest_decisions(session, [task.id]).get(task.id, {}).get(person.id)
        same = latest is not None and (latest.label, latest.grade, latest.note) == wanted
    if same:
        report["unchanged"] += 1
        return
    try:
        record_decision(
            session,
            task.id,
            person,
            annotation["label"],
            annotation["grade"],
            annotation["note"],
            seconds=annotation["seconds"],
            source="labelstudio",
        )
        report["decisions"] += 1
    except ReviewError as exc:
        report["refused"].append(f"{task.job} {task.item_key} ({person.name}): {exc.message}")
