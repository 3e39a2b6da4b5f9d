"""A judged pair's transcript, round by round, as the terminal and ``--json`` show it."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.text import Text

from docket.relevance.evidence import split_sentences
from docket.relevance.types import Judgment, Pair

LABELS = {1: "relevant", 0: "irrelevant", None: "unparsed"}
OUTCOMES = {
    "consensus": "the agents agreed",
    "judge": "the judge decided",
    "adjudicator": "the LLM adjudicator decided",
    "human": "a reviewer decided",
    "escalated": "no agreement: waits for a human reviewer",
}


def outcome_line(judgment: Judgment) -> str:
    """One line: the final label and who decided it, in which round."""
    how = OUTCOMES.get(judgment.decided_by, judgment.decided_by)
    p_yes = judgment.config.get("p_yes")
    if judgment.decided_by == "escalated" and p_yes is not None:  # one judgment (LARA)
        return f"one judgment, low confidence (P(yes) = {p_yes:.3f}): waits for a human reviewer"
    if judgment.decided_by == "escalated":
        return f"after {judgment.rounds} round(s) {how}"
    return f"{LABELS[judgment.label]}: {how} in round {judgment.rounds}"


def _turn_text(turn: dict[str, Any]) -> Text:
    stance = f", stance {turn['stance']}" if turn.get("stance") else ""
    cited = ", ".join(turn.get("evidence") or []) or "none"
    invalid = turn.get("invalid_evidence") or []
    if invalid:
        cited += " (cited but not in the chunk: " + ", ".join(f"S{i}" for i in invalid) + ")"
    head = f"  round {turn.get('round', 1)}, {turn.get('agent', 'judge')}{stance}: "
    text = Text(head)
    text.append(LABELS.get(turn.get("label")), style="bold")
    text.append(f"; cites {cited}\n")
    reasoning = turn.get("reasoning") or ""
    if not turn.get("parsed", True):
        raw = (turn.get("raw") or [""])[-1]
        reasoning = f"(reply could not be read: {turn.get('error') or ''}) {raw[:300]}"
    text.append("    " + (reasoning.strip() or "(no reasoning given)"))
    return text


def transcript_view(pair: Pair, judgment: Judgment) -> Group:
    """The query, the numbered chunk, every turn and the outcome, ready for rich to print.

    Everything is built as Text, never as markup, so brackets in corpus or model text show
    as they are.
    """
    lines: list[Text] = [
        Text(f"{pair.qid} / {pair.docid} ({judgment.method})", style="bold"),
        Text(f"query: {pair.query}"),
    ]
    lines += [Text(f"  [S{i}] {s}") for i, s in enumerate(split_sentences(pair.text), start=1)]
    lines += [_turn_text(turn) for turn in judgment.transcript]
    lines.append(Text(f"outcome: {outcome_line(judgment)}", style="bold"))
    return Group(*lines)


def transcript_json(pair: Pair, judgment: Judgment) -> dict[str, Any]:
    """The same content as plain JSON (raw replies included, usage per turn kept)."""
    return {
        "qid": pair.qid,
        "docid": pair.docid,
        "query": pair.query,
        "sentences": split_sentences(pair.text),
        "method": judgment.method,
        "label": judgment.label,
        "grade": judgment.grade,
        "decided_by": judgment.decided_by,
        "rounds": judgment.rounds,
        "model": judgment.model,
        "prompt_hash": judgment.prompt_hash,
        "transcript": list(judgment.transcript),
    }


def review_hint(db: str, queued: int) -> str:
    """The commands that open the review page for the escalated pairs (plain text)."""
    return (
        f"{queued} pair(s) wait for a human. To review them: "
        f"`docket review add-reviewer NAME --db {db}` (prints a login token), then "
        f"`docket review serve --db {db}`"
    )
