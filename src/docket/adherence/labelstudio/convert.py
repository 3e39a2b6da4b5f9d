"""From a Label Studio task (and result) to a submission, and from a verdict to predictions.

A task's ``data`` gives the dialogue so far and data fields; a result (the annotator's
current one in interactive mode, or a submitted annotation) gives the TextArea texts: the
new turn and control fields. A verdict goes back as Label Studio predictions, one
read-only TextArea region per flagged rule, or in the shape asked for in Label Studio
issue #8065 (``global-errors`` and ``per-result-errors`` keyed by region id).
"""

from __future__ import annotations

from typing import Any

from docket.adherence.labelstudio.mapping import Mapping
from docket.adherence.record import Record, Turn
from docket.adherence.rules import RuleSet
from docket.adherence.verify.requests import VerifyRequest
from docket.adherence.verify.verdict import FLAG_STATUSES, RuleResult, Verdict
from docket.errors import InputError

Result = list[dict[str, Any]]
"""A Label Studio result: a list of regions (``from_name``, ``type``, ``value``...)."""


def texts_by_control(result: Result | None) -> dict[str, tuple[str, str]]:
    """TextArea text per control name: ``{name: (region id, text)}`` (lines joined)."""
    found: dict[str, tuple[str, str]] = {}
    for region in result or []:
        if not isinstance(region, dict) or region.get("type") != "textarea":
            continue
        value = region.get("value") or {}
        lines = value.get("text") if isinstance(value, dict) else None
        if isinstance(lines, str):
            lines = [lines]
        if not isinstance(lines, list):
            continue
        name = str(region.get("from_name", ""))
        text = "\n".join(str(line) for line in lines)
        if name in found:  # several regions of one TextArea: one text, first region's id
            text = f"{found[name][1]}\n{text}"
        found[name] = (found.get(name, (str(region.get("id", "")), ""))[0], text)
    return found


def _turns(data: dict[str, Any], mapping: Mapping, where: str) -> list[Turn]:
    source = mapping.dialogue
    if source is None or source.data not in data:
        return []
    messages = data[source.data]
    if not isinstance(messages, list):
        raise InputError(f"{where}: data field '{source.data}' is not a list of messages")
    turns = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or source.text_key not in message:
            raise InputError(
                f"{where}: message {index} of '{source.data}' has no '{source.text_key}'"
            )
        speaker = str(message.get(source.role_key, ""))
        turns.append(
            Turn(role=source.roles.get(speaker, speaker), text=str(message[source.text_key]))
        )
    return turns


def request_of(
    task: dict[str, Any], result: Result | None, mapping: Mapping, record_id: str
) -> VerifyRequest:
    """The submission a task (and the annotator's result, if any) makes under ``mapping``.

    With an answer in the mapped turn TextArea, the answer is the new turn (live checking);
    otherwise the whole record is checked. Fields that are not there are left out (a rule
    on them is ``not_yet`` in live checking).

    Raises:
        InputError: the task has no ``data`` object, or its dialogue is not a list of messages.
    """
    where = f"task {task.get('id', '?')}"
    data = task.get("data")
    if not isinstance(data, dict):
        raise InputError(f"{where} has no 'data' object", field="tasks")
    texts = texts_by_control(result)
    fields: dict[str, str] = {}
    for name, source in mapping.fields.items():
        if source.data is not None and source.data in data:
            fields[name] = _as_text(data[source.data])
        elif source.control is not None and source.control in texts:
            fields[name] = texts[source.control][1]
    record = Record(id=record_id, turns=_turns(data, mapping, where), fields=fields)
    answer = texts.get(mapping.turn.control) if mapping.turn else None
    turn = Turn(role=mapping.turn.role, text=answer[1]) if mapping.turn and answer else None
    return VerifyRequest(record=record, turn=turn)


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def message(rules: RuleSet, result: RuleResult) -> str:
    """What the annotator reads about one flagged rule: the rule, why, and how to fix it."""
    text = next((r.text for r in rules.rules if r.id == result.rule_id), "")
    head = f"[{result.rule_id}] {text}"
    if result.status == "needs_review":
        return f"{head}\nNot checked: {result.explanation}\nCheck this rule by hand."
    lines = [head, f"Why: {result.explanation}" if result.explanation else "Why: it is not met"]
    if result.span is not None and result.span.text:
        lines.append(f"Where: “{result.span.text}”")
    if result.fix:
        lines.append(f"Fix: {result.fix}")
    return "\n".join(lines)


def score(verdict: Verdict) -> float:
    """The share of decided-or-undecided rules that passed (``not_yet`` left out); 1.0 if none."""
    counted = [r for r in verdict.results if r.status != "not_yet"]
    return sum(r.status == "pass" for r in counted) / len(counted) if counted else 1.0


def flagged(verdict: Verdict) -> list[RuleResult]:
    """The results an annotator is shown: failures and undecided rules, in rule order."""
    return [r for r in verdict.results if r.status in FLAG_STATUSES]


def prediction(
    verdict: Verdict, rules: RuleSet, mapping: Mapping, to_name: str, model_version: str
) -> dict[str, Any]:
    """One Label Studio prediction: the feedback TextArea, one text per flagged rule, and a score.

    Label Studio keeps one region per (non per-region) TextArea and shows its texts one
    under the other, so every flagged rule is one text of one read-only region.
    """
    texts = [message(rules, result) for result in flagged(verdict)]
    region = {
        "id": "docket",
        "from_name": mapping.feedback,
        "to_name": to_name,
        "type": "textarea",
        "value": {"text": texts},
        "readonly": True,
        "origin": "prediction",
    }
    return {
        "result": [region] if texts else [],
        "score": score(verdict),
        "model_version": model_version,
    }


def annotation_errors(
    verdict: Verdict, rules: RuleSet, mapping: Mapping, result: Result | None
) -> dict[str, Any]:
    """The verdict in the shape of Label Studio issue #8065.

    A flag about the new turn, or about a field read from a TextArea, is listed under that
    region's id in ``per-result-errors``; every other flag is a ``global-errors`` line.
    """
    texts = texts_by_control(result)
    turn_region = texts.get(mapping.turn.control, ("", ""))[0] if mapping.turn else ""
    per_result: dict[str, list[str]] = {}
    global_errors: list[str] = []
    rule_by_id = {rule.id: rule for rule in rules.rules}
    for found in flagged(verdict):
        rule = rule_by_id.get(found.rule_id)
        region = ""
        if rule is not None and rule.scope.kind == "field" and rule.scope.field:
            source = mapping.fields.get(rule.scope.field)
            control = source.control if source is not None else None
            region = texts.get(control or "", ("", ""))[0]
        elif verdict.turn is not None and found.turn == verdict.turn:
            region = turn_region
        if region:
            per_result.setdefault(region, []).append(message(rules, found))
        else:
            global_errors.append(message(rules, found))
    return {"global-errors": global_errors, "per-result-errors": per_result}
